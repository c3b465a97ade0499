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
	// assigned to events in batches (about one LLM call per several turns),
	// and a question takes two sequential LLM rounds (turn selection and
	// filtering in parallel, then the answer).
	ModeDefault Mode = "default"
	// ModePaper reproduces the HiGMem reference: per turn an annotation
	// call, an affiliation call and one update call per joined event; per
	// question a query rewrite, per-event turn prediction, a chunked
	// relevance filter and the answer (four sequential rounds).
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
	// Store persists memory. Nil means an in-memory store that is lost on
	// Close. The CLI wires store/sqlite.
	Store store.Store
	// Embedder embeds turns and events for dense retrieval. Nil means
	// lexical (BM25) retrieval only.
	Embedder embed.Embedder
	// Memory is the model for memory work: annotation, event building and
	// retrieval guidance. Nil selects offline mode under ModeAuto.
	Memory llm.Model
	// Answer is the model that writes answers. Nil means Memory.
	Answer llm.Model
	// Mode selects the pipeline; see Mode.
	Mode Mode
	// Logger receives diagnostics. Nil discards them.
	Logger *slog.Logger

	// Concurrency bounds parallel LLM calls within one operation
	// (default 16, enough for one retrieval round of KEvent predictions
	// plus the filter chunks to run at once).
	Concurrency int
	// KTurn is how many turns lexical/dense search contributes per
	// question (default 10).
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
	// (default 20).
	BatchSize int
	// FilterChunk is how many turns one relevance-filter call judges
	// (default 10).
	FilterChunk int
	// PredictChunk caps the member turns shown in one per-event prediction
	// call (default 40). Paper mode shows a larger event in several calls;
	// default mode shows its PredictChunk members most similar to the
	// question.
	PredictChunk int
	// Links turns on A-Mem style links between turns: annotation sees the
	// recent window and proposes links, and retrieval adds linked turns.
	Links bool
	// NoEvents is an ablation: no event layer. Construction only annotates
	// turns (paper mode: one call per turn) and retrieval uses turn search
	// alone.
	NoEvents bool
	// NoFilter is an ablation: retrieval skips the relevance filter, so
	// every searched and predicted turn becomes evidence (up to the token
	// budget).
	NoFilter bool
	// NoTemporal is an ablation: no temporal route. Questions are never
	// treated as temporal (no timeline candidates, no date-aware scoring,
	// no temporal answer instruction) and evidence carries no resolved
	// dates.
	NoTemporal bool
	// EvidenceTokens is the token budget of the evidence passed to the
	// answer model (about 4 characters per token). The default is 2000,
	// except in paper mode, which like the reference passes everything the
	// filter kept.
	EvidenceTokens int
	// Location is used for times given without a zone (default UTC).
	Location *time.Location
	// Now returns the current time (default time.Now); set it in tests.
	Now func() time.Time
}

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
	def(&o.BatchSize, 20)
	def(&o.FilterChunk, 10)
	def(&o.PredictChunk, 40)

	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Location == nil {
		o.Location = time.UTC
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Answer == nil {
		o.Answer = o.Memory
	}
	if o.Mode == ModeAuto {
		if o.Memory != nil {
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
