package higmem

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/internal/vec"
)

// Window variants measured by the cross-validation: what text (or which
// turn vectors) a turn's window vector is made of. Text variants are
// embedded (and cached with HIGMEM_EMBED_CACHE); "m" variants average the
// turns' own vectors and embed nothing. HIGMEM_CV_WINDOWS lists the text
// variants to compute (default "sym1,prev1"; "none" computes none).

// cvWindowText is one text variant: before and after say how many turns of
// the session either side a window takes (words, when set, takes turns
// while the side has fewer words, up to the count).
type cvWindowText struct {
	before, after int
	words         int
}

var cvWindowTexts = map[string]cvWindowText{
	"sym1":  {before: 1, after: 1},
	"prev1": {before: 1},
	"prev2": {before: 2},
	"pw30":  {before: 4, words: 30},
	"pw20":  {before: 3, words: 20},
	"pw50":  {before: 6, words: 50},
	"pw80":  {before: 8, words: 80},
	"sw15":  {before: 3, after: 3, words: 15},
}

// cvWindowVectors returns each variant's window vector of every turn of
// st. Caller holds st.mu.
func cvWindowVectors(ctx context.Context, t *testing.T, emb embed.Embedder, st *spaceState) map[string][][]float32 {
	t.Helper()
	n := len(st.turns)
	line := func(j int) string { return st.turns[j].Speaker + ": " + content(st.turns[j]) }
	words := func(j int) int { return len(strings.Fields(content(st.turns[j]))) }
	names := os.Getenv("HIGMEM_CV_WINDOWS")
	switch names {
	case "":
		names = "sym1,prev1"
	case "none":
		return nil
	}
	out := map[string][][]float32{}
	for _, name := range strings.Split(names, ",") {
		spec, ok := cvWindowTexts[name]
		if !ok {
			t.Fatalf("unknown window variant %q", name)
		}
		texts := make([]string, n)
		for i := range n {
			var parts []string
			w := 0
			for j := i; j > 0 && st.info.sameSession[j] && i-j < spec.before && (spec.words == 0 || w < spec.words); j-- {
				parts = append([]string{line(j - 1)}, parts...)
				w += words(j - 1)
			}
			parts = append(parts, line(i))
			w = 0
			for j := i + 1; j < n && st.info.sameSession[j] && j-i <= spec.after && (spec.words == 0 || w < spec.words); j++ {
				parts = append(parts, line(j))
				w += words(j)
			}
			texts[i] = strings.Join(parts, "\n")
		}
		vs, err := emb.Embed(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vs {
			vec.Normalize(v)
		}
		out[name] = vs
	}
	// Means of the turns' own vectors: the turn with one turn either side
	// (msym1), with the one before (mprev1).
	if st.turnVec.Rows() == n && n > 0 {
		for _, m := range []struct {
			name          string
			before, after int
		}{{"msym1", 1, 1}, {"mprev1", 1, 0}, {"mprev2", 2, 0}} {
			vs := make([][]float32, n)
			for i := range n {
				v := make([]float32, st.turnVec.Dim)
				addRow := func(j int) {
					for k, x := range st.turnVec.Row(j) {
						v[k] += x
					}
				}
				addRow(i)
				for j := i; j > 0 && st.info.sameSession[j] && i-j < m.before; j-- {
					addRow(j - 1)
				}
				for j := i + 1; j < n && st.info.sameSession[j] && j-i <= m.after; j++ {
					addRow(j)
				}
				vec.Normalize(v)
				vs[i] = v
			}
			out[m.name] = vs
		}
	}
	return out
}

// TestOfflineCVWindows measures the window variants, each alone on the
// engine's defaults, and cross-validates the choice among them. Skipped
// unless HIGMEM_OFFLINE_CV=1; set HIGMEM_CV_WINDOWS to the text variants.
func TestOfflineCVWindows(t *testing.T) {
	sets := loadCVSets(t, true)
	tuned := make([]bool, len(sets))
	for i, set := range sets {
		tuned[i] = !strings.HasSuffix(set.name, "-burst")
	}
	d := cvTune{tu: defaultOfflineTuning()}
	fixed := []cvConfig{{"offline (defaults)", d}, {"hybrid-topk 10", cvTune{tu: d.tu, TopK: 10}}}
	var wins []string
	for name := range sets[0].qs[0].win {
		wins = append(wins, name)
	}
	slices.Sort(wins)
	for _, w := range wins {
		for _, x := range []float64{0.5, 1} {
			ct := d
			ct.Win, ct.Window = w, x
			fixed = append(fixed, cvConfig{fmt.Sprintf("%s %.1f", w, x), ct})
		}
	}
	t.Logf("fixed configurations on every question\n\n%s", fixedTable(sets, fixed, scoreGrid(sets, fixed)))
	ps := append(cvBaseGrid(), cvParam{"window", nil, nil})
	ps[len(ps)-1].values = make([]float64, len(wins)+1)
	for i := range ps[len(ps)-1].values {
		ps[len(ps)-1].values[i] = float64(i)
	}
	ps[len(ps)-1].set = func(ct *cvTune, v float64) {
		if v > 0 {
			ct.Win, ct.Window = wins[int(v)-1], 0.5
		}
	}
	grid := cvGrid(d, ps)
	res := scoreGrid(sets, grid)
	t.Logf("windows: %v\n%d configurations\n\n%s", wins, len(grid), crossValidate(sets, tuned, grid, res, 6, 8))
}
