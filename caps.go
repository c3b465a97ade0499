package higmem

import (
	"fmt"
	"math"
	"strings"
)

// Caps: the sizes past which input is refused (ErrTooLarge) or, for what
// reaches a model, cut with a visible marker (rules.Cut). docs/LIMITS.md
// lists them with the server's.
const (
	// DefaultMaxTurnBytes is Options.MaxTurnBytes when zero.
	DefaultMaxTurnBytes = 64 << 10
	// DefaultMaxBatchTurns is Options.MaxBatchTurns when zero.
	DefaultMaxBatchTurns = 10000
	// DefaultMaxQuestionBytes is Options.MaxQuestionBytes when zero.
	DefaultMaxQuestionBytes = 8 << 10
	// MaxK caps KTurn, KEvent and MaxEvidence, in Options and in
	// RetrieveOptions.
	MaxK = 10000
	// MaxIDLen caps a turn id, in bytes; the server holds user, agent,
	// session and event ids to it too.
	MaxIDLen = 256
	// maxPromptTurnBytes caps the text of one turn as a prompt shows it
	// (about 1,000 tokens); a longer one is cut with rules.Cut's marker.
	maxPromptTurnBytes = 4000
)

// capDefault resolves a cap option: zero is def, negative is no cap.
func capDefault(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return math.MaxInt
	}
	return v
}

// capError is an input over a cap: errors.Is finds both ErrTooLarge and
// ErrInvalidInput in it.
type capError struct{ msg string }

func (e *capError) Error() string { return "higmem: " + e.msg }

// Is reports whether target is ErrTooLarge or ErrInvalidInput.
func (e *capError) Is(target error) bool { return target == ErrTooLarge || target == ErrInvalidInput }

// tooLarge returns a capError.
func tooLarge(format string, args ...any) error {
	return &capError{msg: fmt.Sprintf(format, args...)}
}

// checkBatch refuses a batch of turns over the caps, naming the first
// offender and the limit, before anything is prepared or stored.
func (m *Memory) checkBatch(in []TurnInput) error {
	if len(in) > m.opts.MaxBatchTurns {
		return tooLarge("%d turns in one add, over the limit of %d: split the batch", len(in), m.opts.MaxBatchTurns)
	}
	for i, t := range in {
		n := len(t.Text)
		for _, a := range t.Attachments {
			n += len(a.Caption)
		}
		if n > m.opts.MaxTurnBytes {
			where := fmt.Sprintf("turn %d", i+1)
			if id := strings.TrimSpace(t.ID); id != "" && len(id) <= MaxIDLen {
				where += fmt.Sprintf(" (%q)", id)
			}
			return tooLarge("%s: text is %d bytes, over the limit of %d bytes per turn", where, n, m.opts.MaxTurnBytes)
		}
	}
	return nil
}

// checkQuestion refuses a question over the cap and retrieval knobs over
// MaxK.
func (m *Memory) checkQuestion(question string, ro RetrieveOptions) error {
	if len(question) > m.opts.MaxQuestionBytes {
		return tooLarge("question is %d bytes, over the limit of %d", len(question), m.opts.MaxQuestionBytes)
	}
	for _, k := range []struct {
		name string
		v    int
	}{{"k_turn", ro.KTurn}, {"k_event", ro.KEvent}, {"max_evidence", ro.MaxEvidence}} {
		if k.v > MaxK {
			return tooLarge("%s is %d, over the limit of %d", k.name, k.v, MaxK)
		}
	}
	return nil
}
