package higmem_test

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/eval/locomo"
	"github.com/higmem/higmem/internal/synth"
	"github.com/higmem/higmem/llm/llmtest"
)

// TestProfileCost measures what profile maintenance costs at ingest:
// default mode with the scripted model, with profile facts asked in the
// build call and without (Ablations.NoProfiles), and offline mode (the
// rules' derivation on the first read). It gates nothing and is skipped
// unless HIGMEM_PROFILE_COST=1; HIGMEM_LOCOMO_DATA names a LoCoMo-format
// file to use its conversations (else synthetic ones of
// HIGMEM_PROFILE_COST_TURNS turns, default 2,000); HIGMEM_PROFILE_COST_ONLY
// names the one run to make (for timing whole processes against each
// other):
//
//	HIGMEM_PROFILE_COST=1 HIGMEM_LOCOMO_DATA=../shared/data/locomo_dev.json go test -run TestProfileCost -v .
func TestProfileCost(t *testing.T) {
	if os.Getenv("HIGMEM_PROFILE_COST") == "" {
		t.Skip("set HIGMEM_PROFILE_COST=1 to measure")
	}
	var convs [][]higmem.TurnInput
	if path := os.Getenv("HIGMEM_LOCOMO_DATA"); path != "" {
		samples, err := locomo.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range samples {
			var ts []higmem.TurnInput
			for _, se := range s.Sessions {
				for _, tu := range se.Turns {
					ts = append(ts, higmem.TurnInput{ID: tu.DiaID, SessionID: strconv.Itoa(se.N), Speaker: tu.Speaker, Text: tu.Text, Time: se.DateTime})
				}
			}
			convs = append(convs, ts)
		}
	} else {
		n := 2000
		if v, err := strconv.Atoi(os.Getenv("HIGMEM_PROFILE_COST_TURNS")); err == nil && v > 0 {
			n = v
		}
		convs = append(convs, synth.Generate(synth.Options{Turns: n, Seed: 7, SessionTurns: 22}).Turns)
	}
	turns := 0
	for _, c := range convs {
		turns += len(c)
	}
	for _, run := range []struct {
		name string
		opts higmem.Options
	}{
		{"default+profiles", higmem.Options{Mode: higmem.ModeDefault}},
		{"default-no-profiles", higmem.Options{Mode: higmem.ModeDefault, Ablations: higmem.Ablations{NoProfiles: true}}},
		{"offline", higmem.Options{Mode: higmem.ModeOffline}},
	} {
		if only := os.Getenv("HIGMEM_PROFILE_COST_ONLY"); only != "" && only != run.name {
			continue
		}
		var calls, prompt, completion, records, values int
		var build, read time.Duration
		for i, conv := range convs {
			o := run.opts
			o.Embedder = hashing.New(0)
			if o.Mode == higmem.ModeDefault {
				o.MemoryModel = llmtest.NewScripted()
			}
			m := open(t, o)
			sp := higmem.Space{UserID: "cost", AgentID: strconv.Itoa(i)}
			start := time.Now()
			res, err := m.Add(t.Context(), sp, conv)
			if err != nil {
				t.Fatal(err)
			}
			build += time.Since(start)
			for _, c := range res.Calls {
				calls++
				prompt += c.Usage.PromptTokens
				completion += c.Usage.CompletionTokens
			}
			start = time.Now()
			ps, err := m.Profiles(t.Context(), sp, higmem.ProfileOptions{})
			if err != nil {
				t.Fatal(err)
			}
			read += time.Since(start)
			for _, p := range ps {
				for _, a := range p.Attributes {
					values += len(a.Values)
					for _, v := range a.Values {
						for _, pr := range v.Producers {
							if pr != "rules" {
								records++
								break
							}
						}
					}
				}
			}
		}
		n := float64(turns)
		t.Logf("%-20s %d turns: %.3f calls/turn, %.1f prompt + %.1f completion tokens/turn, build %.2f ms/turn, first profile read %.3f ms/turn; %d values (%d stated by the model)",
			run.name, turns, float64(calls)/n, float64(prompt)/n, float64(completion)/n,
			float64(build.Microseconds())/1000/n, float64(read.Microseconds())/1000/n, values, records)
	}
}
