// Command shapegen writes the stress sets of issue 32 (see package
// shapes): -kind ua (user–assistant: short user facts, long assistant
// replies) or burst (every turn cut into a burst of sentences).
package main

import (
	"flag"
	"log"

	"github.com/higmem/higmem/eval/locomo"
	"github.com/higmem/higmem/internal/research/shapes"
)

func main() {
	kind := flag.String("kind", "ua", "ua or burst")
	in := flag.String("in", "/work/shared/data/locomo_dev.json", "the LoCoMo-format source file")
	out := flag.String("out", "", "the file to write (under /tmp/shapes-data; never committed)")
	convs := flag.Int("convs", 1, "how many conversations of the source (0: all)")
	words := flag.Int("reply-words", 200, "ua: mean words of an assistant reply")
	seed := flag.Uint64("seed", 32, "ua: random seed")
	flag.Parse()
	src, err := locomo.Load(*in)
	if err != nil {
		log.Fatal(err)
	}
	var n int
	switch *kind {
	case "ua":
		n, err = shapes.GenUA(src, *out, *convs, *words, *seed)
	case "burst":
		n, err = shapes.GenBurst(src, *out, *convs)
	default:
		log.Fatalf("-kind %q: want ua or burst", *kind)
	}
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("%s: %d questions", *out, n)
}
