package higmem

import (
	"cmp"
	"maps"
	"slices"
	"testing"
)

// TestOfflineCVMisses tells where the evidence turns that the engine's
// offline selection misses lie: how far (in turns) from the nearest
// selected turn, in the same session or not, and at what rank of the
// score. Skipped unless HIGMEM_OFFLINE_CV=1 (as the other measurements of
// the CV harness).
func TestOfflineCVMisses(t *testing.T) {
	sets := loadCVSets(t, false)
	ct := cvFitted()
	ct.tu.MinK, ct.tu.KeepRatio = offMinK, offKeepRatio
	for _, set := range sets {
		hist := map[string]int{}
		rankH := map[string]int{}
		nmiss, ngold := 0, 0
		var ex exchangeCount
		for qi := range set.qs {
			q := &set.qs[qi]
			ex.add(q)
			sel := ct.sel(q)
			sc := ct.scores(q)
			ranked := rankPositive(sc)
			st := q.conv.st
			for _, g := range q.gold {
				if g < 0 {
					continue
				}
				ngold++
				if slices.Contains(sel, g) {
					continue
				}
				nmiss++
				d := 1 << 30
				sameSess := false
				for _, s := range sel {
					d = min(d, max(g-s, s-g))
					lo, hi := min(g, s), max(g, s)
					same := true
					for j := lo + 1; j <= hi; j++ {
						if !st.info.sameSession[j] {
							same = false
							break
						}
					}
					sameSess = sameSess || same
				}
				k := bucketOf(d, distBuckets)
				if k == "" {
					k = "other session"
					if sameSess {
						k = "same session, >8"
					}
				}
				hist[k]++
				r := slices.Index(ranked, g) + 1
				rk := "score 0"
				if r > 0 {
					rk = cmp.Or(bucketOf(r, rankBuckets), "rank >50")
				}
				rankH[rk]++
			}
		}
		t.Logf("%s: gold %d, missed %d", set.name, ngold, nmiss)
		t.Logf("  questions naming two speakers: %d; their evidence turns in an exchange between them: %d of %d; all their turns: %d of %d",
			ex.questions, ex.goldPair, ex.gold, ex.pair, ex.turns)
		if ngold == 0 || histTotal(hist) != nmiss || histTotal(rankH) != nmiss {
			t.Fatalf("%s: the histograms hold %d and %d misses of %d (gold %d)", set.name, histTotal(hist), histTotal(rankH), nmiss, ngold)
		}
		for _, k := range append(bucketNames(distBuckets), "same session, >8", "other session") {
			t.Logf("  %-18s %5d  %.3f of missed", k, hist[k], float64(hist[k])/float64(nmiss))
		}
		for _, k := range append(bucketNames(rankBuckets), "rank >50", "score 0") {
			t.Logf("  %-18s %5d  %.3f of missed", k, rankH[k], float64(rankH[k])/float64(nmiss))
		}
	}
}

func histTotal(h map[string]int) int {
	n := 0
	for v := range maps.Values(h) {
		n += v
	}
	return n
}

// A bucket holds the values up to max.
type bucket struct {
	max  int
	name string
}

var (
	distBuckets = []bucket{{1, "d1"}, {2, "d2"}, {4, "d3-4"}, {8, "d5-8"}}
	rankBuckets = []bucket{{12, "rank <=12"}, {20, "rank 13-20"}, {50, "rank 21-50"}}
)

// bucketOf names the first bucket that holds v ("" when none does).
func bucketOf(v int, bs []bucket) string {
	for _, b := range bs {
		if v <= b.max {
			return b.name
		}
	}
	return ""
}

func bucketNames(bs []bucket) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.name
	}
	return out
}

// exchangeCount counts, over the questions that name two speakers or
// more, how many of their evidence turns and of all their turns are in an
// exchange between two of them (cvQuestion.pair): what the exchange cue
// rests on.
type exchangeCount struct {
	questions, gold, goldPair, turns, pair int
}

func (c *exchangeCount) add(q *cvQuestion) {
	if q.f.speaker == nil {
		return
	}
	st := q.conv.st
	named := map[int32]bool{}
	for i, ok := range q.f.speaker {
		if ok {
			named[st.info.speaker[i]] = true
		}
	}
	if len(named) < 2 {
		return
	}
	c.questions++
	c.turns += len(q.f.speaker)
	for i := range q.f.speaker {
		if q.pair != nil && q.pair[i] {
			c.pair++
		}
	}
	for _, g := range q.gold {
		if g < 0 {
			continue
		}
		c.gold++
		if q.pair != nil && q.pair[g] {
			c.goldPair++
		}
	}
}
