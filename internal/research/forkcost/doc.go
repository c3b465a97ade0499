// Package forkcost measures what a fork-join of two goroutines costs
// between two bursts of work, as a retrieval's parallel parts
// (rank.ParallelRange, vec.Matrix.tiered) meet it: against running both
// halves on one goroutine, and against a worker kept awake by spinning.
// It is an experiment (BENCHMARKS.md, "the fork-join's cost on a 2-vCPU
// VM"), not product code:
//
//	go test -run '^$' -bench . -benchtime 3000x -count 2 ./internal/research/forkcost
package forkcost
