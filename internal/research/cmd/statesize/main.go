// Command statesize prints what loaded spaces really take on the heap
// beside the cache's estimate (cache.go), across sizes and modes, to
// calibrate the estimate (docs/CONCURRENCY.md; TestStateSizeEstimate in the
// root package checks it at small sizes):
//
//	go run ./internal/research/cmd/statesize
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/internal/research"
)

func main() {
	dir, err := os.MkdirTemp("", "statesize")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	for i, c := range []research.StateCase{
		{Mode: higmem.ModeOffline, Dim: 0, K: 8, N: 1000, Bound: -1},
		{Mode: higmem.ModeOffline, Dim: 256, K: 8, N: 1000, Bound: -1},
		{Mode: higmem.ModeOffline, Dim: 256, K: 2, N: 5000, Bound: -1},
		{Mode: higmem.ModeOffline, Dim: 384, K: 1, N: 20000, Bound: -1},
		{Mode: higmem.ModeDefault, Dim: 256, K: 4, N: 1000, Bound: -1},
		{Mode: higmem.ModeOffline, Dim: 256, K: 30, N: 200, Bound: -1},
		{Mode: higmem.ModeOffline, Dim: 256, K: 60, N: 1000, Bound: 40 << 20},
	} {
		sub, err := os.MkdirTemp(dir, fmt.Sprint(i))
		if err != nil {
			log.Fatal(err)
		}
		heap, inuse, est, err := research.MeasureStates(context.Background(), sub, c)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%-8s dim %3d, %2d spaces × %5d turns, bound %d MiB: heap %.1f MiB (in use %.1f), estimate %.1f MiB, estimate/heap %.2f\n",
			c.Mode, c.Dim, c.K, c.N, c.Bound>>20, float64(heap)/(1<<20), float64(inuse)/(1<<20), float64(est)/(1<<20), float64(est)/float64(heap))
	}
}
