package passage

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// sentences returns n sentences of w words each, numbered so that every
// passage's text can be told apart.
func sentences(n, w int, sep string) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(sep)
		}
		for j := range w {
			if j > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "w%d_%d", i, j)
		}
		b.WriteByte('.')
	}
	return b.String()
}

// check verifies the invariants of Split's result for text.
func check(t *testing.T, text string, spans []Span) {
	t.Helper()
	if len(spans) == 0 {
		if Long(text) {
			t.Fatalf("a long text (%d words) has no passages", Count(text))
		}
		return
	}
	if !Long(text) {
		t.Fatalf("a short text (%d words) has %d passages", Count(text), len(spans))
	}
	if spans[0].Start != 0 || spans[len(spans)-1].End != len(text) {
		t.Fatalf("spans %v do not cover [0,%d)", spans, len(text))
	}
	for i, s := range spans {
		if s.End <= s.Start {
			t.Fatalf("span %d %v is empty", i, s)
		}
		if i > 0 && s.Start != spans[i-1].End {
			t.Fatalf("span %d %v does not start where span %d %v ends", i, s, i-1, spans[i-1])
		}
		if strings.TrimSpace(s.Text(text)) == "" || strings.IndexFunc(text[s.Start:s.End], func(r rune) bool { return !unicode.IsSpace(r) }) < 0 {
			t.Fatalf("span %d %v holds only white space", i, s)
		}
		if utf8.ValidString(text) && !utf8.ValidString(text[s.Start:s.End]) {
			t.Fatalf("span %d %v cuts a character", i, s)
		}
		if n := Count(text[s.Start:s.End]); n > Longest {
			t.Fatalf("span %d has %d words, more than %d", i, n, Longest)
		}
	}
}

func TestSplit(t *testing.T) {
	para := sentences(5, 18, " ") // 90 words
	tests := []struct {
		name string
		text string
		// want is the number of passages; words, when set, the words of
		// each.
		want  int
		words []int
	}{
		{name: "empty", text: "", want: 0},
		{name: "short turn", text: "I adopted a dog last week, her name is Luna.", want: 0},
		{name: "exactly MinWords", text: sentences(6, 20, " "), want: 0},
		{name: "one word over", text: sentences(6, 20, " ") + " x", want: 1},
		{name: "paragraphs", text: para + "\n\n" + para + "\n\n" + para, want: 3, words: []int{90, 90, 90}},
		{name: "sentences only", text: sentences(20, 15, " "), want: 3, words: []int{90, 90, 120}},
		{name: "no punctuation", text: strings.Repeat("word ", 400), want: 4, words: []int{90, 90, 90, 130}},
		{name: "one long run", text: strings.Repeat("x", 64*1024), want: 11},
		{name: "white space around", text: "\n\n  " + para + "\n\n" + para + "  \n", want: 2, words: []int{90, 90}},
		{name: "multibyte", text: strings.Repeat("café naïve 日本語 — ok. ", 60), want: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spans := Split(tt.text)
			check(t, tt.text, spans)
			if len(spans) != tt.want {
				t.Fatalf("got %d passages %v, want %d", len(spans), spans, tt.want)
			}
			if tt.words != nil {
				var got []int
				for _, s := range spans {
					got = append(got, Count(tt.text[s.Start:s.End]))
				}
				if !slices.Equal(got, tt.words) {
					t.Fatalf("words per passage %v, want %v", got, tt.words)
				}
			}
		})
	}
}

// TestSplitParagraphBoundary checks that a cut prefers a paragraph break
// to a sentence end nearer the target.
func TestSplitParagraphBoundary(t *testing.T) {
	text := sentences(3, 20, " ") + "\n\n" + sentences(8, 20, " ")
	spans := Split(text)
	check(t, text, spans)
	if got := spans[0].Text(text); !strings.HasSuffix(got, "w2_19.") {
		t.Fatalf("first passage ends %q, want the paragraph's end", got[max(0, len(got)-20):])
	}
}

func FuzzSplit(f *testing.F) {
	f.Add(sentences(10, 20, "\n"))
	f.Add(strings.Repeat("a ", 300))
	f.Add(strings.Repeat("日本語の文章。", 200))
	f.Add(strings.Repeat("é", 2000) + " " + strings.Repeat("b. ", 200))
	f.Add("\xff\xfe " + strings.Repeat("z ", 200))
	f.Fuzz(func(t *testing.T, text string) {
		a := Split(text)
		check(t, text, a)
		if b := Split(text); !slices.Equal(a, b) {
			t.Fatalf("not deterministic: %v then %v", a, b)
		}
	})
}
