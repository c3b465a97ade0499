package higmem

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/store"
)

// Mode selects how memory is built and searched.
type Mode string

// Modes. The zero value, ModeAuto, picks ModeDefault when a memory model is
// configured and ModeOffline otherwise.
const (
	// ModeAuto chooses ModeDefault with an LLM and ModeOffline without.
	ModeAuto Mode = ""
	// ModeDefault is higmem's own pipeline: turns are annotated and
	// assigned to events, and the events written, in batches (one LLM call
	// per batch of up to BatchSize turns of a session), and a question
	// takes two sequential LLM calls (one selection over the candidate
	// events and search hits, then the answer).
	ModeDefault Mode = "default"
	// ModePaper reproduces the HiGMem reference in its paper setting: per
	// turn an annotation call, an affiliation call and one update call per
	// joined event; per question a query rewrite, one turn-prediction call
	// per candidate event, a chunked relevance filter and the answer (four
	// sequential rounds). docs/PAPER.md lists what still differs.
	ModePaper Mode = "paper"
	// ModeOffline uses no LLM: rule-based annotation, similarity-based
	// event segmentation and a scored turn selection. Ask returns evidence
	// without a written answer.
	ModeOffline Mode = "offline"
)

// ParseMode parses a mode name ("", "auto", "default", "paper", "offline").
func ParseMode(s string) (Mode, error) {
	switch s {
	case "", "auto":
		return ModeAuto, nil
	case string(ModeDefault), string(ModePaper), string(ModeOffline):
		return Mode(s), nil
	}
	return "", fmt.Errorf("%w: unknown mode %q (want auto, default, paper or offline)", ErrInvalidInput, s)
}

// Options configures a Memory. The zero value works: an in-memory store,
// BM25-only retrieval and offline mode.
type Options struct {
	// Store persists memory. Nil means an in-memory store (store/memstore,
	// the one implementation the root package imports) that is lost on
	// Close. The CLI wires store/sqlite.
	Store store.Store
	// Embedder embeds turns and events for dense retrieval. Nil means
	// lexical (BM25) retrieval only.
	Embedder embed.Embedder
	// MemoryModel is the model for memory work: annotation, event building
	// and retrieval guidance. Nil selects offline mode under ModeAuto.
	MemoryModel llm.Model
	// AnswerModel is the model that writes answers. Nil means MemoryModel.
	AnswerModel llm.Model
	// Mode selects the pipeline; see Mode.
	Mode Mode
	// Logger receives diagnostics. Nil discards them.
	Logger *slog.Logger

	// Concurrency bounds parallel LLM calls within one operation
	// (default 16, enough for one retrieval round of KEvent predictions
	// plus the filter chunks to run at once).
	Concurrency int
	// KTurn is how many turns the turn search contributes per question
	// (default 10): in default mode the best offline scores, in paper
	// mode the best of hybrid search, in offline mode the most relevant
	// (recorded as the "search" stage).
	KTurn int
	// KEvent is how many events are candidates, both when a turn is
	// affiliated and when a question is answered (default 10).
	KEvent int
	// Window is how many recent turns are shown when annotating and
	// updating events (default 5).
	Window int
	// SmallEvent is the member count below which an event's summary is
	// rewritten on every update in paper mode (default 10).
	SmallEvent int
	// BatchSize caps the turns annotated together in default mode
	// (default 40: most sessions of a conversation are one batch, built
	// with one call that also writes the records of the events it
	// touched).
	BatchSize int
	// FilterChunk is how many turns one relevance-filter call judges in
	// paper mode (default 10); default mode's select call shows up to
	// that many timeline turns.
	FilterChunk int
	// PredictChunk caps the member turns shown in one per-event prediction
	// call of paper mode. Zero, the default, shows every member of an
	// event in one call, as the reference does (one call per candidate
	// event, docs/PAPER.md); a positive value shows a larger event in
	// several calls, bounding each prompt. Either way a prompt the model
	// refuses as too long for its context is asked again in halves.
	// Default mode's select call shows each candidate event's 10 members
	// most similar to the question.
	PredictChunk int
	// PaperLinks turns on A-Mem style links between turns in paper mode:
	// each turn's annotation call sees the recent window and proposes
	// links, and retrieval adds the linked turns before the relevance
	// filter. The other modes neither make nor follow links.
	PaperLinks bool
	// PaperProfiles turns on the reference's profile layer in paper mode:
	// when the main event a turn joins is not the previous turn's, one
	// call decides whose profile the previous event should update, and
	// one call per person chosen rewrites their profile summary (citing
	// turns) and states attribute values, stored as profile records and
	// merged with the rules' profiles (docs/PROFILES.md). Off by default,
	// as the reference's paper setting runs without profiles
	// (--ablation-no-profile). Other modes ignore it; default mode states
	// profile facts in its build call.
	PaperProfiles bool
	// EvidenceTokens is the token budget of the evidence passed to the
	// answer model (about 4 characters per token). The default is 2000,
	// except in paper mode, which like the reference passes everything the
	// filter kept.
	EvidenceTokens int
	// Location is used for times given without a zone (default UTC).
	Location *time.Location
	// CacheBytes bounds the memory of the spaces kept loaded (the heap their
	// turns, events, vectors and search indexes take, as estimated by the
	// engine with an allowance for fragmentation, see docs/CONCURRENCY.md).
	// When loaded spaces exceed it, the least recently used ones are
	// dropped and load again from the store on their next use. Zero means
	// DefaultCacheBytes; negative means no bound. The space in use is
	// never dropped, whatever its size.
	CacheBytes int64

	// MaxTurnBytes caps the text of one turn with its attachments'
	// captions, in bytes (default DefaultMaxTurnBytes, 64 KiB; negative:
	// no cap). Add and Import refuse a longer turn with ErrTooLarge.
	MaxTurnBytes int
	// MaxBatchTurns caps the turns of one Add (default
	// DefaultMaxBatchTurns; negative: no cap).
	MaxBatchTurns int
	// MaxQuestionBytes caps a question of Retrieve and Ask, in bytes
	// (default DefaultMaxQuestionBytes, 8 KiB; negative: no cap).
	MaxQuestionBytes int

	// Ablations switch parts of the pipeline off, for measurements.
	Ablations Ablations
}

// Ablations switch parts of the pipeline off to measure what each
// contributes (the evaluation's no-event, no-filter and no-temporal
// systems). The zero value switches nothing off, which is what every real
// deployment wants.
type Ablations struct {
	// NoEvents drops the event layer. Construction only annotates turns
	// (paper mode: one call per turn) and retrieval uses turn search
	// alone.
	NoEvents bool
	// NoFilter skips the relevance filter, so every searched and predicted
	// turn becomes evidence (up to the token budget).
	NoFilter bool
	// NoTemporal drops the temporal route. Questions are never treated as
	// temporal (no timeline candidates, no date-aware scoring, no temporal
	// answer instruction) and evidence carries no resolved dates.
	NoTemporal bool
	// NoProfiles stops retrieval (every mode) from adding the evidence of
	// profile attributes (the turns stating where a person lives, their
	// job...) to questions that ask about them, and default mode's build
	// call from stating profile facts. Profiles read by the rules stay
	// available (Memory.Profiles).
	NoProfiles bool
	// NoStage keeps offline retrieval's selection in the order of its
	// context score: the learned second stage, fitted for some embedders
	// (e5-small-v2), does not re-order the best turns.
	NoStage bool
	// NoPassages stops long turns from being indexed as passages
	// (passages.go): no passage vectors are made or read, turns are scored
	// and shown whole.
	NoPassages bool
}

// limits are the space sizes at which the engine takes its speed paths.
// They are not options: the paths give the same results as the plain ones
// (tests prove it by lowering these, see Memory.limits), only faster on a
// large space.
type limits struct {
	// quantizeRows is the size from which a vector matrix keeps an int8
	// copy, so that searches scan estimates (a quarter of the memory
	// traffic) and compute exact cosines only for the rows that could rank
	// (see rank.Searcher). Below it a full exact scan is as fast.
	quantizeRows int
	// turnInt8 keeps an int8 copy of the turn vectors too (from
	// quantizeRows rows). Only paper mode's hybrid search scans them;
	// offline and default mode rank by the window vectors (window.go), so
	// without it a loaded space takes a quarter less heap for its turn
	// vectors and opens without quantizing them.
	turnInt8 bool
	// eagerAnnotations is the size below which a space reads its
	// annotations when it loads; a larger one reads their time
	// expressions alone when the store can (readTimeRefs), else none (see
	// ensureAnnotations).
	eagerAnnotations int
	// eagerTurnVectors is the size below which a space of an offline-mode
	// memory reads its turn and event vectors when it loads; a larger one
	// reads them on first need (see ensureTurnVectors and
	// ensureEventVectors), as offline retrieval reads only the window
	// vectors. Spaces of the other modes, whose every question reads them,
	// always read them when they load.
	eagerTurnVectors int
	// offlineFastRows is the size from which an unfiltered offline
	// question is scored from estimated cosines (offlineFast) instead of a
	// full scan. Its centred cosine then uses the mean from the matrix's
	// sum of rows (vec.Matrix.MeanDot), which equals the mean of the exact
	// cosines up to rounding (about 1e-12): the scan it saves is what
	// bounds retrieval time on a large space, as every exact cosine must be
	// read to sum them.
	offlineFastRows int
	// offlineChunk is the fewest turns (or speaker runs) each core takes
	// in offlineFast's passes over the space; 0 is 16384. Tests lower it
	// so that small spaces are split too.
	offlineChunk int
	// noOfflineFast turns offlineFast off (tests compare it with the full
	// computation).
	noOfflineFast bool
}

// quantizeFor returns the size from which a matrix of vectors of kind
// keeps an int8 copy (vec.Matrix.QuantizeFrom; 0 never).
func (l limits) quantizeFor(kind store.VectorKind) int {
	if kind == store.VectorTurn && !l.turnInt8 {
		return 0
	}
	return l.quantizeRows
}

// defaultLimits returns the limits every Memory runs with.
func defaultLimits() limits {
	return limits{quantizeRows: 4096, eagerAnnotations: 20000, eagerTurnVectors: 20000, offlineFastRows: 32768}
}

// DefaultCacheBytes is the bound of Options.CacheBytes when it is zero:
// 512 MiB, about two spaces of 100,000 turns with MiniLM vectors, or
// hundreds of conversations.
const DefaultCacheBytes = 512 << 20

// unlimitedTokens stands for "no evidence budget".
const unlimitedTokens = 1 << 30

// DefaultOptions returns the options a zero Options resolves to.
func DefaultOptions() Options {
	var o Options
	o.setDefaults()
	return o
}

func (o *Options) setDefaults() {
	def := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	def(&o.Concurrency, 16)
	def(&o.KTurn, 10)
	def(&o.KEvent, 10)
	def(&o.Window, 5)
	def(&o.SmallEvent, 10)
	def(&o.BatchSize, 40)
	def(&o.FilterChunk, 10)
	o.MaxTurnBytes = capDefault(o.MaxTurnBytes, DefaultMaxTurnBytes)
	o.MaxBatchTurns = capDefault(o.MaxBatchTurns, DefaultMaxBatchTurns)
	o.MaxQuestionBytes = capDefault(o.MaxQuestionBytes, DefaultMaxQuestionBytes)

	if o.CacheBytes == 0 {
		o.CacheBytes = DefaultCacheBytes
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Location == nil {
		o.Location = time.UTC
	}
	if o.AnswerModel == nil {
		o.AnswerModel = o.MemoryModel
	}
	if o.Mode == ModeAuto {
		if o.MemoryModel != nil {
			o.Mode = ModeDefault
		} else {
			o.Mode = ModeOffline
		}
	}
	if o.EvidenceTokens <= 0 {
		o.EvidenceTokens = 2000
		if o.Mode == ModePaper {
			o.EvidenceTokens = unlimitedTokens // the reference caps nothing
		}
	}
}
