package profile

import (
	"fmt"
	"os"
	"testing"

	"github.com/higmem/higmem/eval/locomo"
)

func TestScratchLoCoMo(t *testing.T) {
	for _, f := range []string{"/work/shared/data/locomo_dev.json", "/work/shared/data/friendsqa_dev.json"} {
		ss, err := locomo.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range ss {
			var ts []Turn
			for _, sess := range s.Sessions {
				tm, _ := sess.Time()
				for _, x := range sess.Turns {
					ts = append(ts, Turn{ID: x.DiaID, Seq: int64(x.Seq), Speaker: x.Speaker, Text: x.Text, OccurredAt: tm, RecordedAt: tm})
				}
			}
			for _, p := range Derive(ts) {
				for _, a := range p.Attributes {
					for _, v := range a.Values {
						fmt.Fprintf(os.Stdout, "%s\t%s\t%s\t%s\t%v\t%s\n", s.ID, p.Entity, a.Label(), v.Value, v.Evidence, v.ClosedBy)
					}
				}
			}
		}
	}
}
