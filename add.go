package higmem

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/higmem/higmem/internal/rules"
	"github.com/higmem/higmem/internal/temporal"
	"github.com/higmem/higmem/store"
)

// Add: turns are validated and prepared as a whole, split into batches,
// and each batch is built in the memory's mode and committed (writers.go).

// Add stores turns in a space and builds memory from them: annotations,
// event membership, event summaries and vectors, as the mode prescribes.
//
// Input is validated as a whole before anything is stored: an empty text, an
// over-long id, or an id already used by a different turn rejects the call
// with ErrInvalidInput or ErrConflict, and a text or batch over the caps
// (Options.MaxTurnBytes, MaxBatchTurns) with ErrTooLarge. Re-adding identical turns is a no-op
// (their ids are reported in Skipped), so an interrupted ingest can simply be
// repeated. Each batch of turns (one turn in paper mode) commits in one
// transaction: when an LLM endpoint fails mid-way, earlier batches stay
// stored and the error names the first turn that was not.
func (m *Memory) Add(ctx context.Context, sp Space, turns []TurnInput) (*AddResult, error) {
	if err := m.checkBatch(turns); err != nil {
		return nil, err
	}
	st, err := m.lockSpace(ctx, sp)
	if err != nil {
		return nil, err
	}
	defer st.writeMu.Unlock()

	res := &AddResult{}
	prepared, err := m.prepare(st, turns, res)
	if err != nil {
		return nil, err
	}
	rec := &recorder{}
	defer func() {
		res.Calls = rec.calls
		res.Warnings = append(res.Warnings, rec.notes...)
		slices.Sort(res.Events)
		res.Events = slices.Compact(res.Events)
	}()
	var chunks [][]store.Turn
	switch m.opts.Mode {
	case ModePaper:
		for _, t := range prepared {
			chunks = append(chunks, []store.Turn{t})
		}
	default:
		chunks = splitBatches(prepared, m.opts.BatchSize)
	}
	for _, pending := range chunks {
		if err := m.addChunk(ctx, st, pending, rec, res); err != nil {
			from := "an id-less turn"
			if pending[0].ID != "" {
				from = strconv.Quote(pending[0].ID)
			}
			return res, wrapf(err, "add: turns from %s on not stored", from)
		}
	}
	return res, nil
}

// build runs the construction of the mode on chunk c and commits it.
func (m *Memory) build(ctx context.Context, st *spaceState, c *chunk, rec *recorder, res *AddResult) error {
	switch {
	case m.opts.Mode == ModePaper:
		return m.buildPaper(ctx, st, c, rec, res)
	case m.opts.Mode == ModeDefault:
		return m.buildDefault(ctx, st, c, rec, res)
	case m.opts.Ablations.NoEvents:
		return m.buildTurnsOnly(ctx, st, c, res)
	default:
		return m.buildOffline(ctx, st, c, res)
	}
}

// splitBatches cuts turns into runs of at most n turns that do not cross a
// session boundary.
func splitBatches(turns []store.Turn, n int) [][]store.Turn {
	var out [][]store.Turn
	start := 0
	for i := 1; i <= len(turns); i++ {
		if i == len(turns) || i-start >= n || turns[i].SessionID != turns[start].SessionID {
			out = append(out, turns[start:i])
			start = i
		}
	}
	return out
}

// prepare validates inputs and turns them into store records with parsed
// times and RecordedAt. Identical re-adds are reported in res.Skipped and
// dropped. Seq and generated ids are given later, batch by batch, from the
// state the batch commits on (see spaceState.resolve): a turn without an id
// keeps an empty one here. Caller holds st.writeMu.
func (m *Memory) prepare(st *spaceState, in []TurnInput, res *AddResult) ([]store.Turn, error) {
	st.mu.RLock()
	defer st.mu.RUnlock()
	now := m.now().UTC()
	seen := make(map[string]store.Turn, len(in))
	var out []store.Turn
	for i, ti := range in {
		t := store.Turn{
			Space:       st.space,
			ID:          strings.TrimSpace(ti.ID),
			SessionID:   ti.SessionID,
			Speaker:     strings.TrimSpace(ti.Speaker),
			Text:        strings.TrimSpace(ti.Text),
			Attachments: ti.Attachments,
			Metadata:    ti.Metadata,
			OccurredRaw: ti.Time,
			RecordedAt:  now,
		}
		where := fmt.Sprintf("turn %d", i+1)
		if t.ID != "" {
			where += fmt.Sprintf(" (%q)", t.ID)
		}
		if content(t) == "" {
			return nil, fmt.Errorf("%w: %s: empty text", ErrInvalidInput, where)
		}
		if len(t.ID) > MaxIDLen || strings.ContainsAny(t.ID, "\n\r\t") {
			return nil, fmt.Errorf("%w: %s: id must be at most %d characters without line breaks or tabs", ErrInvalidInput, where, MaxIDLen)
		}
		switch {
		case !ti.OccurredAt.IsZero():
			t.OccurredAt = ti.OccurredAt.UTC()
			if t.OccurredRaw == "" {
				t.OccurredRaw = ti.OccurredAt.Format(time.RFC3339)
			}
		case ti.Time != "":
			at, _, err := temporal.ParseTime(ti.Time, m.opts.Location)
			if err != nil {
				res.Warnings = append(res.Warnings, fmt.Sprintf("%s: time %q not understood; kept as written, turn has no date", where, ti.Time))
			} else {
				t.OccurredAt = at.UTC()
			}
		}
		if t.ID != "" {
			if old, ok := st.turn(t.ID); ok {
				if !rules.SameTurn(old, t) {
					return nil, fmt.Errorf("%w: %s: id already holds a different turn", ErrConflict, where)
				}
				res.Skipped = append(res.Skipped, t.ID)
				continue
			}
			if old, ok := seen[t.ID]; ok {
				if !rules.SameTurn(old, t) {
					return nil, fmt.Errorf("%w: %s: id given twice with different content", ErrConflict, where)
				}
				res.Skipped = append(res.Skipped, t.ID)
				continue
			}
		}
		if t.ID != "" {
			seen[t.ID] = t
		}
		out = append(out, t)
	}
	return out, nil
}

// buildTurnsOnly stores turns with rule-based annotations and no events
// (offline mode with the NoEvents ablation).
func (m *Memory) buildTurnsOnly(ctx context.Context, st *spaceState, c *chunk, res *AddResult) error {
	build := func(st *spaceState, c *chunk) *batch {
		b := newBatch(st, c, m.now().UTC())
		for _, t := range c.turns {
			b.ann[t.ID] = rules.Annotate(t)
		}
		return b
	}
	return m.commitWith(ctx, build(st, c), res, func(ctx context.Context, ns *spaceState) (*batch, error) {
		nc, err := ns.resolve(c.pending)
		if err != nil {
			return nil, err
		}
		return build(ns, nc), nil
	})
}
