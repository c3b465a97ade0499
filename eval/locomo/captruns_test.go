package locomo

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCapTurns: a turn over the cap is cut to fit it (text and caption
// together), on a rune boundary, with a marker that says how much was
// left out; shorter turns are untouched, and Turn sees the cut text.
func TestCapTurns(t *testing.T) {
	long := strings.Repeat("naïve café ", 10000) // 120,000 bytes
	s := Sample{Sessions: []Session{{N: 1, Turns: []Turn{
		{DiaID: "D1:1", Text: "short"},
		{DiaID: "D1:2", Text: long, Caption: "a photo of a cat"},
		{DiaID: "D1:3", Text: "x", Caption: strings.Repeat("é", 50000)},
	}}}}
	s.Turns() // index built before the cut, as Parse does
	cut, largest := s.CapTurns(64 << 10)
	if cut != 2 || largest != len(long)+len("a photo of a cat") {
		t.Fatalf("cut %d, largest %d", cut, largest)
	}
	for _, tr := range s.Turns() {
		if n := len(tr.Text) + len(tr.Caption); n > 64<<10 || !utf8.ValidString(tr.Text) || !utf8.ValidString(tr.Caption) {
			t.Errorf("%s: %d bytes (valid UTF-8: %v %v)", tr.DiaID, n, utf8.ValidString(tr.Text), utf8.ValidString(tr.Caption))
		}
	}
	tr, _ := s.Turn("D1:2")
	if !strings.HasPrefix(tr.Text, "naïve café") || !strings.HasSuffix(tr.Text, " more bytes]") || !strings.Contains(tr.Text, "[…cut: ") ||
		tr.Caption != "a photo of a cat" || len(tr.Text)+len(tr.Caption) < 64<<10-40 {
		t.Errorf("D1:2 cut to %d bytes, ending %q, caption %q", len(tr.Text), tr.Text[len(tr.Text)-40:], tr.Caption)
	}
	if tr, _ := s.Turn("D1:1"); tr.Text != "short" {
		t.Errorf("D1:1 changed: %q", tr.Text)
	}
	if c, _ := s.CapTurns(64 << 10); c != 0 {
		t.Errorf("a second pass cut %d turns", c)
	}
	if c, _ := s.CapTurns(0); c != 0 {
		t.Errorf("no cap cut %d turns", c)
	}
}
