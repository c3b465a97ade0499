package higmem

import (
	"errors"
	"fmt"
	"strings"

	"github.com/higmem/higmem/store"
)

// Sentinel errors. Functions wrap them with context; test with errors.Is.
var (
	// ErrClosed is returned by every method after Close.
	ErrClosed = errors.New("higmem: memory is closed")
	// ErrInvalidInput means a turn, question or option was rejected before
	// anything was stored (empty text, bad id, unknown mode...).
	ErrInvalidInput = errors.New("higmem: invalid input")
	// ErrTooLarge means an input is over one of the caps (a turn's text, the
	// turns of one add, a question, a top-k; see Options.MaxTurnBytes and
	// docs/LIMITS.md). Errors wrapping it wrap ErrInvalidInput too, and
	// name the limit.
	ErrTooLarge = errors.New("higmem: input too large")
	// ErrNotFound means the turn or event does not exist in the space. It
	// is the same value as store.ErrNotFound.
	ErrNotFound = store.ErrNotFound
	// ErrConflict means a turn id is already used by a turn with different
	// content. Turns are immutable; re-adding an identical turn is a no-op.
	ErrConflict = store.ErrConflict
	// ErrNoLLM means the operation needs a language model and none is
	// configured (for example writing an answer in offline mode).
	ErrNoLLM = errors.New("higmem: no language model configured")
)

// wrapf wraps err with what failed ("higmem: " and format), as
// fmt.Errorf("higmem: "+format+": %w", args..., err) would, but names the
// package once: the message of an error of the package's own loses its
// "higmem: " when wrapped.
func wrapf(err error, format string, args ...any) error {
	return &wrapped{msg: "higmem: " + fmt.Sprintf(format, args...), err: err}
}

// wrapped is an error wrapped by wrapf.
type wrapped struct {
	msg string
	err error
}

func (e *wrapped) Error() string { return e.msg + ": " + strings.TrimPrefix(e.err.Error(), "higmem: ") }

func (e *wrapped) Unwrap() error { return e.err }
