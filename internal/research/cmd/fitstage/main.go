// Command fitstage fits the learned stage of offline retrieval
// (internal/offline/stage_weights.go) on every question of the LoCoMo and
// FriendsQA dev files with e5-small-v2, prints the weights and, with -out,
// writes the Go file the engine ships:
//
//	go run ./internal/research/cmd/fitstage -locomo ../shared/data/locomo_dev.json \
//	  -friendsqa ../shared/data/friendsqa_dev.json -model ~/.cache/higmem/models/e5-small-v2 \
//	  -out internal/offline/stage_weights.go
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed/minilm"
	"github.com/higmem/higmem/eval/locomo"
	"github.com/higmem/higmem/internal/offline"
	"github.com/higmem/higmem/internal/research"
)

func main() {
	locomoPath := flag.String("locomo", "", "the LoCoMo dev file (locomo_dev.json)")
	friendsPath := flag.String("friendsqa", "", "the FriendsQA dev file (friendsqa_dev.json)")
	model := flag.String("model", "", "the e5-small-v2 model directory")
	out := flag.String("out", "", "write the weights as this Go file (internal/offline/stage_weights.go)")
	flag.Parse()
	if *locomoPath == "" || *friendsPath == "" || *model == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*locomoPath, *friendsPath, *model, *out); err != nil {
		log.Fatal(err)
	}
}

func run(locomoPath, friendsPath, model, out string) error {
	ctx := context.Background()
	// Float32 layers: the weights were fitted on float vectors (the
	// default int16 layers' differ from them by about 1e-6).
	emb, err := minilm.Load(model, minilm.Options{Precision: minilm.PrecisionFloat32})
	if err != nil {
		return err
	}
	m, err := higmem.Open(ctx, higmem.Options{Mode: higmem.ModeOffline, Embedder: emb})
	if err != nil {
		return err
	}
	defer m.Close()
	var qs []research.Question
	for _, set := range []struct{ name, path string }{{"LoCoMo", locomoPath}, {"FriendsQA", friendsPath}} {
		start := time.Now()
		samples, err := locomo.Load(set.path)
		if err != nil {
			return err
		}
		got, err := research.Load(ctx, m, set.name, samples)
		if err != nil {
			return err
		}
		log.Printf("%s: %d conversations, %d questions (%s)", set.name, len(samples), len(got), time.Since(start).Round(time.Second))
		qs = append(qs, got...)
	}
	fit, err := research.FitStage(offline.DefaultTuning(), qs)
	if err != nil {
		return err
	}
	log.Printf("fitted on %d questions (%s) in %d Newton steps", len(qs), emb.ID(), fit.Iters)
	src, err := research.StageWeightsFile(fit)
	if err != nil {
		return err
	}
	fmt.Printf("%s", src)
	if out != "" {
		return os.WriteFile(out, src, 0o644)
	}
	return nil
}
