package higmem

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
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

// readImport reads the lines of an export, each decoded and checked alone
// (exportfmt.Validate, a header first, the turn size cap); nos holds the line
// number of each of lines (blank lines are skipped).
func (m *Memory) readImport(r io.Reader) (lines []exportLine, nos []int, err error) {
	br := bufio.NewReader(r)
	n := 0
	for {
		raw, rerr := br.ReadBytes('\n')
		if rerr != nil && rerr != io.EOF {
			return nil, nil, wrapf(rerr, "import: read line %d", n+1)
		}
		if len(raw) == 0 && rerr == io.EOF {
			break
		}
		n++
		raw = bytes.TrimRight(raw, "\r\n")
		if len(bytes.TrimSpace(raw)) == 0 {
			if rerr == io.EOF {
				break
			}
			continue
		}
		l, err := m.decodeImportLine(raw, n, len(lines) == 0)
		if err != nil {
			return nil, nil, err
		}
		lines = append(lines, l)
		nos = append(nos, n)
		if rerr == io.EOF {
			break
		}
	}
	return lines, nos, nil
}

// decodeImportLine decodes and checks line n of an import; first is true
// for the first line that is not blank.
func (m *Memory) decodeImportLine(raw []byte, n int, first bool) (exportLine, error) {
	var l exportLine
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return l, fmt.Errorf("%w: import line %d: %v", ErrInvalidInput, n, err)
	}
	if dec.More() {
		return l, fmt.Errorf("%w: import line %d: more than one JSON value on the line", ErrInvalidInput, n)
	}
	if err := exportfmt.Validate(l); err != nil {
		return l, fmt.Errorf("%w: import line %d: %v", ErrInvalidInput, n, err)
	}
	if first && l.Kind != "header" {
		return l, fmt.Errorf("%w: import line %d: want a header line first (is this a higmem export?)", ErrInvalidInput, n)
	}
	if l.Kind == "header" && l.Version > ExportVersion {
		return l, fmt.Errorf("%w: import: export version %d is newer than this higmem (%d)", ErrInvalidInput, l.Version, ExportVersion)
	}
	if l.Kind == "turn" {
		if k := len(content(*l.Turn)); k > m.opts.MaxTurnBytes {
			return l, tooLarge("import line %d: turn %q: text is %d bytes, over the limit of %d bytes per turn", n, l.Turn.ID, k, m.opts.MaxTurnBytes)
		}
	}
	return l, nil
}
