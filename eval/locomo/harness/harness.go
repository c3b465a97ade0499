// Package harness runs memory systems on the LoCoMo benchmark and reports
// every metric the memory papers use, computed one way for all systems.
//
// A run builds memory per (system, sample), asks the selected questions,
// and scores each answer three ways (official LoCoMo F1; A-Mem/Mem0 F1 and
// BLEU-1, with category 5 scored against the adversarial answer and flagged
// as trap-scored), optionally with an LLM judge (category 5 excluded), plus
// evidence precision and recall at the K actually passed to the answer
// model and at every retrieval stage, LLM calls and tokens by role and
// operation, wall time and critical-path rounds.
//
// Runs are resumable: every answered question is appended to
// questions.jsonl and every built session to builds.jsonl in the run
// directory, and a rerun skips what is recorded. Built memories are kept
// in memory only and are rebuilt on a rerun; with the LLM response cache
// this costs no model calls, the embedder's vectors are on disk
// (embed/diskcache, in the run directory's VectorsDir or
// Config.VectorCache) so it embeds no text twice, and construction is
// counted once, from the first build of each session. The run directory
// also holds config.json (configuration, models, prompt versions, git
// commit, data SHA-256), report.md, results.json and SVG charts.
//
// This package lives below eval/locomo rather than in it because it
// imports the engine, whose own tests import eval/locomo.
package harness

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/eval/locomo"
	"github.com/higmem/higmem/llm"
)

// Sentinel errors.
var (
	// ErrUnknownSystem is returned for a system name not in SystemNames.
	ErrUnknownSystem = errors.New("harness: unknown system")
	// ErrConfigMismatch means the run directory holds a run with a
	// different configuration.
	ErrConfigMismatch = errors.New("harness: run directory holds a different run")
	// ErrCorrupt means a results file is damaged beyond its last line.
	ErrCorrupt = errors.New("harness: corrupt results file")
)

// Env is what systems are built from. Models are nil when not configured.
type Env struct {
	// Memory does memory work (construction and retrieval guidance).
	Memory llm.Model
	// Answer writes answers (nil: Memory).
	Answer llm.Model
	// Embedder embeds turns (nil: BM25 only).
	Embedder embed.Embedder
	// K is the number of turns of the top-k systems (hybrid-topk,
	// dense-topk, bm25-topk; default 10).
	K int
	// AMemK is A-Mem's retrieval top-k (default 10, as the reproduction's
	// CLI).
	AMemK int
}

func (e Env) answerModel() llm.Model {
	if e.Answer != nil {
		return e.Answer
	}
	return e.Memory
}

// Query is what a system is asked. The category and gold answer are never
// passed, so no system can choose its prompt by them.
type Query struct {
	Question string
	// Gold is the gold evidence. Only the oracle system reads it.
	Gold []string
}

// Outcome is a system's reply to one question.
type Outcome struct {
	// Answer is the written answer.
	Answer string
	// Answered is false when the system wrote no answer by design
	// (offline retrieval, or no answer model configured).
	Answered bool
	// Evidence holds the ids of the turns passed to the answer model (or
	// that would be passed, when there is none), in the order shown.
	Evidence []string
	// Stages holds the candidate ids of each retrieval stage, in order.
	// The "events" stage holds event ids and is not scored.
	Stages []higmem.Stage
	// ContextTokens estimates the tokens of the evidence context shown to
	// the answer model (about 4 bytes per token).
	ContextTokens int
	// Calls records every LLM call made for the question.
	Calls []higmem.Call
	// Rounds is the number of sequential LLM rounds on the critical path.
	Rounds int
	// Notes are the engine's trace notes (fallbacks, budget cuts).
	Notes []string
}

// SessionBuild reports the construction of one session.
type SessionBuild struct {
	Session int
	Turns   int
	Calls   []higmem.Call
	Wall    time.Duration
	// Warnings are the engine's AddResult.Warnings.
	Warnings []string
}

// System is a memory system under evaluation.
type System interface {
	// Name is the system's name as given to --systems.
	Name() string
	// NeedsMemoryModel reports whether building memory needs an LLM;
	// such systems are skipped when none is configured.
	NeedsMemoryModel() bool
	// Build builds memory for a sample, calling done after each session.
	Build(ctx context.Context, env *Env, s *locomo.Sample, done func(SessionBuild)) (Instance, error)
}

// Instance is a system's memory of one sample.
type Instance interface {
	// Ask answers (or, without an answer model, retrieves for) one
	// question. It must be safe for concurrent use.
	Ask(ctx context.Context, q Query) (*Outcome, error)
	// Close releases the memory.
	Close() error
}

// systemInfo describes a registered system.
type systemInfo struct {
	name, desc string
	make       func() System
}

var registry = []systemInfo{
	{"higmem", "higmem default mode: one call per batch annotates the turns, assigns them to events and writes those events' records; per question one select call over the candidate events and search hits, then the answer",
		func() System { return &engineSystem{name: "higmem", mode: higmem.ModeDefault} }},
	{"higmem-paper", "higmem paper mode as the HiGMem reference's paper command runs (--ablation-no-profile --ablation-event-metadata-only --ablation-no-link --k_event 10): per turn annotation, affiliation and event updates; per question query rewrite, one prediction call per candidate event, chunked filter, answer; links off (docs/PAPER.md lists what still differs)",
		func() System { return &engineSystem{name: "higmem-paper", mode: higmem.ModePaper} }},
	{"offline", "higmem offline mode: no LLM; rule-based annotation, similarity-based events, scored turn selection; no written answer",
		func() System { return &engineSystem{name: "offline", mode: higmem.ModeOffline, retrieveOnly: true} }},
	{"full-context", "every turn, chronologically, to the answer model",
		func() System { return &fullContext{} }},
	{"oracle", "only the gold evidence turns, chronologically, to the answer model",
		func() System { return &oracle{} }},
	{"hybrid-topk", "hybrid top-k turns by the question (offline mode's relevance: BM25 (length normalisation b 0.3) over its best + 0.5 × the cosine of the turn's window vector, centred on the space's mean and scaled to a best of 1; BM25 only without an embedder), chronologically, to the answer model (k from --k); formerly vector-topk",
		func() System {
			return &engineSystem{name: "hybrid-topk", mode: higmem.ModeOffline, noEvents: true, topK: true}
		}},
	{"dense-topk", "dense-only top-k turns by cosine similarity of the embedder's vectors (turn embedded as the engine embeds it), chronologically, to the answer model (k from --k; needs an embedder)",
		func() System { return &denseTopK{} }},
	{"bm25-topk", "BM25-only top-k turns by the question (the engine's turn index, no embedder), chronologically, to the answer model (k from --k)",
		func() System {
			return &engineSystem{name: "bm25-topk", mode: higmem.ModeOffline, noEvents: true, topK: true, noEmbed: true}
		}},
	{"amem", "A-Mem (reproduction code 7f716dc): note analysis and evolution per turn, keyword query, top-k (--amem-k) plus linked notes, answer; indexed with the run's embedder, or BM25 without one",
		func() System { return &amemSystem{} }},
	{"no-event", "ablation of higmem: no event layer (turn annotation, turn search and filter only)",
		func() System {
			return &engineSystem{name: "no-event", mode: higmem.ModeDefault, noEvents: true}
		}},
	{"no-filter", "ablation of higmem: no relevance filter (every searched and predicted turn is evidence, up to the token budget)",
		func() System {
			return &engineSystem{name: "no-filter", mode: higmem.ModeDefault, noFilter: true}
		}},
	{"no-temporal", "ablation of higmem: no temporal route (no time-aware question analysis, timeline candidates or resolved dates in the evidence)",
		func() System {
			return &engineSystem{name: "no-temporal", mode: higmem.ModeDefault, noTemporal: true}
		}},
	{"offline-no-temporal", "ablation of offline: no temporal route (no date cues in scoring, no resolved dates)",
		func() System {
			return &engineSystem{name: "offline-no-temporal", mode: higmem.ModeOffline, retrieveOnly: true, noTemporal: true}
		}},
	{"offline-no-profiles", "ablation of offline: no profile evidence (questions about a person's home, job, pets... get no turns from their profile)",
		func() System {
			return &engineSystem{name: "offline-no-profiles", mode: higmem.ModeOffline, retrieveOnly: true, noProfiles: true}
		}},
	{"offline-no-stage", "ablation of offline: no learned second stage (the best turns in the order of the context score; the stage applies only with an embedder it was fitted for, e5-small-v2)",
		func() System {
			return &engineSystem{name: "offline-no-stage", mode: higmem.ModeOffline, retrieveOnly: true, noStage: true}
		}},
	{"paper-no-event", "ablation of higmem-paper: no event layer (one annotation call per turn; turn search, filter, answer)",
		func() System {
			return &engineSystem{name: "paper-no-event", mode: higmem.ModePaper, noEvents: true}
		}},
	{"paper-no-filter", "ablation of higmem-paper: no relevance filter",
		func() System {
			return &engineSystem{name: "paper-no-filter", mode: higmem.ModePaper, noFilter: true}
		}},
	{"paper-links", "variant of higmem-paper with A-Mem style links on (Options.PaperLinks, the reference without --ablation-no-link, as its developers' logged run): the annotation call sees the recent turns and proposes links, retrieval adds linked turns before the filter",
		func() System { return &engineSystem{name: "paper-links", mode: higmem.ModePaper, links: true} }},
}

// aliases maps former system names to current ones.
// Links exist only in paper mode (Options.PaperLinks): "no-links" was
// default mode without them, which is default mode; "paper-no-links" is
// the paper setting itself now that higmem-paper runs with links off.
var aliases = map[string]string{"vector-topk": "hybrid-topk", "no-links": "higmem", "paper-no-links": "higmem-paper"}

// SystemNames returns the names of every system, in report order.
func SystemNames() []string {
	out := make([]string, len(registry))
	for i, s := range registry {
		out[i] = s.name
	}
	return out
}

// Describe returns a one-line description of a system ("" if unknown).
func Describe(name string) string {
	if a, ok := aliases[name]; ok {
		name = a
	}
	for _, s := range registry {
		if s.name == name {
			return s.desc
		}
	}
	return ""
}

// NewSystem returns the named system (former names are accepted: see
// aliases).
func NewSystem(name string) (System, error) {
	if a, ok := aliases[name]; ok {
		name = a
	}
	for _, s := range registry {
		if s.name == name {
			return s.make(), nil
		}
	}
	return nil, fmt.Errorf("%w %q (known: %v)", ErrUnknownSystem, name, SystemNames())
}
