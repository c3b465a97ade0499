package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/embed/minilm"
	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/llm/cache"
	"github.com/higmem/higmem/llm/openai"
	"github.com/higmem/higmem/store"
)

// backends are the pieces a Memory is built from, opened once per command.
type backends struct {
	Store    store.Store
	Embedder embed.Embedder // nil: BM25 only
	// Memory, Answer and Judge are the role models (nil when no endpoint
	// is configured), each wrapped by Meter and, unless disabled, a
	// response cache kept in the database.
	Memory, Answer, Judge llm.Model
	Meter                 *llm.Meter
	Caches                []*cache.Cache
}

// backends opens the store, the embedder and the LLM clients named by the
// flags and environment.
func (a *app) backends(ctx context.Context) (*backends, error) {
	for _, p := range a.env.Problems {
		a.warnOnce("env:"+p, "%s", p)
	}
	db, err := openDatabase(ctx, a.db)
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, db.Store.Close)
	b := &backends{Store: db.Store, Meter: llm.NewMeter(nil)}
	if b.Embedder, err = a.openEmbedder(); err != nil {
		return nil, err
	}
	var backend cache.Backend
	if !a.noCache {
		if backend, err = db.openCache(ctx); err != nil {
			return nil, err
		}
	}
	for _, role := range []llm.Role{llm.RoleMemory, llm.RoleAnswer, llm.RoleJudge} {
		ep := a.env.Role(role)
		if !ep.Configured() {
			continue
		}
		client, err := openai.New(openai.Options{
			BaseURL:        ep.BaseURL,
			APIKey:         ep.APIKey,
			Model:          ep.Model,
			MaxConcurrency: a.env.LLMConcurrency,
			Logger:         a.log,
		})
		if err != nil {
			return nil, fmt.Errorf("%s model: %w", role, err)
		}
		var m llm.Model = client
		if a.env.LLMTimeout > 0 {
			m = withTimeout(m, a.env.LLMTimeout)
		}
		if backend != nil {
			c := cache.New(m, backend, cache.Options{Model: ep.Model, Logger: a.log})
			b.Caches = append(b.Caches, c)
			m = c
		}
		m = b.Meter.Wrap(role, ep.Model, m)
		switch role {
		case llm.RoleMemory:
			b.Memory = m
		case llm.RoleAnswer:
			b.Answer = m
		case llm.RoleJudge:
			b.Judge = m
		}
	}
	return b, nil
}

// withTimeout bounds every call of m by d.
func withTimeout(m llm.Model, d time.Duration) llm.Model {
	return llm.ModelFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		ctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		return m.Complete(ctx, req)
	})
}

// openEmbedder returns the embedder the --embedder flag names. "auto" uses
// MiniLM when its files are present and otherwise runs on BM25, saying so
// once.
func (a *app) openEmbedder() (embed.Embedder, error) {
	switch a.embedder {
	case "none":
		return nil, nil
	case "hashing":
		return hashing.New(0), nil
	case "auto", "minilm":
		m, err := minilm.Load(minilm.ModelDir(a.modelsDir), minilm.Options{})
		if err == nil {
			return m, nil
		}
		if a.embedder == "auto" && errors.Is(err, embed.ErrNoModel) {
			a.warnOnce("embed", "embedding model not found in %s (run `higmem models fetch`); retrieval runs on BM25 only", a.modelsDir)
			return nil, nil
		}
		return nil, err
	}
	return nil, fmt.Errorf("unknown --embedder %q (want auto, minilm, hashing or none)", a.embedder)
}

// embedderName names the embedder a memory uses, for messages.
func (a *app) embedderName(m *higmem.Memory) string {
	if e := m.Options().Embedder; e != nil {
		return e.ID()
	}
	return "none (BM25 only)"
}

// open opens the memory the flags describe.
func (a *app) open(ctx context.Context) (*higmem.Memory, error) {
	mode, err := higmem.ParseMode(a.mode)
	if err != nil {
		return nil, err
	}
	b, err := a.backends(ctx)
	if err != nil {
		return nil, err
	}
	if b.Memory == nil && mode != higmem.ModeAuto && mode != higmem.ModeOffline {
		return nil, fmt.Errorf("mode %s needs an LLM endpoint: set HIGMEM_LLM_BASE_URL and HIGMEM_MEMORY_MODEL (or OPENAI_API_KEY), or use --mode offline", mode)
	}
	m, err := higmem.Open(ctx, higmem.Options{
		Store:       b.Store,
		Embedder:    b.Embedder,
		MemoryModel: b.Memory,
		AnswerModel: b.Answer,
		Mode:        mode,
		Logger:      a.log,
		PaperLinks:  a.links,
	})
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, m.Close)
	return m, nil
}
