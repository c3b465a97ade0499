// Package shapes is the research loop of issue 32: offline retrieval on
// conversations of every shape (short alternating turns, user–assistant
// chats with long replies, bursts of short messages).
//
// cmd/shapes loads LoCoMo-format dev files into the engine (offline mode,
// e5-small-v2), captures the features offline retrieval scores for every
// question (internal/offline's probe), and replays internal/offline's
// scorer on them under candidate weights, next to the plain top-k systems
// (dense: the turn vector's cosine; bm25: the engine's turn index;
// hybrid: offline mode's relevance, as the harness's hybrid-topk) cut to
// 4, 6, 8, 10 and, per question, to the size of offline's selection
// ("@sameK", the floor of issue 32). Vectors are cached on disk
// (embed/diskcache under -cache, default /tmp/shapes-cache: one file per
// model, keyed by the SHA-256 of model id, prompt kind and text), so a
// rerun embeds nothing;
// it embeds with e5-small-v2 in int8 by default (cosine 0.999 with
// float32's vectors, 1.8× as fast on a shared machine; -int8=false for
// float32), questions with EmbedQuery ("query: "), texts with Embed
// ("passage: "), and with -chunks the passages of long turns as the
// engine cuts them (internal/passage.Split, about 90 words; the engine's
// own passage vectors, so the cache holds them once the engine made
// them). Offline's selection is replayed with the rule of the engine that
// always keeps offline.Selection.Top, so the replay of the shipped weights
// equals the engine's evidence (up to the budget and profile turns).
//
// The user–assistant weights of internal/offline (offline.Assistant, the
// constants ua* in tuning.go) are reproduced by two commands. The first
// fits them as they were fitted, on the replay of the time:
//
//	go run ./internal/research/shapes/cmd/shapes -fit -chunks=false -keep-top=none -pin PassageDense,PassageLex \
//	    -sets 'realmem=../shared/data/realmem_dev.json@-1$,gen-ua=/tmp/shapes-data/gen-ua.json,gen-burst=/tmp/shapes-data/gen-burst.json'
//
// which fits them by coordinate ascent from the base weights and five
// seeded random starts (Fit: the sets' mean recall, each set held to mean
// K ≤ MaxMeanK and to its best plain top-k at the same K), leave-one-set-out
// over the sets whose shape adapts, reports each held-out set, then fits
// on all of them; its last "fitted on all" line is every ua* constant but
// uaPassageDense. -keep-top=none replays the selection as the first K
// ranked units, as the replay did then (before offline.Selection.Top:
// -keep-top=engine, the default, is the engine's rule; plain keeps the
// most relevant unit without weighing roles); -pin holds the passage
// levers at 0 and out of the grid and of the random starts, as they did
// not exist then. The second takes uaPassageDense's step from those
// weights, with the replay that equals the engine:
//
//	go run ./internal/research/shapes/cmd/shapes -sweep PassageDense -chunks=false \
//	    -sets 'realmem=../shared/data/realmem_dev.json@-1$,gen-ua=/tmp/shapes-data/gen-ua.json'
//
// (Sweep: each grid value of one weight from the shipped weights, each
// set's objective and their mean; 0.75 is best). A full refit with
// today's replay (-fit without -keep-top and -pin) lowers RealMem's
// held-out "-2" samples and is not shipped (tuning.go, BENCHMARKS.md).
// "@-1$" keeps RealMem's samples whose id ends in -1 (the ones measured
// in BENCHMARKS.md).
// The stress sets are written by cmd/shapegen:
//
//	go run ./internal/research/shapes/cmd/shapegen -kind ua -convs 1 -out /tmp/shapes-data/gen-ua.json
//	go run ./internal/research/shapes/cmd/shapegen -kind burst -convs 1 -out /tmp/shapes-data/gen-burst.json
//
// (from the first LoCoMo dev conversation: GenUA, GenBurst). Data is
// written under /tmp/shapes-data and never committed.
package shapes
