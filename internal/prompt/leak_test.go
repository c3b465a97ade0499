package prompt

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// No prompt may contain text from an evaluation set: a template that
// carries a gold answer (answer.tmpl's temporal examples once were two
// LoCoMo conv-26 answers, verbatim) makes a model that copies its
// instructions score, and turns a correct answer into "copied
// instructions" for memcheck.
//
// The dev sets are not in the repository and never may be, so what CI
// checks against is testdata/evalset_answers.hashes: one line per answer
// n-gram, the first 8 bytes (hex) of SHA-256 over leakSalt and the
// n-gram's folded words. It holds, for every answer of every dev set
// (LoCoMo answer and adversarial_answer, FriendsQA answer and
// all_answers, RealMem answer), the whole answer when it has 2 to
// leakMaxWhole words, and every leakGram-word n-gram of a longer one.
// Neither the answers nor their words can be read back from it.
//
// TestEvalSetHashesCurrent rebuilds the list from the dev files when they
// are present (HIGMEM_DATA_DIR, else the first shared/data found above
// this package) and fails when it differs from the committed one; run it
// with -update-evalset to rewrite it. Without the data it skips, saying
// so; TestNoEvalSetTextInPrompts runs everywhere.

var updateEvalSet = flag.Bool("update-evalset", false, "rewrite testdata/evalset_answers.hashes from the dev data")

const (
	leakSalt     = "higmem-evalset-v1\x00"
	leakMaxWhole = 16 // longest answer hashed whole, in words
	leakGram     = 6  // n-gram length of longer answers
	leakHashes   = "testdata/evalset_answers.hashes"
)

// leakWords folds s to lower-case words of letters and digits, as
// memcheck compares text.
func leakWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// leakHash is the hash of a word sequence as the list stores it.
func leakHash(ws []string) string {
	h := sha256.Sum256([]byte(leakSalt + strings.Join(ws, " ")))
	return hex.EncodeToString(h[:8])
}

// answerHashes returns the sorted hashes of answers (see the comment at
// the top of the file).
func answerHashes(answers []string) []string {
	set := map[string]bool{}
	for _, a := range answers {
		w := leakWords(a)
		switch {
		case len(w) < 2:
			// One word ("Yes", "Sweden", "7") is no text to leak: a
			// template may well say "yes".
		case len(w) <= leakMaxWhole:
			set[leakHash(w)] = true
		}
		if len(w) > leakMaxWhole {
			for i := 0; i+leakGram <= len(w); i++ {
				set[leakHash(w[i:i+leakGram])] = true
			}
		}
	}
	return slices.Sorted(func(yield func(string) bool) {
		for h := range set {
			if !yield(h) {
				return
			}
		}
	})
}

// devDataDir finds the dev data: HIGMEM_DATA_DIR, else the first
// shared/data above the working directory holding locomo_dev.json; "" when
// there is none.
func devDataDir() string {
	if d := os.Getenv("HIGMEM_DATA_DIR"); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		c := filepath.Join(dir, "shared", "data")
		if _, err := os.Stat(filepath.Join(c, "locomo_dev.json")); err == nil {
			return c
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// devAnswers reads every gold answer of the dev sets in dir.
func devAnswers(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	str := func(raw json.RawMessage) {
		if len(raw) == 0 || string(raw) == "null" {
			return
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			out = append(out, s)
			return
		}
		var ss []string
		if json.Unmarshal(raw, &ss) == nil {
			out = append(out, ss...)
			return
		}
		out = append(out, string(raw)) // a number: its digits
	}
	for _, name := range []string{"locomo_dev.json", "friendsqa_dev.json", "realmem_dev.json"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("dev set %s: %v", name, err)
		}
		var samples []struct {
			QA []map[string]json.RawMessage `json:"qa"`
		}
		if err := json.Unmarshal(data, &samples); err != nil {
			t.Fatalf("dev set %s: %v", name, err)
		}
		n := 0
		for _, s := range samples {
			for _, qa := range s.QA {
				for _, k := range []string{"answer", "adversarial_answer", "all_answers"} {
					str(qa[k])
				}
				n++
			}
		}
		if n == 0 {
			t.Fatalf("dev set %s: no questions read", name)
		}
	}
	return out
}

// loadHashes reads the committed hash list.
func loadHashes(t *testing.T) map[string]bool {
	t.Helper()
	f, err := os.Open(leakHashes)
	if err != nil {
		t.Fatalf("%v (rebuild it with the dev data: go test ./internal/prompt -run TestEvalSetHashesCurrent -update-evalset)", err)
	}
	defer f.Close()
	set := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		set[l] = true
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return set
}

// promptTexts returns every text a prompt is made of: each template file
// and each reply schema (whose descriptions the model reads too).
func promptTexts(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := fs.WalkDir(files, "templates", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(path)
		out[path] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range schemas {
		out["schema "+name] = s
	}
	return out
}

// leaks returns the n-grams of text (2 to leakMaxWhole words) whose hash
// is in set.
func leaks(text string, set map[string]bool) []string {
	var found []string
	w := leakWords(text)
	for n := 2; n <= leakMaxWhole; n++ {
		for i := 0; i+n <= len(w); i++ {
			if set[leakHash(w[i:i+n])] {
				found = append(found, strings.Join(w[i:i+n], " "))
			}
		}
	}
	return found
}

// leakAllowed are the answer n-grams a prompt may hold, each with why: the
// protocol's own words, which the sets use as answers because the task
// defines them.
var leakAllowed = map[string]string{
	"not mentioned": `the abstention answer answer.tmpl defines ("Not mentioned in the conversation"); ` +
		`LoCoMo's unanswerable questions are scored against it`,
}

func TestNoEvalSetTextInPrompts(t *testing.T) {
	set := loadHashes(t)
	if len(set) < 1000 {
		t.Fatalf("%s holds %d hashes: not the dev sets' answers", leakHashes, len(set))
	}
	texts := promptTexts(t)
	if len(texts) < len(schemas)+10 {
		t.Fatalf("read %d prompt texts: the templates were not found", len(texts))
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range texts {
			if !yield(k) {
				return
			}
		}
	}) {
		got := slices.DeleteFunc(leaks(texts[name], set), func(g string) bool { return leakAllowed[g] != "" })
		if len(got) > 0 {
			t.Errorf("%s contains text of an evaluation set's answers: %q", name, got)
		}
	}
}

// The hashes of the two LoCoMo conv-26 answers that answer.tmpl's temporal
// instruction once quoted as examples (its text is not repeated here).
var oldExampleHashes = []string{"0d134a427d5e5c2a", "64fec4d7a2239817"}

// TestLeakCheckCatches shows the check finding what it is for: the list
// holds the answers answer.tmpl once quoted, and an n-gram scan finds a
// listed answer inside a longer text, in any case and punctuation.
func TestLeakCheckCatches(t *testing.T) {
	set := loadHashes(t)
	for _, h := range oldExampleHashes {
		if !set[h] {
			t.Errorf("%s lacks %s, an answer answer.tmpl once quoted", leakHashes, h)
		}
	}
	fake := map[string]bool{leakHash(leakWords("14 March 2021")): true}
	got := leaks(`answer with the absolute date, e.g. "14 MARCH 2021" or later.`, fake)
	if !slices.Equal(got, []string{"14 march 2021"}) {
		t.Fatalf("leaks found %q, want [14 march 2021]", got)
	}
	if got := leaks(`answer with the absolute date, e.g. "14 March 2022".`, fake); len(got) != 0 {
		t.Fatalf("leaks found %q in a text without the answer", got)
	}
}

func TestEvalSetHashesCurrent(t *testing.T) {
	dir := devDataDir()
	if dir == "" {
		t.Skip("the dev sets (locomo_dev.json, friendsqa_dev.json, realmem_dev.json) are not here " +
			"(set HIGMEM_DATA_DIR): the committed hash list is checked by TestNoEvalSetTextInPrompts alone")
	}
	hashes := answerHashes(devAnswers(t, dir))
	if *updateEvalSet {
		var b strings.Builder
		fmt.Fprintf(&b, "# SHA-256 (first 8 bytes) of %q + the folded words of each dev-set answer n-gram; see leak_test.go.\n", leakSalt)
		for _, h := range hashes {
			b.WriteString(h)
			b.WriteByte('\n')
		}
		if err := os.WriteFile(leakHashes, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %d hashes to %s", len(hashes), leakHashes)
	}
	have := loadHashes(t)
	if len(have) != len(hashes) {
		t.Fatalf("%s holds %d hashes, the dev data gives %d (run with -update-evalset)", leakHashes, len(have), len(hashes))
	}
	for _, h := range hashes {
		if !have[h] {
			t.Fatalf("%s lacks %s (run with -update-evalset)", leakHashes, h)
		}
	}
}
