package textnorm

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// The golden files are produced by testdata/gen_nltk.py with real NLTK.

func TestStemMatchesNLTK(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "porter_stems.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		word, want, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("bad golden line %q", line)
		}
		if got := Stem(word); got != want {
			t.Errorf("Stem(%q) = %q, NLTK gives %q", word, got, want)
		}
		n++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 80 {
		t.Fatalf("only %d golden stems; want at least 80", n)
	}
}

func TestStemCases(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"a", "a"},
		{"Is", "is"},
		{"DYING", "dy"}, // NLTK 3.9 looks irregular forms up before lower-casing
		{"Generously", "gener"},
		{"ion", "ion"},
		{"café", "café"},
		{"naïvely", "naïv"},
	}
	for _, tt := range tests {
		if got := Stem(tt.in); got != tt.want {
			t.Errorf("Stem(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestWordTokenizeMatchesNLTK(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "word_tokenize.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var g struct {
			In  string   `json:"in"`
			Out []string `json:"out"`
		}
		if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
			t.Fatalf("bad golden line %q: %v", sc.Text(), err)
		}
		got := WordTokenize(g.In)
		if len(got) == 0 && len(g.Out) == 0 {
			n++
			continue
		}
		if !slices.Equal(got, g.Out) {
			t.Errorf("WordTokenize(%q)\n got  %q\n NLTK %q", g.In, got, g.Out)
		}
		n++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 40 {
		t.Fatalf("only %d golden sentences; want at least 40", n)
	}
}

func TestStopWords(t *testing.T) {
	sw := StopWords()
	if len(sw) != 179 {
		t.Fatalf("len(StopWords()) = %d, want 179", len(sw))
	}
	seen := map[string]bool{}
	for _, w := range sw {
		if seen[w] {
			t.Errorf("duplicate stop word %q", w)
		}
		seen[w] = true
		if !IsStop(w) {
			t.Errorf("IsStop(%q) = false", w)
		}
	}
	sw[0] = "changed"
	if StopWords()[0] != "i" {
		t.Error("StopWords returned the package's own slice")
	}
	for _, w := range []string{"The", "caroline", "support", "", "cannot"} {
		if IsStop(w) {
			t.Errorf("IsStop(%q) = true", w)
		}
	}
}

func TestTokens(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"Hello, World!", []string{"hello", "world"}},
		{"Caroline's LGBTQ support-group", []string{"caroline", "lgbtq", "support", "group"}},
		{"I don't know; she can't", []string{"i", "don", "know", "she", "can"}},
		{"I’m sure they’re fine, we'll see", []string{"i", "sure", "they", "fine", "we", "see"}},
		{"O'Brien's rock'n'roll", []string{"o'brien", "rock'n'roll"}},
		{"'90s kids' toys'", []string{"90s", "kids", "toys"}},
		{"3.5 km at 10:30am on 2023-05-08", []string{"3", "5", "km", "at", "10", "30am", "on", "2023", "05", "08"}},
		{"Ünïcode café ÉTÉ", []string{"ünïcode", "café", "été"}},
		{"[Image: a dog] Look!", []string{"image", "a", "dog", "look"}},
		{"it's", []string{"it"}},
		{"'s", []string{"s"}},
	}
	for _, tt := range tests {
		if got := Tokens(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Tokens(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTerms(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"The the THE a an", nil},
		{"She went to the LGBTQ support group.", []string{"went", "lgbtq", "support", "group"}},
		{"I don't like running marathons!", []string{"like", "run", "marathon"}},
		{"Caroline's adoption plans are generously supported", []string{"carolin", "adopt", "plan", "gener", "support"}},
	}
	for _, tt := range tests {
		if got := Terms(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Terms(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzWordTokenize(f *testing.F) {
	for _, s := range []string{"She went.", `"a" 'b' (c) d's e'll n't`, "...", "'", "a,b:c", "cannot'tis"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		for _, tok := range WordTokenize(s) {
			if tok == "" || strings.ContainsFunc(tok, pyIsSpace) {
				t.Fatalf("WordTokenize(%q) gave bad token %q", s, tok)
			}
		}
	})
}

func FuzzStemAndTerms(f *testing.F) {
	for _, s := range []string{"generously", "yyyy", "ies", "ied", "alli", "Héllo wörld's", "a'b'c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		if got := Stem(s); !utf8.ValidString(got) {
			t.Fatalf("Stem(%q) = %q is not valid UTF-8", s, got)
		}
		for _, term := range Terms(s) {
			if term == "" || IsStop(term) && Stem(term) != term {
				t.Fatalf("Terms(%q) gave bad term %q", s, term)
			}
		}
	})
}

var benchSentence = "Caroline said she went to the LGBTQ support group yesterday and it was really empowering for her."

func BenchmarkStem(b *testing.B) {
	words := strings.Fields("generously happily relational conditional running marathons supported painting counselor")
	for b.Loop() {
		for _, w := range words {
			Stem(w)
		}
	}
}

func BenchmarkTerms(b *testing.B) {
	for b.Loop() {
		Terms(benchSentence)
	}
}

func BenchmarkWordTokenize(b *testing.B) {
	for b.Loop() {
		WordTokenize(benchSentence)
	}
}

// FuzzTokensFastPath checks the ASCII fast path of Tokens and TokensSeq, and
// the stem memo of Terms, against the general path they stand in for.
func FuzzTokensFastPath(f *testing.F) {
	for _, s := range []string{"Caroline's LGBTQ support group was so powerful!", "running runs ran", "Ça va? Très bien", "don't I'm O'Brien", "",
		"a''b 'tis ab' x'y'z it's'", "We'LL go, they'VE O'NEIL's 3.5 well-known", "rock'n'roll ''' 'a' b's", "IT'S 'S's"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := appendTokens(nil, s)
		if got := Tokens(s); !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Fatalf("Tokens(%q) = %q, general path %q", s, got, want)
		}
		var seq []string
		for tok := range TokensSeq(s) {
			seq = append(seq, tok)
		}
		if !slices.Equal(seq, want) {
			t.Fatalf("TokensSeq(%q) = %q, general path %q", s, seq, want)
		}
		for tok := range TokensSeq(s) {
			if len(want) == 0 || tok != want[0] {
				t.Fatalf("TokensSeq(%q) stopped early gave %q, want %q", s, tok, want)
			}
			break
		}
		var terms []string
		for _, tok := range want {
			if !IsStop(tok) {
				terms = append(terms, Stem(tok))
			}
		}
		for range 2 { // cold and memoised
			if got := Terms(s); !slices.Equal(got, terms) && len(got)+len(terms) > 0 {
				t.Fatalf("Terms(%q) = %q, unmemoised %q", s, got, terms)
			}
		}
	})
}

// TestTrimCliticFastPath checks trimClitic, which returns a token with no
// apostrophe where a clitic would start at once, against trimming by
// clitics alone, on short tokens of letters and apostrophes (every clitic
// and every edge case among them).
func TestTrimCliticFastPath(t *testing.T) {
	want := func(tok string) string {
		for _, c := range clitics {
			if len(tok) > len(c) && strings.HasSuffix(tok, c) {
				return tok[:len(tok)-len(c)]
			}
		}
		return tok
	}
	alphabet := "'sltmdrevxa"
	var tok []byte
	var walk func()
	walk = func() {
		s := string(tok)
		if got := trimClitic(s); got != want(s) {
			t.Fatalf("trimClitic(%q) = %q, want %q", s, got, want(s))
		}
		if len(tok) == 5 {
			return
		}
		for i := range len(alphabet) {
			tok = append(tok, alphabet[i])
			walk()
			tok = tok[:len(tok)-1]
		}
	}
	walk()
	for _, c := range clitics {
		if c[0] != '\'' || len(c) < 2 || len(c) > 3 {
			t.Fatalf("clitic %q: trimClitic looks for an apostrophe 2 or 3 bytes from the end", c)
		}
	}
}
