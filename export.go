package higmem

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/higmem/higmem/internal/exportfmt"
	"github.com/higmem/higmem/store"
)

// Export and Import: a space as JSON lines (a header, then turns,
// annotations, events, links and profile records), to back it up or move it
// to another store or space. Vectors are not exported; Import recomputes
// them.

// ExportVersion is the version of the JSONL export format. Version 2 added
// profile lines; Import reads versions 1 and 2.
const ExportVersion = 2

// exportLine is one line of an export (internal/exportfmt).
type exportLine = exportfmt.Line

// Export writes a space as JSON lines: a header line, then every turn,
// annotation, event, link and profile record (what a model stated about a
// person), all of one committed state of the space
// even while other writers (of this or another process) commit. The output
// can be read back with Import.
func (m *Memory) Export(ctx context.Context, sp Space, w io.Writer) error {
	if err := m.check(sp); err != nil {
		return err
	}
	snap, err := m.exportSnapshot(ctx, sp)
	if err != nil {
		return wrapf(err, "export")
	}
	if err := exportfmt.Encode(w, sp, ExportVersion, m.now().UTC(), snap); err != nil {
		return wrapf(err, "export")
	}
	return nil
}

// exportSnapshotTries is how many times Export reads a space outside a
// transaction, hoping no writer commits meanwhile, before it reads it
// inside one.
const exportSnapshotTries = 3

// exportSnapshot reads every record of sp as of one committed version: the
// four lists are separate reads, and a write committed between them would
// export annotations and events of turns the export lacks (which Import
// then rejects). It reads them outside a transaction while the space's
// version stays the same (every committed write bumps it), and after
// exportSnapshotTries moved versions inside a transaction holding the
// space's write lock (PostgreSQL's read-committed statements see one
// state only while no writer of the space can commit), which holds off
// the space's writers while it reads and bumps the version once.
func (m *Memory) exportSnapshot(ctx context.Context, sp Space) (exportfmt.Records, error) {
	for range exportSnapshotTries {
		before, err := m.store.SpaceVersion(ctx, sp)
		if err != nil {
			return exportfmt.Records{}, err
		}
		recs, err := exportfmt.Read(ctx, m.store, sp)
		if err != nil {
			return exportfmt.Records{}, err
		}
		after, err := m.store.SpaceVersion(ctx, sp)
		if err != nil {
			return exportfmt.Records{}, err
		}
		if before == after {
			return recs, nil
		}
	}
	var recs exportfmt.Records
	err := m.store.Update(ctx, func(tx store.Tx) error {
		if _, err := tx.Lock(ctx, sp); err != nil {
			return err
		}
		var err error
		recs, err = exportfmt.Read(ctx, tx, sp)
		return err
	})
	return recs, err
}

// ImportResult reports what Import stored.
type ImportResult struct {
	Turns       int `json:"turns"`
	Skipped     int `json:"skipped"`
	Annotations int `json:"annotations"`
	Events      int `json:"events"`
	Links       int `json:"links"`
	Profiles    int `json:"profiles"`
}

// Import reads an export (see Export) into space sp, which may differ from
// the exported one. Everything is validated first and written in one
// transaction: a bad line rejects the whole import, naming the line. Turns
// already stored identically are skipped; a different turn with the same id
// fails with ErrConflict. Imported annotations replace existing ones of the
// same turn. An imported event replaces the stored event with the same id
// when the export is of this same space (a restore); a stored turn the
// replaced event held, and no event holds after the import, stays in it.
// From another space, an imported event whose id is taken gets a fresh id,
// so the stored events stay as they are. An imported profile record
// replaces the stored one with the same id. Vectors are recomputed with
// this memory's embedder the next time the space is used (also for an
// event whose text the import replaced).
func (m *Memory) Import(ctx context.Context, sp Space, r io.Reader) (*ImportResult, error) {
	st, err := m.lockSpace(ctx, sp)
	if err != nil {
		return nil, err
	}
	defer st.writeMu.Unlock()

	lines, nos, err := m.readImport(r)
	if err != nil {
		return nil, err
	}
	st.mu.RLock()
	if problems := exportfmt.Check(lines, nos, func(id string) bool { _, ok := st.turn(id); return ok }); len(problems) > 0 {
		err = fmt.Errorf("%w: import: %s", ErrInvalidInput, exportfmt.Summary(problems))
	}
	st.mu.RUnlock()
	if err != nil {
		return nil, err
	}

	res := &ImportResult{}
	now := m.now().UTC()
	err = m.store.Update(ctx, func(tx store.Tx) error {
		var c exportfmt.Counts
		err := exportfmt.Write(ctx, tx, sp, lines, now, &c)
		*res = ImportResult(c)
		return err
	})
	if err != nil {
		return nil, wrapf(err, "import")
	}
	m.invalidate(sp)
	return res, nil
}

// readImport reads the lines of an export (exportfmt.ReadLines, checking
// the turn size cap); nos holds the line number of each of lines.
func (m *Memory) readImport(r io.Reader) (lines []exportLine, nos []int, err error) {
	lines, nos, err = exportfmt.ReadLines(r, ExportVersion, m.opts.MaxTurnBytes)
	var le *exportfmt.LineError
	switch {
	case !errors.As(err, &le):
		return lines, nos, err
	case le.Read != nil:
		return nil, nil, wrapf(le.Read, "%s", le.Msg)
	case le.TooLarge:
		return nil, nil, tooLarge("%s", le.Msg)
	}
	return nil, nil, fmt.Errorf("%w: %s", ErrInvalidInput, le.Msg)
}
