package rules

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/higmem/higmem/store"
)

// TestCountFields checks CountFields against len(strings.Fields) on
// strings of ASCII and Unicode white space, letters and invalid UTF-8.
func TestCountFields(t *testing.T) {
	pieces := []string{" ", "\t", "\n", "\v", "\f", "\r", "\u0085", "\u00a0", "\u2003", "\u3000", "a", "Bé", "日本", "\xff", "\xe2\x80", "x\x00y", "'"}
	r := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		s := b.String()
		if got, want := CountFields(s), len(strings.Fields(s)); got != want {
			t.Fatalf("CountFields(%q) = %d, want %d", s, got, want)
		}
	}
}

// TestContentWithoutCaptions checks that Content, which returns the
// trimmed text itself when no attachment has a caption, gives what it
// builds with captions in every other case.
func TestContentWithoutCaptions(t *testing.T) {
	for _, tc := range []struct {
		atts []store.Attachment
		want string
	}{
		{nil, "hello  there"},
		{[]store.Attachment{{Kind: "image"}}, "hello  there"},
		{[]store.Attachment{{Kind: "image", Caption: "a dog"}}, "[Image: a dog]  hello  there"},
		{[]store.Attachment{{Kind: "audio"}, {Kind: "file", Caption: "notes"}}, "[File: notes]  hello  there"},
	} {
		turn := store.Turn{Text: " hello  there \n", Attachments: tc.atts}
		if got := Content(turn); got != tc.want {
			t.Errorf("Content with %v = %q, want %q", tc.atts, got, tc.want)
		}
		if got, want := WordCount(&turn), len(strings.Fields(tc.want)); got != want {
			t.Errorf("WordCount with %v = %d, want %d", tc.atts, got, want)
		}
	}
}

// TestCut checks that Cut keeps short texts, fits long ones in n bytes
// with the marker, cuts on a rune boundary and says how much it left out.
func TestCut(t *testing.T) {
	if got := Cut("short", 5); got != "short" {
		t.Fatalf("Cut kept %q of a text that fits", got)
	}
	s := strings.Repeat("é", 100) // 200 bytes
	got := Cut(s, 60)
	kept, marker, ok := strings.Cut(got, " […cut: ")
	if !ok || len(got) > 60 || !utf8.ValidString(kept) || marker != strconv.Itoa(200-len(kept))+" more bytes]" {
		t.Fatalf("Cut(200 bytes, 60) = %q (%d bytes)", got, len(got))
	}
	if got := Cut(s, 3); !strings.HasPrefix(got, " […cut: 200 more") {
		t.Fatalf("Cut with no room for text = %q", got)
	}
}
