package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/higmem/higmem/api"
)

// Human output of every command goes through safe: stored text (turns,
// speakers, ids, event titles, model output) may hold terminal escape
// sequences, which would otherwise drive the user's terminal. --json output
// is exact.

// safe returns s with control characters (C0, DEL, C1 — ESC among them),
// invalid UTF-8, and the invisible characters that reorder or break lines
// (bidirectional overrides, line and paragraph separators) shown as Go
// escapes: "\x1b[31m" prints as `\x1b[31m`, a newline as `\n`.
func safe(s string) string {
	clean := true
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if needsEscape(r, n) {
			clean = false
			break
		}
		i += n
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !needsEscape(r, n) {
			b.WriteString(s[i : i+n])
			i += n
			continue
		}
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += n
	}
	return b.String()
}

func needsEscape(r rune, size int) bool {
	switch {
	case r == utf8.RuneError && size == 1:
		return true
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x2028, r == 0x2029, r == 0x061c:
		return true
	}
	return false
}

// safeLines is safe for a message that may span lines: each line is
// escaped, the line breaks are kept.
func safeLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = safe(l)
	}
	return strings.Join(lines, "\n")
}

// safeJoin escapes and joins a list.
func safeJoin(ss []string, sep string) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = safe(s)
	}
	return strings.Join(out, sep)
}

// answer runs one operation of memoryAPI on the space of the global flags
// and prints its result: with --json the REST response of the operation,
// else print's human form. The space is known only once the memory is
// open (against a server, it may be the API key's user).
func answer[T any](cmd *cobra.Command, a *app, call func(ctx context.Context, m memoryAPI, sc api.Scope) (T, error), print func(w io.Writer, v T)) error {
	m, err := a.memory(cmd.Context())
	if err != nil {
		return err
	}
	v, err := call(cmd.Context(), m, a.scope())
	if err != nil {
		return err
	}
	if a.jsonOut {
		return writeJSON(cmd.OutOrStdout(), v)
	}
	print(cmd.OutOrStdout(), v)
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printAddResult(w io.Writer, res *api.AddResponse) {
	fmt.Fprintf(w, "added %d turn(s)", len(res.Added))
	if len(res.Skipped) > 0 {
		fmt.Fprintf(w, ", %d already stored", len(res.Skipped))
	}
	if len(res.Events) > 0 {
		fmt.Fprintf(w, "; events touched: %s", safeJoin(res.Events, ", "))
	}
	fmt.Fprintln(w)
	for _, warn := range res.Warnings {
		fmt.Fprintln(w, "warning:", safe(warn))
	}
}

func printEvidence(w io.Writer, ev []api.Evidence) {
	if len(ev) == 0 {
		fmt.Fprintln(w, "Evidence: none found")
		return
	}
	fmt.Fprintln(w, "Evidence (chronological):")
	for _, e := range ev {
		date := e.Date
		if date == "" {
			date = "unknown date"
		}
		text := e.Turn.Text
		for _, at := range e.Turn.Attachments {
			if at.Caption != "" {
				text = "[Image: " + at.Caption + "] " + text
			}
		}
		times := ""
		if len(e.Times) > 0 {
			times = " (" + strings.Join(e.Times, "; ") + ")"
		}
		fmt.Fprintf(w, "  [%s] %s | %s: %s%s  ← %s\n", safe(e.Turn.ID), safe(date), safe(e.Turn.Speaker), safe(text),
			safe(times), safeJoin(e.Sources, "+"))
	}
}

func printTrace(w io.Writer, t *api.Trace) {
	fmt.Fprintf(w, "\nTrace (mode %s, query by %s: %q, temporal %v):\n", t.Mode, t.Query.By, t.Query.Keywords, t.Query.Temporal)
	for _, s := range t.Stages {
		fmt.Fprintf(w, "  %-10s %3d  %s\n", s.Name, len(s.IDs), safeJoin(s.IDs, " "))
	}
	if len(t.Calls) > 0 {
		fmt.Fprintf(w, "  LLM calls (%d, %d sequential rounds):\n", len(t.Calls), t.Rounds)
		for _, c := range t.Calls {
			errNote := ""
			if c.Error != "" {
				errNote = "  error: " + safe(c.Error)
			}
			fmt.Fprintf(w, "    round %d %-7s %-13s %5d+%-4d tokens %8s%s\n", c.Round, c.Role, c.Operation,
				c.Usage.PromptTokens, c.Usage.CompletionTokens, c.Latency.Round(time.Microsecond), errNote)
		}
	}
	for _, n := range t.Notes {
		fmt.Fprintln(w, "  note:", safe(n))
	}
	fmt.Fprintf(w, "  elapsed %s\n", t.Elapsed.Round(time.Microsecond))
}

// progress returns a progress bar on stderr, hidden when stderr is not a
// terminal or --quiet is set.
func (a *app) progress(n int, desc string) *progressbar.ProgressBar {
	return progressbar.NewOptions(n,
		progressbar.OptionSetWriter(a.stderr),
		progressbar.OptionSetVisibility(a.showProgress()),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
}

// showProgress reports whether progress bars are drawn: stderr is a
// terminal and --quiet is not set.
func (a *app) showProgress() bool {
	if a.quiet {
		return false
	}
	f, ok := a.stderr.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
