package higmem

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/higmem/higmem/store"
)

// ExportVersion is the version of the JSONL export format.
const ExportVersion = 1

// exportLine is one line of an export: a header, then turns, annotations,
// events and links. Vectors are not exported; Import recomputes them with
// the importing memory's embedder.
type exportLine struct {
	Kind       string            `json:"kind"` // header, turn, annotation, event, link
	Version    int               `json:"version,omitempty"`
	Space      *store.Space      `json:"space,omitempty"`
	ExportedAt *time.Time        `json:"exported_at,omitempty"`
	Turn       *store.Turn       `json:"turn,omitempty"`
	Annotation *store.Annotation `json:"annotation,omitempty"`
	Event      *store.Event      `json:"event,omitempty"`
	Link       *store.Link       `json:"link,omitempty"`
}

// Export writes a space as JSON lines: a header line, then every turn,
// annotation, event and link. The output can be read back with Import.
func (m *Memory) Export(ctx context.Context, sp Space, w io.Writer) error {
	if err := m.check(sp); err != nil {
		return err
	}
	turns, err := m.store.ListTurns(ctx, sp, store.TurnQuery{})
	if err != nil {
		return fmt.Errorf("higmem: export: %w", err)
	}
	anns, err := m.store.ListAnnotations(ctx, sp, nil)
	if err != nil {
		return fmt.Errorf("higmem: export: %w", err)
	}
	events, err := m.store.ListEvents(ctx, sp)
	if err != nil {
		return fmt.Errorf("higmem: export: %w", err)
	}
	links, err := m.store.ListLinks(ctx, sp, nil)
	if err != nil {
		return fmt.Errorf("higmem: export: %w", err)
	}
	now := m.now().UTC()
	lines := []exportLine{{Kind: "header", Version: ExportVersion, Space: &sp, ExportedAt: &now}}
	for i := range turns {
		lines = append(lines, exportLine{Kind: "turn", Turn: &turns[i]})
	}
	for i := range anns {
		lines = append(lines, exportLine{Kind: "annotation", Annotation: &anns[i]})
	}
	for i := range events {
		lines = append(lines, exportLine{Kind: "event", Event: &events[i]})
	}
	for i := range links {
		lines = append(lines, exportLine{Kind: "link", Link: &links[i]})
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			return fmt.Errorf("higmem: export: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("higmem: export: %w", err)
	}
	return nil
}

// ImportResult reports what Import stored.
type ImportResult struct {
	Turns       int `json:"turns"`
	Skipped     int `json:"skipped"`
	Annotations int `json:"annotations"`
	Events      int `json:"events"`
	Links       int `json:"links"`
}

// Import reads an export (see Export) into space sp, which may differ from
// the exported one. Everything is validated first and written in one
// transaction: a bad line rejects the whole import, naming the line. Turns
// already stored identically are skipped; a different turn with the same id
// fails with ErrConflict. Imported events and annotations replace existing
// ones with the same id. Vectors are recomputed with this memory's embedder
// the next time the space is used.
func (m *Memory) Import(ctx context.Context, sp Space, r io.Reader) (*ImportResult, error) {
	st, err := m.lockSpace(ctx, sp)
	if err != nil {
		return nil, err
	}
	defer st.writeMu.Unlock()

	var lines []exportLine
	var nos []int // the line number of each of lines
	br := bufio.NewReader(r)
	n := 0
	for {
		raw, rerr := br.ReadBytes('\n')
		if rerr != nil && rerr != io.EOF {
			return nil, fmt.Errorf("higmem: import: read line %d: %w", n+1, rerr)
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
		var l exportLine
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			return nil, fmt.Errorf("%w: import line %d: %v", ErrInvalidInput, n, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("%w: import line %d: more than one JSON value on the line", ErrInvalidInput, n)
		}
		if err := validateLine(l); err != nil {
			return nil, fmt.Errorf("%w: import line %d: %v", ErrInvalidInput, n, err)
		}
		if len(lines) == 0 && l.Kind != "header" {
			return nil, fmt.Errorf("%w: import line %d: want a header line first (is this a higmem export?)", ErrInvalidInput, n)
		}
		if l.Kind == "header" && l.Version > ExportVersion {
			return nil, fmt.Errorf("%w: import: export version %d is newer than this higmem (%d)", ErrInvalidInput, l.Version, ExportVersion)
		}
		if l.Kind == "turn" {
			if k := len(content(*l.Turn)); k > m.opts.MaxTurnBytes {
				return nil, tooLarge("import line %d: turn %q: text is %d bytes, over the limit of %d bytes per turn", n, l.Turn.ID, k, m.opts.MaxTurnBytes)
			}
		}
		lines = append(lines, l)
		nos = append(nos, n)
		if rerr == io.EOF {
			break
		}
	}
	st.mu.RLock()
	err = checkImport(st, lines, nos)
	st.mu.RUnlock()
	if err != nil {
		return nil, err
	}

	res := &ImportResult{}
	now := m.now().UTC()
	err = m.store.Update(ctx, func(tx store.Tx) error {
		*res = ImportResult{}
		head, err := tx.Lock(ctx, sp)
		if err != nil {
			return err
		}
		next := head.LastSeq + 1
		for _, l := range lines {
			switch l.Kind {
			case "turn":
				t := *l.Turn
				t.Space = sp
				if old, err := tx.GetTurn(ctx, sp, t.ID); err == nil {
					if !sameTurn(old, t) {
						return fmt.Errorf("%w: turn %q", ErrConflict, t.ID)
					}
					res.Skipped++
					continue
				} else if !errors.Is(err, store.ErrNotFound) {
					return err
				}
				t.Seq = next
				next++
				if t.RecordedAt.IsZero() {
					t.RecordedAt = now
				}
				if _, err := tx.PutTurn(ctx, t); err != nil {
					return fmt.Errorf("turn %q: %w", t.ID, err)
				}
				res.Turns++
			case "annotation":
				if err := tx.PutAnnotation(ctx, sp, *l.Annotation); err != nil {
					return fmt.Errorf("annotation of %q: %w", l.Annotation.TurnID, err)
				}
				res.Annotations++
			case "event":
				e := *l.Event
				e.Space = sp
				if err := tx.PutEvent(ctx, e); err != nil {
					return fmt.Errorf("event %q: %w", e.ID, err)
				}
				if err := appendChange(ctx, tx, sp, "event", e.ID, "import", "import", nil, e, now); err != nil {
					return err
				}
				res.Events++
			case "link":
				if err := tx.PutLink(ctx, sp, *l.Link); err != nil {
					return fmt.Errorf("link %s->%s: %w", l.Link.Source, l.Link.Target, err)
				}
				res.Links++
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("higmem: import: %w", err)
	}
	m.invalidate(sp)
	return res, nil
}

// validateLine checks that a line carries the record its kind names.
func validateLine(l exportLine) error {
	ok := false
	switch l.Kind {
	case "header":
		ok = l.Version > 0
	case "turn":
		ok = l.Turn != nil && l.Turn.ID != "" && content(*l.Turn) != ""
	case "annotation":
		ok = l.Annotation != nil && l.Annotation.TurnID != ""
	case "event":
		ok = l.Event != nil && l.Event.ID != ""
	case "link":
		ok = l.Link != nil && l.Link.Source != "" && l.Link.Target != ""
	default:
		return fmt.Errorf("unknown kind %q", l.Kind)
	}
	if !ok {
		return fmt.Errorf("%s line misses its record or its id", l.Kind)
	}
	return nil
}
