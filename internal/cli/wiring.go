package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed"
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
// flags and environment. memoriesInDB says whether the memories keep their
// vectors in the database, so that --embedder auto keeps the embedder that
// made them; eval's memories live in memory (the database holds only its
// LLM response cache), and start empty.
func (a *app) backends(ctx context.Context, memoriesInDB bool) (*backends, error) {
	for _, p := range a.env.Problems {
		a.warnOnce("env:"+p, "%s", p)
	}
	db, err := openDatabase(ctx, a.db, !a.noCreate)
	if err != nil {
		return nil, openError(a.db, err, canWrite)
	}
	a.closers = append(a.closers, db.Store.Close)
	b := &backends{Store: db.Store, Meter: llm.NewMeter(nil)}
	var vectors store.Store
	if memoriesInDB {
		vectors = db.Store
	}
	if b.Embedder, err = a.openEmbedder(ctx, vectors); err != nil {
		return nil, err
	}
	if b.Embedder != nil {
		b.Embedder = a.announcing(b.Embedder)
	}
	var backend cache.Backend
	if !a.noCache {
		if backend, err = db.openCache(ctx); err != nil {
			return nil, err
		}
	}
	structured, err := openai.ParseMode(a.llmStructured)
	if err != nil {
		return nil, fmt.Errorf("--llm-structured: %w", err)
	}
	if a.llmConcurrency < 1 {
		return nil, fmt.Errorf("--llm-concurrency %d: want at least 1", a.llmConcurrency)
	}
	if a.llmRecord != "" && a.llmReplay != "" {
		return nil, fmt.Errorf("--llm-record and --llm-replay exclude each other")
	}
	var cassette *cache.Cassette
	if path := a.llmRecord + a.llmReplay; path != "" {
		if cassette, err = cache.OpenCassette(path); err != nil {
			return nil, err
		}
		if a.llmRecord != "" {
			a.closers = append(a.closers, cassette.Save)
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
			MaxConcurrency: a.llmConcurrency,
			MaxTokens:      a.llmMaxTokens,
			Structured:     structured,
			Stream:         a.llmStream,
			RequestTimeout: a.llmTimeout,
			Logger:         a.log,
		})
		if err != nil {
			return nil, fmt.Errorf("%s model: %w", role, err)
		}
		var m llm.Model = client
		if a.llmReplay != "" {
			// Answers come from the cassette only; nothing reaches a server.
			m = llm.ModelFunc(func(_ context.Context, req llm.Request) (llm.Response, error) {
				return llm.Response{}, fmt.Errorf("%w: %s, model %s (record it again with --llm-record)", cache.ErrCassetteMiss, req.Operation, ep.Model)
			})
		}
		if backend != nil && a.llmReplay == "" {
			c := cache.New(m, backend, cache.Options{Model: ep.Model, Logger: a.log})
			b.Caches = append(b.Caches, c)
			m = c
		}
		if cassette != nil {
			// Outermost, so that answers the database cache gives are
			// recorded too.
			m = cache.New(m, cassette, cache.Options{Model: ep.Model, Logger: a.log})
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

// openError explains a database that cannot be opened for writing: higmem
// opens its database read-write (SQLite keeps a write-ahead log beside it,
// and reads may store derived data such as vectors recomputed after an
// import), so a read-only file or directory is an error that says which and
// what to do. writable is canWrite (a parameter for tests, which may run as
// root).
func openError(path string, err error, writable func(string) error) error {
	msg := err.Error()
	if !strings.Contains(msg, "readonly database") && !strings.Contains(msg, "unable to open database file") &&
		!strings.Contains(msg, "read-only file system") {
		return err
	}
	what := "the database cannot be written"
	if werr := writable(path); werr != nil && !errors.Is(werr, os.ErrNotExist) {
		what = fmt.Sprintf("the file is not writable by this user (%v)", werr)
	} else if derr := writable(filepath.Dir(path)); derr != nil {
		what = fmt.Sprintf("its directory is not writable by this user (SQLite keeps its -wal and -shm files there): %v", derr)
	}
	return fmt.Errorf("cannot open %s: %s. higmem opens its database for writing, even to read it "+
		"(a write-ahead log, and vectors computed on first use); make it writable, or copy it "+
		"(cp %s /tmp/higmem-copy.db) and pass --db /tmp/higmem-copy.db (%w)", path, what, path, err)
}

// canWrite reports whether path (a file or directory) can be opened for
// writing, without changing it.
func canWrite(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		f, err := os.CreateTemp(path, ".higmem-write-check-*")
		if err != nil {
			return err
		}
		name := f.Name()
		f.Close()
		return os.Remove(name)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	return f.Close()
}

// announcingEmbedder says on stderr when it is asked to embed many texts at
// once, with a progress bar: that happens on the first use of a space after
// an import (exports carry no vectors) or an embedder change, and would
// otherwise be a silent wait of seconds. Batches are embedded in chunks;
// every text is embedded alone by the embedders higmem ships, so the
// vectors are the same.
type announcingEmbedder struct {
	embed.Embedder
	a *app
}

// announcing wraps emb in an announcingEmbedder that keeps emb's query
// embedding (e5-small-v2 embeds a question after "query: "): it is an
// embed.QueryEmbedder exactly when emb is one. Without it the wrapper
// would hide EmbedQuery from the engine, which would embed questions as
// passages.
func (a *app) announcing(emb embed.Embedder) embed.Embedder {
	return embed.KeepQuery(&announcingEmbedder{Embedder: emb, a: a}, emb, nil)
}

// announceTexts is the batch size from which embedding is announced; adds
// embed at most their batch (ingest sends 200 turns at a time).
const announceTexts = 256

func (e *announcingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) < announceTexts {
		return e.Embedder.Embed(ctx, texts)
	}
	start := time.Now()
	fmt.Fprintf(e.a.stderr, "higmem: computing %d vectors with %s (texts stored without one: the first use after an import or an embedder change)\n",
		len(texts), e.Embedder.ID())
	bar := e.a.progress(len(texts), "embedding")
	defer bar.Close()
	out := make([][]float32, 0, len(texts))
	for i := 0; i < len(texts); i += announceTexts {
		vs, err := e.Embedder.Embed(ctx, texts[i:min(i+announceTexts, len(texts))])
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
		_ = bar.Add(len(vs))
	}
	_ = bar.Finish()
	fmt.Fprintf(e.a.stderr, "higmem: computed %d vectors in %s; they are stored, so this happens once\n", len(texts), time.Since(start).Round(100*time.Millisecond))
	return out, nil
}

// embedderName names the embedder a memory uses, for messages.
func (a *app) embedderName(m *higmem.Memory) string {
	if e := m.Options().Embedder; e != nil {
		return e.ID()
	}
	return "none (BM25 only)"
}

// maxTurnBytes is --max-turn-kib in bytes for higmem.Options (negative: no
// cap; 0 is refused by the flag check in open).
func (a *app) maxTurnBytes() int {
	if a.maxTurnKiB < 0 {
		return -1
	}
	return a.maxTurnKiB << 10
}

// open opens the memory the flags describe.
func (a *app) open(ctx context.Context) (*higmem.Memory, error) {
	mode, err := higmem.ParseMode(a.mode)
	if err != nil {
		return nil, err
	}
	if a.maxTurnKiB == 0 {
		return nil, fmt.Errorf("--max-turn-kib 0 would refuse every turn: give a size in KiB, or -1 for no limit")
	}
	b, err := a.backends(ctx, true)
	if err != nil {
		return nil, err
	}
	a.meter = b.Meter
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
		CacheBytes:  a.cacheBytes,
		// MaxTurnBytes: 0 would mean the default; -1 (or any negative)
		// means no cap.
		MaxTurnBytes: a.maxTurnBytes(),
	})
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, m.Close)
	return m, nil
}
