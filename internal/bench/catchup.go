package bench

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/internal/synth"
)

// CatchUp is the catch-up run on one space size: a reader Memory and a
// writer Memory, each on its own store handle of a copy of the space's
// SQLite file; the writer adds, deletes or imports N turns, and the
// reader's next search is timed (it catches up in place from the store's
// journal).
type CatchUp struct {
	BaseTurns int `json:"base_turns"`
	// Steady is the median search with nothing to catch up; Reload a new
	// Memory's first search of the space as built (a load from scratch).
	Steady      time.Duration `json:"steady_ns"`
	SteadyTimes int           `json:"steady_times"`
	Reload      time.Duration `json:"reload_ns"`
	Rows        []CatchUpRow  `json:"rows"`
}

// CatchUpRow is the search after Foreign writes of one kind from the other
// writer ("add": turns added a session per Add; "delete": turns deleted one
// Delete each; "import": an Import of an export of another space holding
// Foreign turns), the median of Times; Write is the median time the writer
// took.
type CatchUpRow struct {
	Kind    string        `json:"kind"`
	Foreign int           `json:"foreign"`
	Times   int           `json:"times"`
	Search  time.Duration `json:"search_ns"`
	Write   time.Duration `json:"write_ns"`
}

// timesOf is how many times a catch-up after n writes is timed.
func (c *WritersConfig) timesOf(n int) int {
	if n < 1000 {
		return c.Repeat
	}
	return 1
}

// importSources builds, in the file at path, the spaces the catch-up run
// imports (for each N of Foreign, one space of N turns per time it is
// timed, with ids of their own) and returns their exports by N.
func importSources(ctx context.Context, cfg WritersConfig, path string) (map[int][][]byte, error) {
	removeDB(path)
	defer removeDB(path)
	m, _, closeAll, err := openOffline(ctx, path, -1)
	if err != nil {
		return nil, err
	}
	defer closeAll()
	out := map[int][][]byte{}
	for _, n := range cfg.Foreign {
		for rep := range cfg.timesOf(n) {
			cfg.Progress(fmt.Sprintf("building an export of %d turns to import", n))
			sp := higmem.Space{UserID: fmt.Sprintf("import-%d-%d", n, rep)}
			turns := synth.Generate(synth.Options{Turns: n, Seed: cfg.Seed + uint64(1000+rep)}).Turns
			for i := range turns {
				turns[i].ID = fmt.Sprintf("i%d.%d.%d", n, rep, i)
			}
			if err := addSessions(ctx, m, sp, turns); err != nil {
				return nil, err
			}
			var buf bytes.Buffer
			if err := m.Export(ctx, sp, &buf); err != nil {
				return nil, err
			}
			out[n] = append(out[n], buf.Bytes())
		}
	}
	return out, nil
}

// catchUp runs the catch-up measurement on copies of the space at from:
// each kind of foreign write (adds, deletes, imports) starts from a copy of
// the space as built, so that every row is measured on a space of about
// the base size.
func catchUp(ctx context.Context, cfg WritersConfig, from, path string, base synth.Conversation, imports map[int][][]byte) (CatchUp, error) {
	c := CatchUp{BaseTurns: len(base.Turns)}
	defer removeDB(path)
	total := 0
	for _, n := range cfg.Foreign {
		total += n * cfg.timesOf(n)
	}
	// The foreign turns continue the conversation: later sessions, new ids.
	all := synth.Generate(synth.Options{Turns: len(base.Turns) + total, Seed: cfg.Seed}).Turns
	foreign := all[len(base.Turns):]
	for i := range foreign {
		foreign[i].ID = fmt.Sprintf("f%d", i)
	}
	q := queries(base, 1)[0]
	rng := rand.New(rand.NewPCG(cfg.Seed, 7))
	for _, kind := range []string{"add", "delete", "import"} {
		if err := copyDB(from, path); err != nil {
			return c, err
		}
		if c.Reload == 0 {
			fresh, _, closeFresh, err := openOffline(ctx, path, -1)
			if err != nil {
				return c, err
			}
			t0 := time.Now()
			_, err = fresh.Retrieve(ctx, space, q, higmem.RetrieveOptions{})
			c.Reload = time.Since(t0)
			closeFresh()
			if err != nil {
				return c, err
			}
		}
		pair, err := openPair(ctx, path, q)
		if err != nil {
			return c, err
		}
		err = func() error {
			defer pair.close()
			if c.SteadyTimes == 0 {
				var steady []time.Duration
				for range max(cfg.Repeat, 5) {
					d, err := pair.search()
					if err != nil {
						return err
					}
					steady = append(steady, d)
				}
				slices.Sort(steady)
				c.Steady, c.SteadyTimes = pct(steady, 50), len(steady)
			}
			switch kind {
			case "add":
				for _, n := range cfg.Foreign {
					r, err := pair.row(cfg, kind, n, cfg.timesOf(n), func() error {
						err := addSessions(ctx, pair.writer, space, foreign[:n])
						foreign = foreign[n:]
						return err
					})
					if err != nil {
						return err
					}
					c.Rows = append(c.Rows, r)
				}
			case "delete":
				for _, n := range cfg.ForeignDeletes {
					if n > c.BaseTurns/2 {
						continue
					}
					// A delete costs the writer a pass over the space: from
					// 100 deletes on, a row is timed once.
					r, err := pair.row(cfg, kind, n, cfg.timesOf(n*10), func() error {
						ts, err := pair.writer.List(ctx, space, higmem.ListOptions{})
						if err != nil {
							return err
						}
						for _, i := range rng.Perm(len(ts))[:n] {
							if err := pair.writer.Delete(ctx, space, ts[i].ID); err != nil {
								return err
							}
						}
						return nil
					})
					if err != nil {
						return err
					}
					c.Rows = append(c.Rows, r)
				}
			case "import":
				for _, n := range cfg.Foreign {
					exports := imports[n]
					r, err := pair.row(cfg, kind, n, len(exports), func() error {
						_, err := pair.writer.Import(ctx, space, bytes.NewReader(exports[0]))
						exports = exports[1:]
						return err
					})
					if err != nil {
						return err
					}
					c.Rows = append(c.Rows, r)
				}
			}
			return pair.check(ctx, path, q)
		}()
		if err != nil {
			return c, err
		}
	}
	return c, nil
}

// pair is the reader and the writer of a catch-up run, on their own store
// handles of one file; the reader has the space loaded.
type pair struct {
	reader, writer *higmem.Memory
	q              string
	close          func()
}

// openPair opens the pair on the file at path and loads the space in the
// reader.
func openPair(ctx context.Context, path, q string) (*pair, error) {
	reader, _, closeReader, err := openOffline(ctx, path, -1)
	if err != nil {
		return nil, err
	}
	writer, _, closeWriter, err := openOffline(ctx, path, -1)
	if err != nil {
		closeReader()
		return nil, err
	}
	p := &pair{reader: reader, writer: writer, q: q, close: func() { closeWriter(); closeReader() }}
	if _, err := p.search(); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

// search times one search of the reader.
func (p *pair) search() (time.Duration, error) {
	t0 := time.Now()
	_, err := p.reader.Retrieve(context.Background(), space, p.q, higmem.RetrieveOptions{})
	return time.Since(t0), err
}

// row times the reader's search after write, times times, and the write.
func (p *pair) row(cfg WritersConfig, kind string, n, times int, write func() error) (CatchUpRow, error) {
	r := CatchUpRow{Kind: kind, Foreign: n, Times: times}
	var ds, ws []time.Duration
	for range times {
		t0 := time.Now()
		if err := write(); err != nil {
			return r, fmt.Errorf("%s of %d: %w", kind, n, err)
		}
		ws = append(ws, time.Since(t0))
		d, err := p.search()
		if err != nil {
			return r, err
		}
		ds = append(ds, d)
	}
	slices.Sort(ds)
	slices.Sort(ws)
	r.Search, r.Write = pct(ds, 50), pct(ws, 50)
	cfg.Progress(fmt.Sprintf("catch-up after %s of %d: %s (the writer took %s)", kind, n, ms(r.Search), ms(r.Write)))
	return r, nil
}

// check fails unless the caught-up reader retrieves what a Memory loading
// the space from scratch does.
func (p *pair) check(ctx context.Context, path, q string) error {
	res, err := p.reader.Retrieve(ctx, space, q, higmem.RetrieveOptions{})
	if err != nil {
		return err
	}
	fresh, _, closeFresh, err := openOffline(ctx, path, -1)
	if err != nil {
		return err
	}
	defer closeFresh()
	got, err := fresh.Retrieve(ctx, space, q, higmem.RetrieveOptions{})
	if err != nil {
		return err
	}
	if !slices.Equal(got.IDs(), res.IDs()) {
		return fmt.Errorf("the caught-up reader retrieved %v, a fresh load %v", res.IDs(), got.IDs())
	}
	return nil
}

// catchUpTable renders the catch-up runs.
func catchUpTable(b *strings.Builder, cs []CatchUp) {
	b.WriteString("\nCatch-up (search after another Memory on the same file wrote; the median of times; the writer's own time beside):\n\n")
	b.WriteString("| turns | foreign writes | times | search | writer took |\n|---:|---|---:|---:|---:|\n")
	for _, c := range cs {
		fmt.Fprintf(b, "| %d | nothing (version check only) | %d | %s | |\n", c.BaseTurns, c.SteadyTimes, ms(c.Steady))
		for _, r := range c.Rows {
			fmt.Fprintf(b, "| %d | %s %d | %d | %s | %s |\n", c.BaseTurns, r.Kind, r.Foreign, r.Times, ms(r.Search), ms(r.Write))
		}
		fmt.Fprintf(b, "| %d | — a new Memory's first search (load from scratch) | 1 | %s | |\n", c.BaseTurns, ms(c.Reload))
	}
}
