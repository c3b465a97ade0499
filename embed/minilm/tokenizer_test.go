package minilm

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func tinyTokenizer(t testing.TB, maxLen int) *Tokenizer {
	t.Helper()
	tok, err := LoadTokenizer(filepath.Join("testdata", "tiny_vocab.txt"), TokenizerOptions{Lowercase: true, MaxLen: maxLen})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestTokenizerTinyVocab(t *testing.T) {
	// Ids follow the line numbers of testdata/tiny_vocab.txt:
	// [PAD]0 [UNK]1 [CLS]2 [SEP]3 [MASK]4 hello5 world6 un7 ##aff8 ##able9
	// ,10 !11 '12 s13 cafe14 我15 ᄋ16 ##ᅡ17 ##ᆫ18 [19 ]20 image21 :22 a23
	// ##a24 dog25 e26 -27 mail28
	tests := []struct {
		name   string
		text   string
		maxLen int
		want   []int32
	}{
		{"punctuation and case", "Hello, World!", 0, []int32{2, 5, 10, 6, 11, 3}},
		{"wordpiece", "unaffable", 0, []int32{2, 7, 8, 9, 3}},
		{"wordpiece failure makes the whole word unk", "unaffablex", 0, []int32{2, 1, 3}},
		{"accents stripped", "CAFÉ", 0, []int32{2, 14, 3}},
		{"combining accent stripped", "cafe\u0301", 0, []int32{2, 14, 3}},
		{"cjk split per char", "我是", 0, []int32{2, 15, 1, 3}},
		{"hangul decomposed to jamo", "안", 0, []int32{2, 16, 17, 18, 3}},
		{"image caption", "[Image: a dog]", 0, []int32{2, 19, 21, 22, 23, 25, 20, 3}},
		{"literal special tokens", "[SEP]hello[MASK]", 0, []int32{2, 3, 5, 4, 3}},
		{"special tokens are case sensitive", "[sep]", 0, []int32{2, 19, 1, 20, 3}},
		{"empty", "", 0, []int32{2, 3}},
		{"only whitespace", " \t\n\u3000", 0, []int32{2, 3}},
		{"hyphen", "e-mail", 0, []int32{2, 26, 27, 28, 3}},
		{"apostrophe", "dog's", 0, []int32{2, 25, 12, 13, 3}},
		{"zero width space removed", "hello\u200bworld", 0, []int32{2, 1, 3}},
		{"nul removed", "hello\x00world", 0, []int32{2, 1, 3}},
		{"nbsp splits", "hello\u00a0world", 0, []int32{2, 5, 6, 3}},
		{"replacement char removed", "hel\ufffdlo", 0, []int32{2, 5, 3}},
		{"invalid utf8 removed", "hel\xfflo", 0, []int32{2, 5, 3}},
		{"101 chars is unk", strings.Repeat("a", 101), 0, []int32{2, 1, 3}},
		{"truncation", "hello world hello", 4, []int32{2, 5, 6, 3}},
		{"truncation of specials", "[SEP][SEP][SEP]", 3, []int32{2, 3, 3}},
		{"truncation exact fit", "hello world", 4, []int32{2, 5, 6, 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tinyTokenizer(t, tc.maxLen).Encode(tc.text)
			if !slices.Equal(got, tc.want) {
				t.Errorf("Encode(%q) = %v, want %v", tc.text, got, tc.want)
			}
		})
	}
}

func TestTokenizerHundredChars(t *testing.T) {
	got := tinyTokenizer(t, 0).Encode(strings.Repeat("a", 100))
	want := append([]int32{2, 23}, slices.Repeat([]int32{24}, 99)...)
	want = append(want, 3)
	if !slices.Equal(got, want) {
		t.Errorf("100 a's: got %d ids %v..., want a + 99 ##a", len(got), got[:min(5, len(got))])
	}
}

func TestNewTokenizerErrors(t *testing.T) {
	if _, err := NewTokenizer([]string{"[CLS]", "[SEP]"}, TokenizerOptions{}); err == nil {
		t.Error("vocabulary without [UNK] accepted")
	}
	if _, err := NewTokenizer([]string{"[CLS]", "[SEP]", "[UNK]"}, TokenizerOptions{MaxLen: 1}); err == nil {
		t.Error("MaxLen 1 accepted")
	}
	if _, err := LoadTokenizer(filepath.Join(t.TempDir(), "missing.txt"), TokenizerOptions{}); err == nil {
		t.Error("missing vocabulary file accepted")
	}
}

type goldenTokens struct {
	Versions map[string]any `json:"versions"`
	Cases    []struct {
		Text string  `json:"text"`
		IDs  []int32 `json:"ids"`
	} `json:"cases"`
}

// TestTokenizerGolden compares against ids recorded from the reference HF
// tokenizer (testdata/gen_golden.py) using the committed vocab.txt.
func TestTokenizerGolden(t *testing.T) {
	tok, err := LoadTokenizer(filepath.Join("testdata", "vocab.txt"), TokenizerOptions{Lowercase: true, MaxLen: 256})
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{"golden_tokens.json", "golden_vectors.json"} {
		var g goldenTokens
		readJSON(t, filepath.Join("testdata", file), &g)
		if len(g.Cases) == 0 {
			t.Fatalf("%s: no cases", file)
		}
		for i, c := range g.Cases {
			got := tok.Encode(c.Text)
			if !slices.Equal(got, c.IDs) {
				t.Errorf("%s case %d %q:\n got %v\nwant %v", file, i, c.Text, got, c.IDs)
			}
		}
	}
}

func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestTokenizerEveryCodePoint checks normalisation and pre-tokenisation of
// every code point against a dump of the reference (see
// testdata/dump_codepoints.py). The dump is large and not committed, so the
// test runs only when HIGMEM_TOKENIZER_CPREF names it.
func TestTokenizerEveryCodePoint(t *testing.T) {
	path := os.Getenv("HIGMEM_TOKENIZER_CPREF")
	if path == "" {
		t.Skip("HIGMEM_TOKENIZER_CPREF not set (see testdata/dump_codepoints.py)")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tok := tinyTokenizer(t, 0)
	hexRunes := func(field string) string {
		var b strings.Builder
		for _, h := range strings.Fields(field) {
			r, err := strconv.ParseUint(h, 16, 32)
			if err != nil {
				t.Fatalf("bad code point %q", h)
			}
			b.WriteRune(rune(r))
		}
		return b.String()
	}
	sc := bufio.NewScanner(f)
	n, bad := 0, 0
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) != 3 {
			t.Fatalf("bad line %q", sc.Text())
		}
		r := []rune(hexRunes(cols[0]))[0]
		n++
		s := string(r)
		wantNorm := hexRunes(cols[1])
		var wantPieces []string
		for _, p := range strings.Split(cols[2], "|") {
			wantPieces = append(wantPieces, hexRunes(p))
		}
		gotNorm := tok.normalize(s)
		var gotPieces []string
		splitWords("a"+s+"b", func(w string) { gotPieces = append(gotPieces, w) })
		// The pre-tokenizer only ever sees runes that text cleaning keeps.
		if wantNorm == "" {
			gotPieces = wantPieces
		}
		if gotNorm != wantNorm || !slices.Equal(gotPieces, wantPieces) {
			bad++
			if bad <= 30 {
				t.Errorf("U+%04X: normalize %+q want %+q; pieces %+q want %+q", r, gotNorm, wantNorm, gotPieces, wantPieces)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 1_000_000 {
		t.Fatalf("only %d code points in %s", n, path)
	}
	if bad > 0 {
		t.Errorf("%d of %d code points differ", bad, n)
	}
}

func FuzzTokenizer(f *testing.F) {
	for _, s := range []string{"Hello, World!", "[SEP]x[CLS", "Café 我 안 🐶", "\x00\xff\u200b", strings.Repeat("ab", 80)} {
		f.Add(s)
	}
	full, err := LoadTokenizer(filepath.Join("testdata", "vocab.txt"), TokenizerOptions{Lowercase: true})
	if err != nil {
		f.Fatal(err)
	}
	short, err := LoadTokenizer(filepath.Join("testdata", "vocab.txt"), TokenizerOptions{Lowercase: true, MaxLen: 8})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids := full.Encode(s)
		if len(ids) < 2 || ids[0] != full.cls || ids[len(ids)-1] != full.sep {
			t.Fatalf("Encode(%q) = %v: not framed by [CLS] [SEP]", s, ids)
		}
		for _, id := range ids {
			if id < 0 || int(id) >= full.VocabSize() {
				t.Fatalf("Encode(%q): id %d out of range", s, id)
			}
		}
		cut := short.Encode(s)
		if len(cut) > 8 || cut[len(cut)-1] != short.sep {
			t.Fatalf("MaxLen 8: Encode(%q) = %v", s, cut)
		}
		if !slices.Equal(cut[:len(cut)-1], ids[:len(cut)-1]) {
			t.Fatalf("truncated ids %v are not a prefix of %v", cut, ids)
		}
	})
}
