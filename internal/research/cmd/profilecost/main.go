// Command profilecost measures what profile maintenance costs at ingest:
// default mode with the scripted model, with profile facts asked in the
// build call and without (Ablations.NoProfiles), and offline mode (the
// rules' derivation on the first read). -locomo names a LoCoMo-format file
// to use its conversations (else one synthetic conversation of -turns
// turns); -only names the one run to make (to time whole processes against
// each other):
//
//	go run ./internal/research/cmd/profilecost -locomo ../shared/data/locomo_dev.json
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"strconv"
	"time"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/eval/locomo"
	"github.com/higmem/higmem/internal/synth"
	"github.com/higmem/higmem/llm/llmfake"
)

func main() {
	data := flag.String("locomo", "", "a LoCoMo-format file whose conversations to ingest (default: a synthetic one)")
	turns := flag.Int("turns", 2000, "without -locomo, the synthetic conversation's turns")
	only := flag.String("only", "", "the one run to make: default+profiles, default-no-profiles or offline")
	flag.Parse()
	convs, err := conversations(*data, *turns)
	if err != nil {
		log.Fatal(err)
	}
	for _, run := range []struct {
		name string
		opts higmem.Options
	}{
		{"default+profiles", higmem.Options{Mode: higmem.ModeDefault}},
		{"default-no-profiles", higmem.Options{Mode: higmem.ModeDefault, Ablations: higmem.Ablations{NoProfiles: true}}},
		{"offline", higmem.Options{Mode: higmem.ModeOffline}},
	} {
		if *only != "" && *only != run.name {
			continue
		}
		if err := measure(context.Background(), run.name, run.opts, convs); err != nil {
			log.Fatal(err)
		}
	}
}

// conversations returns the conversations of the LoCoMo file at path, or
// one synthetic conversation of n turns when path is empty.
func conversations(path string, n int) ([][]higmem.TurnInput, error) {
	if path == "" {
		return [][]higmem.TurnInput{synth.Generate(synth.Options{Turns: n, Seed: 7, SessionTurns: 22}).Turns}, nil
	}
	samples, err := locomo.Load(path)
	if err != nil {
		return nil, err
	}
	var convs [][]higmem.TurnInput
	for _, s := range samples {
		var ts []higmem.TurnInput
		for _, se := range s.Sessions {
			for _, tu := range se.Turns {
				ts = append(ts, higmem.TurnInput{ID: tu.DiaID, SessionID: strconv.Itoa(se.N), Speaker: tu.Speaker, Text: tu.Text, Time: se.DateTime})
			}
		}
		convs = append(convs, ts)
	}
	return convs, nil
}

// measure ingests every conversation into its own in-memory Memory of
// options o, reads its profiles, and prints the cost per turn.
func measure(ctx context.Context, name string, o higmem.Options, convs [][]higmem.TurnInput) error {
	var turns, calls, prompt, completion, records, values int
	var build, read time.Duration
	for i, conv := range convs {
		turns += len(conv)
		o.Embedder = hashing.New(0)
		if o.Mode == higmem.ModeDefault {
			o.MemoryModel = llmfake.NewScripted()
		}
		m, err := higmem.Open(ctx, o)
		if err != nil {
			return err
		}
		sp := higmem.Space{UserID: "cost", AgentID: strconv.Itoa(i)}
		start := time.Now()
		res, err := m.Add(ctx, sp, conv)
		if err != nil {
			return err
		}
		build += time.Since(start)
		for _, c := range res.Calls {
			calls++
			prompt += c.Usage.PromptTokens
			completion += c.Usage.CompletionTokens
		}
		start = time.Now()
		ps, err := m.Profiles(ctx, sp, higmem.ProfileOptions{})
		if err != nil {
			return err
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
		if err := m.Close(); err != nil {
			return err
		}
	}
	n := float64(turns)
	fmt.Printf("%-20s %d turns: %.3f calls/turn, %.1f prompt + %.1f completion tokens/turn, build %.2f ms/turn, first profile read %.3f ms/turn; %d values (%d stated by the model)\n",
		name, turns, float64(calls)/n, float64(prompt)/n, float64(completion)/n,
		float64(build.Microseconds())/1000/n, float64(read.Microseconds())/1000/n, values, records)
	return nil
}
