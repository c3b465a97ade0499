// Command int8fid measures how far e5-small-v2 run in int8
// (minilm.PrecisionInt8, or int16 with -precision int16) is from the float model: 1 − cosine between the
// two vectors of the same text, mean and worst, on a sample of the turns of
// each LoCoMo-format dev file. It is the figure of BENCHMARKS.md "int8
// e5-small-v2 with SmoothQuant" (run at a build before and after the
// smoothing):
//
//	go run ./internal/research/cmd/int8fid -n 80 \
//	    locomo=../shared/data/locomo_dev.json friendsqa=../shared/data/friendsqa_dev.json realmem=../shared/data/realmem_dev.json
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/higmem/higmem/embed/minilm"
	"github.com/higmem/higmem/eval/locomo"
)

func main() {
	n := flag.Int("n", 80, "turns sampled from each file")
	dir := flag.String("model", "/root/.cache/higmem/models/e5-small-v2", "the e5-small-v2 model directory")
	prec := flag.String("precision", "int8", "the integer layers to compare with float: int8 or int16")
	flag.Parse()
	p := minilm.PrecisionInt8
	switch *prec {
	case "int8":
	case "int16":
		p = minilm.PrecisionInt16
	default:
		log.Fatalf("-precision %q: want int8 or int16", *prec)
	}
	f, err := minilm.Load(*dir, minilm.Options{Precision: minilm.PrecisionFloat32})
	if err != nil {
		log.Fatal(err)
	}
	q, err := minilm.Load(*dir, minilm.Options{Precision: p})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("float %s, %s %s\n", f.ID(), *prec, q.ID())
	ctx := context.Background()
	for _, arg := range flag.Args() {
		name, path, ok := strings.Cut(arg, "=")
		if !ok {
			log.Fatalf("%q: want NAME=PATH", arg)
		}
		samples, err := locomo.Load(path)
		if err != nil {
			log.Fatal(err)
		}
		var texts []string
		for i := range samples {
			for _, t := range samples[i].Turns() {
				texts = append(texts, t.Text)
			}
		}
		r := rand.New(rand.NewPCG(7, 7))
		r.Shuffle(len(texts), func(i, j int) { texts[i], texts[j] = texts[j], texts[i] })
		texts = texts[:min(*n, len(texts))]
		fv, err := f.Embed(ctx, texts)
		if err != nil {
			log.Fatal(err)
		}
		qv, err := q.Embed(ctx, texts)
		if err != nil {
			log.Fatal(err)
		}
		var mean, worst float64
		for i := range fv {
			var d float64
			for j := range fv[i] {
				d += float64(fv[i][j]) * float64(qv[i][j])
			}
			mean += (1 - d) / float64(len(fv))
			worst = math.Max(worst, 1-d)
		}
		fmt.Printf("%-10s %d texts: 1 − cosine mean %.2e, worst %.2e\n", name, len(texts), mean, worst)
	}
}
