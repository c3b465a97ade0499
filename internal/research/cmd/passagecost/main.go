// Command passagecost measures what passages (the root package's
// passages.go) cost at ingest: it adds the first sessions of some samples
// of a LoCoMo-format file to an offline memory with a local embedder,
// once without passages (Ablations.NoPassages) and once with, and prints
// the wall time and the vectors stored per turn:
//
//	go run ./internal/research/cmd/passagecost -data ../shared/data/realmem_dev.json \
//	  -model ~/.cache/higmem/models/e5-small-v2 -samples 0 -sessions 3
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed/minilm"
	"github.com/higmem/higmem/eval/locomo"
	"github.com/higmem/higmem/internal/passage"
	"github.com/higmem/higmem/store"
	"github.com/higmem/higmem/store/sqlite"
)

func main() {
	data := flag.String("data", "", "a LoCoMo-format file (realmem_dev.json)")
	model := flag.String("model", "", "the embedder's model directory (e5-small-v2)")
	samples := flag.String("samples", "0", "comma-separated sample indexes")
	sessions := flag.Int("sessions", 3, "sessions of each sample to add")
	flag.Parse()
	ss, err := locomo.Load(*data)
	if err != nil {
		log.Fatal(err)
	}
	emb, err := minilm.Load(*model, minilm.Options{})
	if err != nil {
		log.Fatal(err)
	}
	var inputs [][]higmem.TurnInput // one per session
	turns, long, passages, chars := 0, 0, 0, 0
	for _, f := range strings.Split(*samples, ",") {
		i, err := strconv.Atoi(f)
		if err != nil || i < 0 || i >= len(ss) {
			log.Fatalf("sample %q: not an index below %d", f, len(ss))
		}
		for _, sess := range ss[i].Sessions[:min(*sessions, len(ss[i].Sessions))] {
			var in []higmem.TurnInput
			for _, tr := range sess.Turns {
				in = append(in, higmem.TurnInput{ID: tr.DiaID, SessionID: strconv.Itoa(sess.N), Speaker: tr.Speaker, Text: tr.Text, Time: sess.DateTime})
				turns++
				chars += len(tr.Text)
				if ps := passage.Split(tr.Text); ps != nil {
					long++
					passages += len(ps)
				}
			}
			inputs = append(inputs, in)
		}
	}
	fmt.Printf("%d turns (%d sessions, %.0f chars a turn), %d long (over %d words), %d passages (%.1f per long turn)\n",
		turns, len(inputs), float64(chars)/float64(turns), long, passage.MinWords, passages, float64(passages)/float64(max(long, 1)))
	fmt.Printf("| passages | ingest wall | per turn | vectors stored | per turn | turn+window | passage vectors |\n|---|---|---|---|---|---|---|\n")
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "passagecost")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	for _, off := range []bool{true, false} {
		s, err := sqlite.Open(ctx, filepath.Join(dir, fmt.Sprintf("cost-%v.db", off)), sqlite.Options{})
		if err != nil {
			log.Fatal(err)
		}
		m, err := higmem.Open(ctx, higmem.Options{Mode: higmem.ModeOffline, Store: s, Embedder: emb,
			Ablations: higmem.Ablations{NoPassages: off}})
		if err != nil {
			log.Fatal(err)
		}
		sp := higmem.Space{UserID: "cost"}
		start := time.Now()
		for _, in := range inputs {
			if _, err := m.Add(ctx, sp, in); err != nil {
				log.Fatal(err)
			}
		}
		wall := time.Since(start)
		count := map[store.VectorKind]int{}
		for _, k := range []store.VectorKind{store.VectorTurn, store.VectorWindow, store.VectorPassage} {
			ids, err := store.EmbedderLister(s).Embedders(ctx, sp, k)
			if err != nil {
				log.Fatal(err)
			}
			for _, id := range ids {
				got, err := s.ListVectors(ctx, sp, k, id)
				if err != nil {
					log.Fatal(err)
				}
				for _, v := range got {
					count[k] += len(v.Values) / emb.Dim()
				}
			}
		}
		m.Close()
		s.Close()
		all := count[store.VectorTurn] + count[store.VectorWindow] + count[store.VectorPassage]
		name := "on"
		if off {
			name = "off"
		}
		fmt.Printf("| %s | %.1f s | %.1f ms | %d | %.2f | %d | %d |\n", name, wall.Seconds(), float64(wall.Milliseconds())/float64(turns),
			all, float64(all)/float64(turns), count[store.VectorTurn]+count[store.VectorWindow], count[store.VectorPassage])
	}
}
