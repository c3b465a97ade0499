package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/internal/synth"
	"github.com/higmem/higmem/store/sqlite"
)

// WritersConfig selects the many-writers measurements: the cost of the
// version check every read makes, catching up after another writer's
// turns, ingest from several writers at once, and the memory of many
// spaces under a cache bound. Every Memory is in offline mode with the
// hashing embedder, so the figures are the engine's and the store's.
type WritersConfig struct {
	// Sizes are the space sizes of the version-check run (default 1k,
	// 10k, 100k turns).
	Sizes []int
	// Queries is the number of searches timed per size (default 200).
	Queries int
	// Foreign are the numbers of turns another writer adds, and
	// imports, before a timed search of the catch-up run (default 1, 100,
	// 10,000), on a copy of each space of Sizes.
	Foreign []int
	// ForeignDeletes are the numbers of turns another writer deletes
	// before a timed search of the catch-up run (default 1, 100; at most
	// half the space; from 100 on timed once).
	ForeignDeletes []int
	// Repeat is how many times each catch-up below 1,000 foreign writes
	// is timed (the median is reported; default 5). Larger ones are timed
	// once.
	Repeat int
	// WriterTurns is the number of turns ingested in each row of the
	// writers run, split evenly among the writers (default 2,000).
	WriterTurns int
	// Spaces and SpaceTurns shape the memory run: Spaces spaces of
	// SpaceTurns turns each (default 1,000 × 1,000), searched once each
	// by a Memory whose Options.CacheBytes is CacheBytes (default 256 MiB).
	Spaces, SpaceTurns int
	CacheBytes         int64
	// Dir holds the SQLite files (default: a temporary directory, removed
	// afterwards). With Reuse, files already there are used again instead
	// of built: the spaces of the version-check run (offline-<turns>.db,
	// as Run names them) and of the memory run.
	Dir   string
	Reuse bool
	// Seed makes the synthetic spaces reproducible.
	Seed uint64
	// Parts selects the measurements among "version", "catchup",
	// "ingest" and "memory" (default: all). The catch-up run needs the
	// version run, which builds its space.
	Parts []string
	// Progress, when set, receives a line per step.
	Progress func(string)
}

// WritersParts are the measurements of RunWriters, in order.
var WritersParts = []string{"version", "catchup", "ingest", "memory"}

func (c *WritersConfig) defaults() {
	if len(c.Parts) == 0 {
		c.Parts = WritersParts
	}
	if len(c.Sizes) == 0 {
		c.Sizes = []int{1000, 10000, 100000}
	}
	if c.Queries == 0 {
		c.Queries = 200
	}
	if len(c.Foreign) == 0 {
		c.Foreign = []int{1, 100, 10000}
	}
	if len(c.ForeignDeletes) == 0 {
		c.ForeignDeletes = []int{1, 100}
	}
	if c.Repeat == 0 {
		c.Repeat = 5
	}
	if c.WriterTurns == 0 {
		c.WriterTurns = 2000
	}
	if c.Spaces == 0 {
		c.Spaces = 1000
	}
	if c.SpaceTurns == 0 {
		c.SpaceTurns = 1000
	}
	if c.CacheBytes == 0 {
		c.CacheBytes = 256 << 20
	}
	if c.Progress == nil {
		c.Progress = func(string) {}
	}
}

// WritersResult holds the four many-writers measurements. Durations are in
// nanoseconds in JSON.
type WritersResult struct {
	Version []VersionCheck `json:"version_check,omitempty"`
	CatchUp []CatchUp      `json:"catch_up,omitempty"`
	Ingest  []WriterIngest `json:"ingest,omitempty"`
	Memory  *SpacesMemory  `json:"memory,omitempty"`
}

// VersionCheck is the read overhead at one space size: the version query
// every read makes before it serves (store.Store.SpaceVersion, on the same
// store handle as the searches and interleaved with them), against the
// search it precedes. The search times include one such check each.
type VersionCheck struct {
	Turns      int           `json:"turns"`
	CheckP50   time.Duration `json:"check_p50_ns"`
	CheckP95   time.Duration `json:"check_p95_ns"`
	SearchP50  time.Duration `json:"search_p50_ns"`
	SearchP95  time.Duration `json:"search_p95_ns"`
	Operations int           `json:"operations"`
}

// WriterIngest is one row of the writers run: Writers Memories, each on its
// own store handle of one SQLite file (as separate processes would be,
// though here they are goroutines of one process), adding Turns turns in
// total, a session per Add, into Spaces spaces at once.
type WriterIngest struct {
	Writers     int           `json:"writers"`
	Spaces      int           `json:"spaces"`
	Turns       int           `json:"turns"`
	Wall        time.Duration `json:"wall_ns"`
	TurnsPerSec float64       `json:"turns_per_s"`
}

// SpacesMemory is the memory run: one Memory searches each of Spaces spaces
// of SpaceTurns turns once, in order, under Options.CacheBytes; HeapBytes is
// the Go heap in use after a collection, less the heap before the Memory
// was opened.
type SpacesMemory struct {
	Spaces     int           `json:"spaces"`
	SpaceTurns int           `json:"space_turns"`
	CacheBytes int64         `json:"cache_bytes"`
	HeapBytes  uint64        `json:"heap_bytes"`
	Pass       time.Duration `json:"pass_ns"`
	Build      time.Duration `json:"build_ns"`
}

// RunWriters makes the many-writers measurements.
func RunWriters(ctx context.Context, cfg WritersConfig) (*WritersResult, error) {
	cfg.defaults()
	dir, done, err := workDir(cfg.Dir)
	if err != nil {
		return nil, err
	}
	defer done()
	for _, p := range cfg.Parts {
		if !slices.Contains(WritersParts, p) {
			return nil, fmt.Errorf("bench: no measurement %q (want %s)", p, strings.Join(WritersParts, ", "))
		}
	}
	if slices.Contains(cfg.Parts, "catchup") && !slices.Contains(cfg.Parts, "version") {
		return nil, fmt.Errorf("bench: the catch-up measurement needs the version one (it builds the space)")
	}
	part := func(p string) bool { return slices.Contains(cfg.Parts, p) }
	res := &WritersResult{}
	type built struct {
		path string
		conv synth.Conversation
	}
	var spaces []built
	for _, n := range cfg.Sizes {
		if !part("version") {
			break
		}
		conv := synth.Generate(synth.Options{Turns: n, Seed: cfg.Seed})
		path := filepath.Join(dir, fmt.Sprintf("%s-%d.db", higmem.ModeOffline, n))
		if err := buildOffline(ctx, cfg, path, conv); err != nil {
			return res, fmt.Errorf("bench: version check %d turns: %w", n, err)
		}
		cfg.Progress(fmt.Sprintf("version check, %d turns", n))
		v, err := versionCheck(ctx, path, queries(conv, cfg.Queries))
		if err != nil {
			return res, fmt.Errorf("bench: version check %d turns: %w", n, err)
		}
		v.Turns = len(conv.Turns)
		res.Version = append(res.Version, v)
		spaces = append(spaces, built{path, conv})
	}
	if part("catchup") && len(spaces) > 0 {
		imports, err := importSources(ctx, cfg, filepath.Join(dir, "import-sources.db"))
		if err != nil {
			return res, fmt.Errorf("bench: catch-up: %w", err)
		}
		for _, b := range spaces {
			cfg.Progress(fmt.Sprintf("catch-up on a copy of the %d-turn space", len(b.conv.Turns)))
			c, err := catchUp(ctx, cfg, b.path, filepath.Join(dir, "catchup.db"), b.conv, imports)
			if err != nil {
				return res, fmt.Errorf("bench: catch-up, %d turns: %w", len(b.conv.Turns), err)
			}
			res.CatchUp = append(res.CatchUp, c)
		}
	}
	for _, row := range []struct{ writers, spaces int }{{1, 1}, {4, 1}, {4, 4}} {
		if !part("ingest") {
			break
		}
		cfg.Progress(fmt.Sprintf("ingest, %d writers into %d spaces", row.writers, row.spaces))
		r, err := writersIngest(ctx, cfg, filepath.Join(dir, fmt.Sprintf("writers-%d-%d.db", row.writers, row.spaces)), row.writers, row.spaces)
		if err != nil {
			return res, fmt.Errorf("bench: ingest with %d writers: %w", row.writers, err)
		}
		res.Ingest = append(res.Ingest, r)
	}
	if part("memory") {
		mem, err := spacesMemory(ctx, cfg, dir)
		if err != nil {
			return res, fmt.Errorf("bench: memory of %d spaces: %w", cfg.Spaces, err)
		}
		res.Memory = &mem
	}
	return res, nil
}

// openOffline opens a store on path and an offline Memory with the hashing
// embedder on it; close closes both.
func openOffline(ctx context.Context, path string, cacheBytes int64) (m *higmem.Memory, st *sqlite.Store, close func(), err error) {
	st, err = sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		return nil, nil, nil, err
	}
	m, err = higmem.Open(ctx, higmem.Options{Store: st, Embedder: hashing.New(0), Mode: higmem.ModeOffline, CacheBytes: cacheBytes})
	if err != nil {
		st.Close()
		return nil, nil, nil, err
	}
	return m, st, func() { m.Close(); st.Close() }, nil
}

// addSessions adds turns to sp, one session per Add, as a client would.
func addSessions(ctx context.Context, m *higmem.Memory, sp higmem.Space, turns []higmem.TurnInput) error {
	for len(turns) > 0 {
		k := 1
		for k < len(turns) && turns[k].SessionID == turns[0].SessionID {
			k++
		}
		if _, err := m.Add(ctx, sp, turns[:k]); err != nil {
			return err
		}
		turns = turns[k:]
	}
	return nil
}

// buildOffline ingests conv into the bench space of path in offline mode,
// unless Reuse finds it built.
func buildOffline(ctx context.Context, cfg WritersConfig, path string, conv synth.Conversation) error {
	if cfg.Reuse && fileSize(path) > 0 {
		cfg.Progress(fmt.Sprintf("reusing %s", path))
		return nil
	}
	os.Remove(path)
	cfg.Progress(fmt.Sprintf("building %d turns in %s", len(conv.Turns), filepath.Base(path)))
	m, _, closeAll, err := openOffline(ctx, path, 0)
	if err != nil {
		return err
	}
	defer closeAll()
	return addSessions(ctx, m, space, conv.Turns)
}

// versionCheck times, per question, the version query and then the search.
func versionCheck(ctx context.Context, path string, questions []string) (VersionCheck, error) {
	var v VersionCheck
	m, st, closeAll, err := openOffline(ctx, path, -1)
	if err != nil {
		return v, err
	}
	defer closeAll()
	if _, err := m.Retrieve(ctx, space, questions[0], higmem.RetrieveOptions{}); err != nil {
		return v, err
	}
	runtime.GC()
	checks := make([]time.Duration, 0, len(questions))
	searches := make([]time.Duration, 0, len(questions))
	for _, q := range questions {
		t0 := time.Now()
		if _, err := st.SpaceVersion(ctx, space); err != nil {
			return v, err
		}
		checks = append(checks, time.Since(t0))
		t0 = time.Now()
		if _, err := m.Retrieve(ctx, space, q, higmem.RetrieveOptions{}); err != nil {
			return v, err
		}
		searches = append(searches, time.Since(t0))
	}
	slices.Sort(checks)
	slices.Sort(searches)
	v.CheckP50, v.CheckP95 = pct(checks, 50), pct(checks, 95)
	v.SearchP50, v.SearchP95 = pct(searches, 50), pct(searches, 95)
	v.Operations = len(questions)
	return v, nil
}

// removeDB removes the SQLite file at path with its WAL and shared memory.
func removeDB(path string) {
	for _, s := range []string{"", "-wal", "-shm"} {
		os.Remove(path + s)
	}
}

// copyDB copies the SQLite file at from (closed, with its WAL if any) to to.
func copyDB(from, to string) error {
	for _, suffix := range []string{"", "-wal"} {
		os.Remove(to + suffix)
		b, err := os.ReadFile(from + suffix)
		if os.IsNotExist(err) && suffix != "" {
			continue
		}
		if err != nil {
			return err
		}
		if err := os.WriteFile(to+suffix, b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// writersIngest ingests cfg.WriterTurns turns from writers Memories on
// their own store handles of one new file, into spaces spaces (writer w
// writes into space w mod spaces), all at once.
func writersIngest(ctx context.Context, cfg WritersConfig, path string, writers, spaces int) (WriterIngest, error) {
	r := WriterIngest{Writers: writers, Spaces: spaces}
	removeDB(path)
	defer removeDB(path)
	each := cfg.WriterTurns / writers
	mems := make([]*higmem.Memory, writers)
	convs := make([][]higmem.TurnInput, writers)
	for w := range writers {
		m, _, closeAll, err := openOffline(ctx, path, 0)
		if err != nil {
			return r, err
		}
		defer closeAll()
		mems[w] = m
		convs[w] = synth.Generate(synth.Options{Turns: each, Seed: cfg.Seed + uint64(w) + 1}).Turns
		for i := range convs[w] {
			convs[w][i].ID = fmt.Sprintf("w%d-%s", w, convs[w][i].ID)
			convs[w][i].SessionID = fmt.Sprintf("w%d-%s", w, convs[w][i].SessionID)
		}
	}
	sp := func(w int) higmem.Space { return higmem.Space{UserID: fmt.Sprintf("writer-%d", w%spaces)} }
	errs := make([]error, writers)
	var wg sync.WaitGroup
	t0 := time.Now()
	for w := range writers {
		wg.Go(func() { errs[w] = addSessions(ctx, mems[w], sp(w), convs[w]) })
	}
	wg.Wait()
	r.Wall = time.Since(t0)
	for _, err := range errs {
		if err != nil {
			return r, err
		}
	}
	for s := range spaces {
		st, err := mems[0].Stats(ctx, sp(s))
		if err != nil {
			return r, err
		}
		r.Turns += st.Turns
	}
	if r.Turns != each*writers {
		return r, fmt.Errorf("%d turns stored, want %d", r.Turns, each*writers)
	}
	r.TurnsPerSec = float64(r.Turns) / r.Wall.Seconds()
	return r, nil
}

// spaceOf is the i-th space of the memory run.
func spaceOf(i int) higmem.Space { return higmem.Space{UserID: fmt.Sprintf("tenant-%04d", i)} }

// spacesMemory builds (or reuses) the memory run's file and measures it.
func spacesMemory(ctx context.Context, cfg WritersConfig, dir string) (SpacesMemory, error) {
	r := SpacesMemory{Spaces: cfg.Spaces, SpaceTurns: cfg.SpaceTurns, CacheBytes: cfg.CacheBytes}
	path := filepath.Join(dir, fmt.Sprintf("spaces-%d-%d.db", cfg.Spaces, cfg.SpaceTurns))
	conv := func(i int) synth.Conversation {
		return synth.Generate(synth.Options{Turns: cfg.SpaceTurns, Seed: cfg.Seed + uint64(i)})
	}
	if !cfg.Reuse || fileSize(path) == 0 {
		os.Remove(path)
		t0 := time.Now()
		m, _, closeAll, err := openOffline(ctx, path, 0)
		if err != nil {
			return r, err
		}
		for i := range cfg.Spaces {
			if i%100 == 0 {
				cfg.Progress(fmt.Sprintf("memory: building space %d of %d (%d turns each)", i+1, cfg.Spaces, cfg.SpaceTurns))
			}
			if err := addSessions(ctx, m, spaceOf(i), conv(i).Turns); err != nil {
				closeAll()
				return r, err
			}
		}
		closeAll()
		r.Build = time.Since(t0)
	} else {
		cfg.Progress(fmt.Sprintf("reusing %s", path))
	}
	qs := make([]string, cfg.Spaces)
	for i := range qs {
		qs[i] = queries(conv(i), 1)[0]
	}
	var before, after runtime.MemStats
	runtime.GC()
	debug.FreeOSMemory()
	runtime.ReadMemStats(&before)
	m, _, closeAll, err := openOffline(ctx, path, cfg.CacheBytes)
	if err != nil {
		return r, err
	}
	defer closeAll()
	cfg.Progress(fmt.Sprintf("memory: searching %d spaces under a %d MiB cache", cfg.Spaces, cfg.CacheBytes>>20))
	t0 := time.Now()
	for i, q := range qs {
		res, err := m.Retrieve(ctx, spaceOf(i), q, higmem.RetrieveOptions{})
		if err != nil {
			return r, err
		}
		if len(res.Evidence) == 0 {
			return r, fmt.Errorf("no evidence found in %s", spaceOf(i))
		}
	}
	r.Pass = time.Since(t0)
	runtime.GC()
	runtime.ReadMemStats(&after)
	if after.HeapInuse > before.HeapInuse {
		r.HeapBytes = after.HeapInuse - before.HeapInuse
	}
	return r, nil
}

// WritersTable renders a WritersResult as Markdown tables.
func WritersTable(w io.Writer, r *WritersResult) {
	var b strings.Builder
	if len(r.Version) > 0 {
		b.WriteString("Version check (one SpaceVersion query, the read overhead; searches include one each):\n\n")
		b.WriteString("| turns | check p50 | check p95 | search p50 | search p95 |\n|---:|---:|---:|---:|---:|\n")
		for _, v := range r.Version {
			fmt.Fprintf(&b, "| %d | %.3f ms | %.3f ms | %s | %s |\n", v.Turns, float64(v.CheckP50)/1e6, float64(v.CheckP95)/1e6, ms(v.SearchP50), ms(v.SearchP95))
		}
	}
	if len(r.CatchUp) > 0 {
		catchUpTable(&b, r.CatchUp)
	}
	if len(r.Ingest) > 0 {
		b.WriteString("\nIngest (Memories on their own store handles of one file, goroutines of one process; a session per Add):\n\n")
		b.WriteString("| writers | spaces | turns | wall | turns/s |\n|---:|---:|---:|---:|---:|\n")
		for _, g := range r.Ingest {
			fmt.Fprintf(&b, "| %d | %d | %d | %s | %.0f |\n", g.Writers, g.Spaces, g.Turns, g.Wall.Round(time.Millisecond), g.TurnsPerSec)
		}
	}
	mm := r.Memory
	if mm == nil {
		io.WriteString(w, b.String())
		return
	}
	b.WriteString("\nMemory (one Memory searches every space once; Go heap in use after GC):\n\n")
	b.WriteString("| spaces | turns each | CacheBytes | heap in use | pass | build |\n|---:|---:|---:|---:|---:|---:|\n")
	build := "reused"
	if mm.Build > 0 {
		build = mm.Build.Round(time.Millisecond).String()
	}
	fmt.Fprintf(&b, "| %d | %d | %d MiB | %.1f MiB | %s | %s |\n", mm.Spaces, mm.SpaceTurns, mm.CacheBytes>>20,
		float64(mm.HeapBytes)/(1<<20), mm.Pass.Round(time.Millisecond), build)
	io.WriteString(w, b.String())
}
