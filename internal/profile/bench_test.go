package profile_test

import (
	"os"
	"testing"
	"time"

	"github.com/higmem/higmem/eval/locomo"
	"github.com/higmem/higmem/internal/profile"
	"github.com/higmem/higmem/internal/synth"
)

// BenchmarkDerive measures a full derivation (what the first profile read
// of a space costs; later reads hit the cache) per turn: on 1,000 synthetic
// turns, and on the first LoCoMo conversation when HIGMEM_LOCOMO_DATA names
// the file:
//
//	HIGMEM_LOCOMO_DATA=../shared/data/locomo_dev.json go test -run - -bench Derive ./internal/profile
func BenchmarkDerive(b *testing.B) {
	b.Run("synth-1000", func(b *testing.B) {
		conv := synth.Generate(synth.Options{Turns: 1000, Seed: 1})
		ts := make([]profile.Turn, len(conv.Turns))
		for i, t := range conv.Turns {
			at, _ := time.Parse(time.RFC3339, t.Time)
			ts[i] = profile.Turn{ID: t.ID, Seq: int64(i), Speaker: t.Speaker, Text: t.Text, OccurredAt: at}
		}
		benchDerive(b, ts)
	})
	path := os.Getenv("HIGMEM_LOCOMO_DATA")
	if path == "" {
		return
	}
	b.Run("locomo-conv-26", func(b *testing.B) {
		ss, err := locomo.Load(path)
		if err != nil {
			b.Fatal(err)
		}
		var ts []profile.Turn
		for _, sess := range ss[0].Sessions {
			at, _ := sess.Time()
			for _, t := range sess.Turns {
				ts = append(ts, profile.Turn{ID: t.DiaID, Seq: int64(t.Seq), Speaker: t.Speaker, Text: t.Text, OccurredAt: at, RecordedAt: at})
			}
		}
		benchDerive(b, ts)
	})
}

func benchDerive(b *testing.B, ts []profile.Turn) {
	for b.Loop() {
		profile.Derive(ts)
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N)/float64(len(ts)), "ms/turn")
}
