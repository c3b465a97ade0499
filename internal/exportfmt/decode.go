package exportfmt

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/higmem/higmem/internal/rules"
)

// LineError is a line of an import that is not read: a read error (Read
// set), else an invalid line (over the turn size cap when TooLarge).
type LineError struct {
	Msg      string // what is wrong, naming the line
	Read     error  // the reader's error
	TooLarge bool
}

func (e *LineError) Error() string { return e.Msg }

// ReadLines reads the lines of an export, each decoded and checked alone
// (Validate, a header first, a version at most version, turns of at most
// maxTurnBytes); nos holds the line number of each of lines (blank lines
// are skipped). Its errors are *LineError.
func ReadLines(r io.Reader, version, maxTurnBytes int) (lines []Line, nos []int, err error) {
	br := bufio.NewReader(r)
	n := 0
	for {
		raw, rerr := br.ReadBytes('\n')
		if rerr != nil && rerr != io.EOF {
			return nil, nil, &LineError{Msg: fmt.Sprintf("import: read line %d", n+1), Read: rerr}
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
		l, err := decodeLine(raw, n, len(lines) == 0, version, maxTurnBytes)
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

// decodeLine decodes and checks line n of an import; first is true for
// the first line that is not blank.
func decodeLine(raw []byte, n int, first bool, version, maxTurnBytes int) (Line, error) {
	var l Line
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return l, &LineError{Msg: fmt.Sprintf("import line %d: %v", n, err)}
	}
	if dec.More() {
		return l, &LineError{Msg: fmt.Sprintf("import line %d: more than one JSON value on the line", n)}
	}
	if err := Validate(l); err != nil {
		return l, &LineError{Msg: fmt.Sprintf("import line %d: %v", n, err)}
	}
	if first && l.Kind != "header" {
		return l, &LineError{Msg: fmt.Sprintf("import line %d: want a header line first (is this a higmem export?)", n)}
	}
	if l.Kind == "header" && l.Version > version {
		return l, &LineError{Msg: fmt.Sprintf("import: export version %d is newer than this higmem (%d)", l.Version, version)}
	}
	if l.Kind == "turn" {
		if k := len(rules.Content(*l.Turn)); k > maxTurnBytes {
			return l, &LineError{Msg: fmt.Sprintf("import line %d: turn %q: text is %d bytes, over the limit of %d bytes per turn", n, l.Turn.ID, k, maxTurnBytes), TooLarge: true}
		}
	}
	return l, nil
}
