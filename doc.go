// Package higmem is a long-term memory engine for LLM agents, built on the
// HiGMem design (hierarchical Turn/Event memory with LLM-guided retrieval).
//
// Agents forget. Dumping whole histories into prompts is costly and buries
// facts in the middle; plain top-k vector search returns what is similar,
// not what is needed. higmem stores raw turns, groups them into events with
// summaries, and at question time selects which turns are worth reading, so
// that the answer model sees a handful of turns instead of a hundred.
//
// # Quick start
//
//	m, err := higmem.Open(ctx, higmem.Options{}) // in memory, offline
//	if err != nil { ... }
//	defer m.Close()
//	sp := higmem.Space{UserID: "alice"}
//	_, err = m.Add(ctx, sp, []higmem.TurnInput{
//		{Speaker: "alice", Text: "I adopted a greyhound called Biscuit.", Time: "2024-04-06T10:02:00Z"},
//	})
//	res, err := m.Retrieve(ctx, sp, "What is my dog called?", higmem.RetrieveOptions{})
//	for _, e := range res.Evidence { fmt.Println(e.Turn.ID, e.Turn.Text) }
//
// The zero Options give an in-memory store, lexical (BM25) retrieval and
// offline mode. A real deployment wires a persistent store (store/sqlite),
// an embedder (embed/minilm runs all-MiniLM-L6-v2, or e5-small-v2, in pure
// Go) and, for the LLM-guided pipeline, a model (llm/openai talks to any
// OpenAI-compatible endpoint). The higmem command (cmd/higmem) does that wiring from flags and
// environment variables.
//
// # Concepts
//
// A Space is one (user, agent) pair; nothing ever crosses spaces.
//
// A Turn is one utterance as it was said: id, speaker, text, attachments,
// session, and two clocks — OccurredAt (when it was said, parsed from the
// caller's time string, which is kept verbatim) and RecordedAt (when it was
// stored). Turns are immutable: re-adding an identical turn is a no-op and a
// different turn under the same id is rejected with ErrConflict.
//
// An Annotation is what was derived from a turn (keywords, tags, entities,
// a context sentence, time expressions resolved to dates). It is kept apart
// from the turn so that a bad model never rewrites what was said.
//
// An Event groups turns about one happening or topic: title, 2–3 sentence
// summary, a fact sheet of dated facts with their evidence turn, keywords,
// member turns in order and their time span. Every change to an event or an
// annotation is appended to a history (see History).
//
// A Link relates two turns (A-Mem style); paper mode makes and follows
// them when Options.PaperLinks is set.
//
// A Profile is what the turns say about one person (see Memory.Profiles):
// home, job, employer, pets, partner, favourites, plans, each value with
// its evidence turns, the time it held on both clocks and what stated it.
// A newer contradicting statement closes the older value without deleting
// it. Profiles are read by rules from the live turns in every mode, and
// merged with the profile records a model stated (default mode: in the
// build call of each batch; paper mode with Options.PaperProfiles: the
// reference's profile layer); deleting a turn removes what it said.
//
// # Modes
//
// ModePaper reproduces the reference HiGMem pipeline in its paper setting:
// per turn an annotation call, an affiliation call against the top-k
// similar events (shown by their current summaries), and an update call
// per joined event; per question a query rewrite, one turn-prediction call
// per candidate event (in parallel), a chunked relevance filter (in
// parallel) and the answer — four sequential LLM rounds. docs/PAPER.md
// lists what still differs from the reference, and the option of each.
//
// ModeDefault keeps the same layers but is cheaper and sturdier: one call
// per batch of turns (up to BatchSize, within a session) annotates them,
// assigns them to events (only candidate ids are accepted) and writes the
// records of the events they joined, and a question needs two calls in two
// rounds: one select call, shown the candidate events each with its member
// turns closest to the question and the search hits no event showed,
// picks the evidence; then the answer.
//
// In every LLM mode each reply passes a semantic check before anything of
// it is stored (junk titles, summaries copied from the prompt, ids the
// prompt did not show, lists over their caps): a reply is used repaired,
// or rejected and replaced by the documented fallback, which AddResult's
// Warnings and Trace's Notes say, and the call's Check records.
//
// ModeOffline needs no LLM at all: rule-based annotation, similarity-based
// event segmentation, and a scored selection of turns (hybrid search,
// support from matching events, neighbourhood of strong hits, adaptive K;
// with e5-small-v2, a learned second stage re-orders the best turns, see
// Ablations.NoStage).
// Ask then returns evidence without a written answer.
//
// # Retrieval and evidence
//
// Retrieve returns the selected turns in chronological order (by
// OccurredAt, not by the raw time string), each with its date, the stages
// that proposed it and its events, plus the rendered context an answer
// model sees ("[id] date | speaker: text" per line) and a Trace with the
// candidate ids of every stage and every LLM call (role, operation, round,
// tokens, latency). Evidence is capped by a token budget; when the budget
// forces a cut, the least relevant turns go first.
//
// # Robustness
//
// Model replies are parsed tolerantly (code fences, prose, trailing commas,
// truncation) and validated against the prompt's schema; an unusable reply
// is re-asked once with a correction, and then replaced by a documented
// fallback (rule-based annotation, a new event, an unchanged summary, an
// empty selection) that is recorded in AddResult.Warnings or Trace.Notes.
// Errors from the endpoint itself (unreachable, rate limited after retries)
// abort the operation instead; the batch in progress is not stored, and the
// same Add can simply be repeated because stored turns are skipped.
//
// # Concurrency
//
// A Memory is safe for concurrent use. Reads run in parallel; writers of one
// space in one Memory wait for each other. LLM calls within one operation
// run in parallel up to Options.Concurrency, and the first failure cancels
// the rest.
//
// Several Memories, in one process or many, may share one store (one
// SQLite file, one PostgreSQL schema). The store decides: every batch
// commits in one transaction under the space's write lock (store.Tx.Lock),
// which hands out Seq, generated turn ids and event ids, and a batch built
// on a state another writer has since changed is built again (offline
// construction inside the transaction; model-built batches outside it, then
// by offline construction after a few tries), never written over it. Every
// read checks the space's version (one indexed query) and, when another
// writer committed, catches the loaded space up in place from the store's
// journal (store.Reader.Changes: only what was written since), so a read
// sees every write committed before it started. Loaded spaces are kept
// within Options.CacheBytes. See docs/CONCURRENCY.md.
//
// # Errors
//
// Errors wrap the sentinels in errors.go (ErrInvalidInput, ErrConflict,
// ErrNotFound, ErrClosed, ErrNoLLM) and those of the llm and store packages;
// test with errors.Is.
package higmem
