// Package research is the lab of the offline scorer: it loads the dev
// conversations into the engine, captures what offline retrieval scores
// for each question (through internal/offline's probe, never the root
// package's internals) and fits what internal/offline ships. It is
// imported by no production package (TestImportRules).
//
// The commands:
//
//	go run ./internal/research/cmd/fitstage -locomo PATH -friendsqa PATH -model DIR [-out internal/offline/stage_weights.go]
//
// fits the learned stage's weights (internal/offline/stage_weights.go) on
// every question of the LoCoMo and FriendsQA dev files with e5-small-v2,
// and writes the file it reproduces.
//
//	go run ./internal/research/cmd/statesize
//
// prints the heap loaded spaces take beside the cache's estimate, across
// sizes and modes (MeasureStates, which TestStateSizeEstimate in the root
// package also runs at small sizes), and
//
//	go run ./internal/research/cmd/profilecost [-locomo PATH] [-turns N] [-only RUN]
//
// what profile maintenance costs at ingest (calls, tokens and time per
// turn, with and without profile facts, and offline). Both were env-gated
// tests of the root package before. The exploratory cross-validations of
// issue 15 (feature variants, window texts, sweeps, misses, ensembles;
// BENCHMARKS.md has their results) read the root package's internals and
// were removed from the root with issue 31; they are in the history before
// that commit.
//
// Package shapes (internal/research/shapes) is the loop of issue 32:
// offline retrieval on every conversation shape, with an on-disk vector
// cache, the stress generators (cmd/shapegen) and the fit of the
// user–assistant weights (cmd/shapes -fit; see its package doc).
package research
