package higmem_test

import (
	"testing"

	"github.com/higmem/higmem"
	lab "github.com/higmem/higmem/internal/research"
)

// measureStates is lab.MeasureStates in a temporary directory (the
// measurement across sizes that calibrated the estimate is
// internal/research/cmd/statesize).
func measureStates(t *testing.T, c lab.StateCase) (heap, inuse, estimate int64) {
	t.Helper()
	heap, inuse, estimate, err := lab.MeasureStates(t.Context(), t.TempDir(), c)
	if err != nil {
		t.Fatal(err)
	}
	return heap, inuse, estimate
}

// TestStateSizeEstimate checks the cache's estimate of loaded spaces
// against the Go heap they take (no timing): what states hold (the
// estimate less its allowance for fragmentation) is within 15% of the heap
// they take after a collection (25% with the smaller spaces the race
// detector allows), in offline and default mode; and with
// spaces loaded and dropped under a bound, the heap in use stays within
// the bound plus a little.
func TestStateSizeEstimate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds spaces to measure")
	}
	for _, c := range []struct {
		mode higmem.Mode
		dim  int
		k, n int
	}{{higmem.ModeOffline, 64, 4, 300}, {higmem.ModeDefault, 64, 2, 200}, {higmem.ModeOffline, 0, 4, 300}} {
		if raceOn {
			c.k, c.n = 2, 150 // the race detector slows the building
		}
		heap, _, est := measureStates(t, lab.StateCase{Mode: c.mode, Dim: c.dim, K: c.k, N: c.n, Bound: -1})
		held := float64(est) / (1 + higmem.Fragmentation)
		t.Logf("%s, dim %d, %d×%d: held %.3f MiB, heap %.3f MiB", c.mode, c.dim, c.k, c.n, held/(1<<20), float64(heap)/(1<<20))
		tol := 0.15
		if raceOn {
			tol = 0.25 // smaller spaces, noisier
		}
		if r := held / float64(heap); r < 1-tol || r > 1+tol {
			t.Errorf("%s, dim %d, %d spaces of %d turns: the states hold %.2f MiB by the estimate, the heap took %.2f MiB (ratio %.2f)",
				c.mode, c.dim, c.k, c.n, held/(1<<20), float64(heap)/(1<<20), r)
		}
	}
	bound, k, n := int64(2<<20), 16, 300
	if raceOn {
		bound, k, n = 1<<20, 8, 200
	}
	_, inuse, est := measureStates(t, lab.StateCase{Mode: higmem.ModeOffline, Dim: 64, K: k, N: n, Bound: bound})
	t.Logf("bound: estimate %.2f MiB, in use %.2f MiB", float64(est)/(1<<20), float64(inuse)/(1<<20))
	if est > bound+bound/4 {
		t.Errorf("the cache holds %.2f MiB by its estimate under a bound of %d MiB", float64(est)/(1<<20), bound>>20)
	}
	if inuse > bound+bound/4+1<<20 {
		// The constant: what the heap in use adds beyond the states at
		// these small sizes (spans partly used).
		t.Errorf("heap in use %.1f MiB under a bound of %d MiB", float64(inuse)/(1<<20), bound>>20)
	}
}
