package higmem_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/llm/llmfake"
	"github.com/higmem/higmem/store/memstore"
)

// failingEmbedder fails every call after the first ok ones.
type failingEmbedder struct{ ok int }

func (e *failingEmbedder) Dim() int   { return 8 }
func (e *failingEmbedder) ID() string { return "failing" }

func (e *failingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if e.ok > 0 {
		e.ok--
		return hashing.New(8).Embed(ctx, texts)
	}
	return nil, errors.New("embedder down")
}

// failingModel fails every call.
type failingModel struct{}

func (failingModel) Complete(context.Context, llm.Request) (llm.Response, error) {
	return llm.Response{}, errors.New("model down")
}

// TestErrorsSayHigmemOnce checks that the errors the common failure paths
// return name the package once: an error wrapping another of the
// package's says "higmem:" at its start only, and still matches its
// sentinel.
func TestErrorsSayHigmemOnce(t *testing.T) {
	ctx := t.Context()
	sp := higmem.Space{UserID: "errs"}
	offline := open(t, higmem.Options{Mode: higmem.ModeOffline})
	if _, err := offline.Add(ctx, sp, []higmem.TurnInput{{ID: "a", Speaker: "Ann", Text: "I adopted a greyhound."}}); err != nil {
		t.Fatal(err)
	}
	embedFails := open(t, higmem.Options{Mode: higmem.ModeOffline, Embedder: &failingEmbedder{}})
	buildFails := open(t, higmem.Options{Mode: higmem.ModeDefault, MemoryModel: failingModel{}})
	askFails := open(t, higmem.Options{Mode: higmem.ModeDefault, MemoryModel: llmfake.NewScripted(), AnswerModel: failingModel{}})
	if _, err := askFails.Add(ctx, sp, []higmem.TurnInput{{ID: "a", Speaker: "Ann", Text: "I adopted a greyhound."}}); err != nil {
		t.Fatal(err)
	}
	// A second Memory on the stored space, whose embedder must embed it
	// again (another id) and fails.
	shared := memstore.New()
	w := open(t, higmem.Options{Mode: higmem.ModeOffline, Store: shared, Embedder: hashing.New(8)})
	if _, err := w.Add(ctx, sp, []higmem.TurnInput{{ID: "a", Speaker: "Ann", Text: "I adopted a greyhound."}}); err != nil {
		t.Fatal(err)
	}
	reembedFails := open(t, higmem.Options{Mode: higmem.ModeOffline, Store: shared, Embedder: &failingEmbedder{}})
	closed := open(t, higmem.Options{})
	closed.Close()
	for _, c := range []struct {
		name string
		want error // the sentinel the error wraps, nil for none
		call func() error
	}{
		{"add empty text", higmem.ErrInvalidInput, func() error {
			_, err := offline.Add(ctx, sp, []higmem.TurnInput{{Speaker: "Ann"}})
			return err
		}},
		{"add too large", higmem.ErrTooLarge, func() error {
			_, err := offline.Add(ctx, sp, []higmem.TurnInput{{Speaker: "Ann", Text: strings.Repeat("x", higmem.DefaultMaxTurnBytes+1)}})
			return err
		}},
		{"add conflict", higmem.ErrConflict, func() error {
			_, err := offline.Add(ctx, sp, []higmem.TurnInput{{ID: "a", Speaker: "Ann", Text: "Something else."}})
			return err
		}},
		{"add bad space", higmem.ErrInvalidInput, func() error {
			_, err := offline.Add(ctx, higmem.Space{}, []higmem.TurnInput{{Speaker: "Ann", Text: "hi"}})
			return err
		}},
		{"add embedder down", nil, func() error {
			_, err := embedFails.Add(ctx, sp, []higmem.TurnInput{{Speaker: "Ann", Text: "hi there"}})
			return err
		}},
		{"add model down", nil, func() error {
			_, err := buildFails.Add(ctx, sp, []higmem.TurnInput{{Speaker: "Ann", Text: "hi there"}})
			return err
		}},
		{"retrieve embedder down", nil, func() error {
			_, err := embedFails.Retrieve(ctx, sp, "what?", higmem.RetrieveOptions{})
			return err
		}},
		{"retrieve empty question", higmem.ErrInvalidInput, func() error {
			_, err := offline.Retrieve(ctx, sp, " ", higmem.RetrieveOptions{})
			return err
		}},
		{"retrieve question too large", higmem.ErrTooLarge, func() error {
			_, err := offline.Retrieve(ctx, sp, strings.Repeat("why ", higmem.DefaultMaxQuestionBytes), higmem.RetrieveOptions{})
			return err
		}},
		{"open without a model", higmem.ErrNoLLM, func() error {
			_, err := higmem.Open(ctx, higmem.Options{Mode: higmem.ModeDefault})
			return err
		}},
		{"load re-embedding fails", nil, func() error {
			_, err := reembedFails.Retrieve(ctx, sp, "Which dog?", higmem.RetrieveOptions{})
			return err
		}},
		{"ask model down", nil, func() error {
			_, err := askFails.Ask(ctx, sp, "Which dog?", higmem.RetrieveOptions{})
			return err
		}},
		{"get missing", higmem.ErrNotFound, func() error {
			_, err := offline.Get(ctx, sp, "nope")
			return err
		}},
		{"event missing", higmem.ErrNotFound, func() error {
			_, err := offline.Event(ctx, sp, "nope")
			return err
		}},
		{"profile missing", higmem.ErrNotFound, func() error {
			_, err := offline.Profile(ctx, sp, "Nobody", higmem.ProfileOptions{})
			return err
		}},
		{"delete missing", higmem.ErrNotFound, func() error { return offline.Delete(ctx, sp, "nope") }},
		{"import bad line", higmem.ErrInvalidInput, func() error {
			_, err := offline.Import(ctx, sp, strings.NewReader("{not json\n"))
			return err
		}},
		{"import unknown turn", higmem.ErrInvalidInput, func() error {
			_, err := offline.Import(ctx, sp, strings.NewReader(`{"kind":"header","version":2}`+"\n"+`{"kind":"annotation","annotation":{"turn_id":"zz"}}`+"\n"))
			return err
		}},
		{"closed", higmem.ErrClosed, func() error {
			_, err := closed.Retrieve(ctx, sp, "what?", higmem.RetrieveOptions{})
			return err
		}},
	} {
		err := c.call()
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if strings.Contains(err.Error(), "higmem: higmem:") || strings.Count(err.Error(), "higmem:") > 1 {
			t.Errorf("%s: %q names the package more than once", c.name, err)
		}
		if c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%s: %v does not wrap %v", c.name, err, c.want)
		}
	}
}
