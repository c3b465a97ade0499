// Package rules makes memory records by rule: the text forms of turns and
// events (what is embedded, indexed, windowed), a turn's annotation
// (keywords, entities, resolved times, a context line), the similarity
// tests that put turns into events, an event's extractive summary, and the
// cleaning and capping of what model replies write into records. It reads
// the store's records and never the engine: the root package hands it turns
// and events (offline_segment.go, build_llm.go).
package rules

import (
	"fmt"
	"strings"

	"github.com/higmem/higmem/store"
)

// Content is the turn text with any image caption, as the reference formats
// it: "[Image: caption] text".
func Content(t store.Turn) string {
	if !HasCaption(t.Attachments) {
		return strings.TrimSpace(t.Text) // no copy of the text
	}
	var b strings.Builder
	for _, a := range t.Attachments {
		if a.Caption == "" {
			continue
		}
		kind := "Image"
		if a.Kind != "" && a.Kind != "image" {
			kind = strings.ToUpper(a.Kind[:1]) + a.Kind[1:]
		}
		fmt.Fprintf(&b, "[%s: %s] ", kind, a.Caption)
	}
	b.WriteString(t.Text)
	return strings.TrimSpace(b.String())
}

// HasCaption reports whether an attachment has a caption (Content shows
// only those).
func HasCaption(as []store.Attachment) bool {
	for _, a := range as {
		if a.Caption != "" {
			return true
		}
	}
	return false
}

// EmbedText is what a turn's vector embeds (the reference's form).
func EmbedText(t store.Turn) string { return EmbedForm(t.Speaker, t.OccurredRaw, Content(t)) }

// EmbedForm is the form EmbedText gives a turn, for any content (a passage
// of the turn embeds in the same form).
func EmbedForm(speaker, time, content string) string {
	return "Speaker: " + speaker + ". Time: " + time + ". Content: " + content
}

// LexText is what the BM25 index holds for a turn.
func LexText(t store.Turn) string {
	return t.Speaker + " " + Content(t)
}

// EventText is what an event's vector and BM25 entry hold: keywords, tags,
// title and summary (the reference's metadata mode plus the summary).
func EventText(e store.Event) string {
	parts := []string{strings.Join(e.Keywords, " "), strings.Join(e.Tags, " "), e.Title}
	if e.Summary != "" && e.Summary != e.Title {
		parts = append(parts, e.Summary)
	}
	return strings.Join(parts, " ")
}

// FirstSentence returns text up to the end of its first sentence.
func FirstSentence(text string) string {
	for i, r := range text {
		if (r == '.' || r == '!' || r == '?') && i > 20 {
			return text[:i+1]
		}
	}
	return text
}

// Truncate shortens s to at most n bytes on a rune boundary, adding "…".
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !RuneStart(s[n]) {
		n--
	}
	return strings.TrimSpace(s[:n]) + "…"
}

// cutMarker marks where a text was cut to fit a budget; it says how much
// was left out.
func cutMarker(left int) string {
	return fmt.Sprintf(" […cut: %d more bytes]", left)
}

// Cut shortens s to at most n bytes on a rune boundary (n counts the
// marker too, when there is room for it), ending with a marker that says
// how many bytes were left out (docs/LIMITS.md).
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	keep := n - len(cutMarker(len(s)))
	if keep < 0 {
		keep = 0
	}
	for keep > 0 && !RuneStart(s[keep]) {
		keep--
	}
	return s[:keep] + cutMarker(len(s)-keep)
}

// RuneStart reports whether b starts a UTF-8 sequence.
func RuneStart(b byte) bool { return b&0xC0 != 0x80 }
