package bpe

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// vocab loads the fetched vocabulary, or skips: the file is not in the
// repository (CI fetches it with `higmem models fetch --tokenizer`).
func vocab(t testing.TB) *Encoding {
	t.Helper()
	dir := os.Getenv("HIGMEM_MODELS_DIR")
	if dir == "" {
		home, _ := os.UserCacheDir()
		dir = filepath.Join(home, "higmem", "models")
	}
	e, err := Load(Dir(dir))
	if err != nil {
		t.Skipf("o200k_base vocabulary: %v", err)
	}
	return e
}

// Token ids equal tiktoken 0.14.0's o200k_base encode (with
// disallowed_special=()) on texts that exercise every branch of the
// pattern: contractions, numbers, white-space runs before words, CRLF,
// Unicode spaces, scripts without spaces, emoji, JSON.
func TestGoldenTiktoken(t *testing.T) {
	e := vocab(t)
	if e.Len() != 199998 {
		t.Errorf("vocabulary of %d ranks", e.Len())
	}
	b, err := os.ReadFile("testdata/o200k_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Text string `json:"text"`
		IDs  []int  `json:"ids"`
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		got := e.Encode(c.Text)
		if !slices.Equal(got, c.IDs) && !(len(got) == 0 && len(c.IDs) == 0) {
			t.Errorf("%q:\n got  %v\n want %v", c.Text, got, c.IDs)
		}
		if n := e.Count(c.Text); n != len(c.IDs) {
			t.Errorf("Count(%q) = %d, want %d", c.Text, n, len(c.IDs))
		}
	}
}

// Over every turn of the LoCoMo dev file, the total equals tiktoken's
// (94,101 tokens in 3,435 turns). The dev file is not in the repository:
// HIGMEM_LOCOMO_DATA names it, and the test skips without it.
func TestLoCoMoTotal(t *testing.T) {
	path := os.Getenv("HIGMEM_LOCOMO_DATA")
	if path == "" {
		t.Skip("set HIGMEM_LOCOMO_DATA to the LoCoMo dev file (not in the repository) to compare with tiktoken's total")
	}
	e := vocab(t)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var samples []struct {
		Conversation map[string]json.RawMessage `json:"conversation"`
	}
	if err := json.Unmarshal(b, &samples); err != nil {
		t.Fatal(err)
	}
	total, turns := 0, 0
	for _, s := range samples {
		for _, v := range s.Conversation {
			var ts []struct {
				Text string `json:"text"`
			}
			if json.Unmarshal(v, &ts) != nil {
				continue
			}
			for _, tt := range ts {
				total += e.Count(tt.Text)
				turns++
			}
		}
	}
	if turns != 3435 || total != 94101 {
		t.Errorf("%d tokens in %d turns, want 94101 in 3435", total, turns)
	}
}

func TestSplitWhiteSpace(t *testing.T) {
	var got []string
	split("a   b\n\n c  ", func(p string) { got = append(got, p) })
	if strings.Join(got, "|") != "a|  | b|\n\n| c|  " {
		t.Errorf("pieces %q", got)
	}
}

func TestParseRejectsGarbage(t *testing.T) {
	for _, s := range []string{"", "export default {}", `export default {"bpe_ranks":"! x QQ=="}`} {
		if _, err := Parse([]byte(s)); err == nil {
			t.Errorf("Parse(%q) accepted", s)
		}
	}
}

func BenchmarkCount(b *testing.B) {
	e := vocab(b)
	text := strings.Repeat("[D1:3] 8 May 2023 | Caroline: I went to a LGBTQ support group yesterday and it was so powerful. ", 20)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		e.Count(text)
	}
}
