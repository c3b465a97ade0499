// Command shapes is the research loop of issue 32 (see package shapes).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed/diskcache"
	"github.com/higmem/higmem/embed/minilm"
	"github.com/higmem/higmem/eval/locomo"
	"github.com/higmem/higmem/internal/offline"
	"github.com/higmem/higmem/internal/research/shapes"
)

var withChunks, int8, fit, ablate, shapeOnly, misses bool

var tokens *int

// keepTop is the replay's rule of the turn always kept (-keep-top), pin
// the weights the fit holds (-pin), sweep the weight -sweep sweeps.
var (
	keepTop shapes.KeepTop
	pin     []string
	sweep   string
)

func main() {
	sets := flag.String("sets", "", "comma-separated NAME=PATH[@REGEXP] of LoCoMo-format dev files (REGEXP: keep the samples whose id matches)")
	model := flag.String("model", "/root/.cache/higmem/models/e5-small-v2", "the e5-small-v2 model directory")
	cacheDir := flag.String("cache", "/tmp/shapes-cache", "the vector cache directory")
	tokens = flag.Int("tokens", 0, "the engine's evidence token budget (RetrieveOptions.EvidenceTokens; 0: the default, 2,000; the chat endpoint's is 1,000)")
	workers := flag.Int("workers", 1, "embedding goroutines")
	flag.BoolVar(&withChunks, "chunks", true, "embed the passages of long turns as the engine cuts them (internal/passage; ChunkMax, the adapted+passages variant)")
	flag.BoolVar(&int8, "int8", true, "embed in int8 (minilm.PrecisionInt8; reported to the engine as float32's id)")
	flag.BoolVar(&fit, "fit", false, "fit the user–assistant weights, leave-one-set-out over the sets whose shape adapts, then on all")
	flag.BoolVar(&shapeOnly, "shape-only", false, "print each conversation's shape (offline.Shape) and weight, and nothing else (no model)")
	flag.BoolVar(&misses, "misses", false, "print every gold unit the shipped scorer misses: role, place in its session, words, rank")
	flag.BoolVar(&ablate, "ablate", false, "report the shipped user–assistant weights with each set back to the base tuning's")
	keep := flag.String("keep-top", "engine", "the replay's turn always kept: engine (offline.Selection.Chosen, roles weighed), none (the replay before 672e342, when the ua* weights were fitted: the first K ranked), plain (the most relevant unit, no role weighting)")
	pins := flag.String("pin", "", "comma-separated weights the fit holds at the neutral value (out of the grid and the random starts), e.g. PassageDense,PassageLex")
	flag.StringVar(&sweep, "sweep", "", "from the shipped weights, evaluate each grid value of this weight (e.g. PassageDense) on the user–assistant sets and print each set's objective")
	flag.Parse()
	var err error
	if keepTop, err = shapes.ParseKeepTop(*keep); err != nil {
		log.Fatal(err)
	}
	if *pins != "" {
		pin = strings.Split(*pins, ",")
		for _, p := range pin {
			if !slices.Contains(shapes.GridNames(), p) {
				log.Fatalf("-pin: no weight %q (one of %v)", p, shapes.GridNames())
			}
		}
	}
	if sweep != "" && !slices.Contains(shapes.GridNames(), sweep) {
		log.Fatalf("-sweep: no weight %q (one of %v)", sweep, shapes.GridNames())
	}
	if err := run(*sets, *model, *cacheDir, *workers); err != nil {
		log.Fatal(err)
	}
}

type set struct {
	name string
	qs   []*shapes.Question
}

func run(sets, model, cacheDir string, workers int) error {
	ctx := context.Background()
	if shapeOnly {
		return printShapes(sets)
	}
	opts := minilm.Options{Workers: workers}
	if int8 {
		opts.Precision = minilm.PrecisionInt8
	}
	mdl, err := minilm.Load(model, opts)
	if err != nil {
		return err
	}
	cache, err := diskcache.Open(cacheDir, mdl)
	if err != nil {
		return err
	}
	defer cache.Close()
	emb := cache.Embedder()
	if int8 {
		emb = shapes.AsID(emb, strings.TrimSuffix(mdl.ID(), ":int8s"))
	}
	stage := offline.StageFor(emb.ID())
	var all []set
	for _, sp := range strings.Split(sets, ",") {
		name, path, ok := strings.Cut(sp, "=")
		if !ok {
			return fmt.Errorf("-sets: %q is not NAME=PATH[@REGEXP]", sp)
		}
		path, only, _ := strings.Cut(path, "@")
		start := time.Now()
		samples, err := locomo.Load(path)
		if err != nil {
			return err
		}
		if only != "" {
			re, err := regexp.Compile(only)
			if err != nil {
				return err
			}
			samples = slices.DeleteFunc(samples, func(s locomo.Sample) bool { return !re.MatchString(s.ID) })
		}
		qsess, err := querySessions(path)
		if err != nil {
			return err
		}
		m, err := higmem.Open(ctx, higmem.Options{Mode: higmem.ModeOffline, Embedder: emb})
		if err != nil {
			return err
		}
		qs, err := shapes.Load(ctx, m, emb, name, samples, qsess, withChunks, higmem.RetrieveOptions{EvidenceTokens: *tokens})
		m.Close()
		if err != nil {
			return err
		}
		hits, embedded := cache.Stats()
		log.Printf("%s: %d questions in %s (cache: %d hits, %d embedded)", name, len(qs), time.Since(start).Round(time.Second), hits, embedded)
		report(name, qs, offline.DefaultTuning(), stage)

		if misses {
			printMisses(name, qs, stage)
		}
		if ablate && adapts(qs) {
			for _, a := range shapes.Ablations() {
				tu := offline.DefaultTuning()
				a.Set(&tu.Assist)
				sc, _ := shapes.Evaluate(qs, tu, stage, shapes.Variant{KeepTop: keepTop})
				fmt.Printf("%-10s %-28s %s\n", name, "without "+a.Name, sc)
			}
		}
		all = append(all, set{name, qs})
	}
	if sweep != "" {
		var names []string
		var qs [][]*shapes.Question
		for _, s := range all {
			if adapts(s.qs) {
				names, qs = append(names, s.name), append(qs, s.qs)
			}
		}
		if _, err := shapes.Sweep(os.Stdout, names, qs, offline.DefaultTuning(), stage, shapes.Variant{KeepTop: keepTop}, sweep); err != nil {
			return err
		}
	}
	if fit {
		fitSets(all, stage)
	}
	return nil
}

// adapts reports whether the shape of some conversation of qs adapts.
func adapts(qs []*shapes.Question) bool {
	for _, q := range qs {
		if shapes.ShapeOf(q.Conv).Assist() > 0 {
			return true
		}
	}
	return false
}

func fitSets(all []set, stage *offline.Stage) {
	var ua []set
	for _, s := range all {
		if adapts(s.qs) {
			ua = append(ua, s)
		}
	}
	v := shapes.Variant{KeepTop: keepTop}
	if len(ua) > 1 {
		for i, held := range ua {
			var train [][]*shapes.Question
			for j, s := range ua {
				if j != i {
					train = append(train, s.qs)
				}
			}
			fmt.Printf("== fold: fit without %s\n", held.name)
			tu := shapes.Fit(os.Stdout, train, offline.DefaultTuning(), stage, v, 3, pin...)
			fmt.Printf("held-out %s: fitted %+v\n", held.name, tu.Assist)
			report(held.name+"(held-out)", held.qs, tu, stage)
		}
	}
	var train [][]*shapes.Question
	for _, s := range ua {
		train = append(train, s.qs)
	}
	fmt.Printf("== fit on all user–assistant sets\n")
	tu := shapes.Fit(os.Stdout, train, offline.DefaultTuning(), stage, v, 4, pin...)
	fmt.Printf("fitted on all: %#v\n", tu.Assist)
	for _, s := range all {
		report(s.name+"(all-fit)", s.qs, tu, stage)
	}
}

func report(name string, qs []*shapes.Question, tu offline.Tuning, stage *offline.Stage) {
	var eng shapes.Score
	lo, hi := 1.0, 0.0
	for _, q := range qs {
		eng.Add(q.Engine, q.Gold)
		g := shapes.ShapeOf(q.Conv).Assist()
		lo, hi = min(lo, g), max(hi, g)
	}
	fmt.Printf("%s: %d questions, shape weight %.2f–%.2f\n", name, len(qs), lo, hi)
	base, _ := shapes.Evaluate(qs, offline.DefaultTuning(), stage, shapes.Variant{KeepTop: keepTop, Shape: &shapes.NoShape})
	adapted, sels := shapes.Evaluate(qs, tu, stage, shapes.Variant{KeepTop: keepTop})
	keepStage, _ := shapes.Evaluate(qs, tu, stage, shapes.Variant{KeepTop: keepTop, KeepStage: true})
	rows := []shapes.Row{{Name: "engine-offline (budget)", Score: eng}, {Name: "offline base (replay)", Score: base},
		{Name: "offline adapted", Score: adapted}, {Name: "offline adapted, stage kept", Score: keepStage}}
	if withChunks {
		pas, _ := shapes.Evaluate(qs, tu, stage, shapes.Variant{KeepTop: keepTop, Passages: true})
		rows = append(rows, shapes.Row{Name: "offline adapted+passages", Score: pas})
	}
	for _, sys := range []struct {
		name string
		r    shapes.Ranker
	}{{"dense", shapes.Dense}, {"bm25", shapes.BM25}, {"hybrid", shapes.Hybrid}, {"chunkmax", shapes.ChunkMax}} {
		if sys.name == "chunkmax" && !withChunks {
			continue
		}
		rows = append(rows, shapes.Row{Name: sys.name + "@sameK", Score: shapes.AtSameK(qs, sys.r, sels)})
		for _, k := range []int{4, 6, 8, 10} {
			var s shapes.Score
			for _, q := range qs {
				s.Add(shapes.TopK(sys.r(q), k), q.Gold)
			}
			rows = append(rows, shapes.Row{Name: fmt.Sprintf("%s@%d", sys.name, k), Score: s})
		}
	}
	shapes.Print(os.Stdout, name, rows)
}

// querySessions reads realmem's query_session of every question (key:
// sample id, NUL, question), empty for files without it.
func querySessions(path string) (map[string]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw []struct {
		ID string `json:"sample_id"`
		QA []struct {
			Q    string `json:"question"`
			Sess int    `json:"query_session"`
		} `json:"qa"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, s := range raw {
		for _, q := range s.QA {
			out[s.ID+"\x00"+q.Q] = q.Sess
		}
	}
	return out, nil
}

// printShapes prints the shape of every conversation of the sets, as the
// engine computes it from the turns' speakers and words.
func printShapes(sets string) error {
	for _, sp := range strings.Split(sets, ",") {
		name, path, _ := strings.Cut(sp, "=")
		path, _, _ = strings.Cut(path, "@")
		samples, err := locomo.Load(path)
		if err != nil {
			return err
		}
		for _, s := range samples {
			c := &shapes.Conv{}
			for _, t := range s.Turns() {
				c.Units = append(c.Units, shapes.Unit{Speaker: t.Speaker, Words: len(strings.Fields(t.Content()))})
			}
			sh := shapes.ShapeOf(c)
			fmt.Printf("%-10s %-36s units %5d  two-party %.2f  ratio %.2f  weight %.2f\n", name, s.ID, len(c.Units), sh.TwoParty, sh.Ratio, sh.Assist())
		}
	}
	return nil
}

// printMisses prints the gold units the shipped scorer leaves out.
func printMisses(name string, qs []*shapes.Question, stage *offline.Stage) {
	tu := offline.DefaultTuning()
	for qi, q := range qs {
		sel := shapes.SelectVariant(q, tu, stage, shapes.Variant{KeepTop: keepTop})
		in := map[int]bool{}
		for _, i := range sel {
			in[i] = true
		}
		for _, g := range q.Gold {
			if g < 0 || in[g] {
				continue
			}
			u := q.Conv.Units[g]
			pos := 0
			for j := g; j >= 0 && q.Conv.Units[j].Session == u.Session; j-- {
				pos++
			}
			fmt.Printf("miss %s q%d %s user=%v pos=%d words=%d sessions-back=%d\n", name, qi, u.ID, u.User, pos, u.Words, q.QuerySession-u.Session)
		}
	}
}
