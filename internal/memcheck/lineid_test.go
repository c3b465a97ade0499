package memcheck

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// The regexps turnLine and eventLine stand for.
var (
	turnLineRE  = regexp.MustCompile(`^\[([^\]]+)\] `)
	eventLineRE = regexp.MustCompile(`^\(event ([^)]+)\) `)
)

// TestLineIDMatchesRegexps checks turnLine and eventLine against the
// regexps they replace, on the lines of real prompts and random ones.
func TestLineIDMatchesRegexps(t *testing.T) {
	lines := []string{"", "[", "[]", "[] ", "[a]", "[a] ", "[a]x", "[a]] b", "[[a] b", "[D1:3] 8 May 2023 | Ann: hi",
		"(event e1) Title :: s", "(event ) x", "(event e1)", "(event e1) ", "(event (e1)) x", "(event e1)x", "(eventx e1) y",
		"[ü] x", "[a\nb] c", "[\xff] x", "(event \xff) x"}
	parts := []string{"[", "]", "(", ")", " ", "(event ", "a", "D1:3", "ü", "\xff", "\n", "|", ":"}
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		var b strings.Builder
		for range r.IntN(7) {
			b.WriteString(parts[r.IntN(len(parts))])
		}
		lines = append(lines, b.String())
	}
	for _, l := range lines {
		for _, c := range []struct {
			re *regexp.Regexp
			f  func(string) (string, int, bool)
		}{{turnLineRE, turnLine}, {eventLineRE, eventLine}} {
			id, head, ok := c.f(l)
			m := c.re.FindStringSubmatch(l)
			if ok != (m != nil) || ok && (id != m[1] || head != len(m[0])) {
				t.Fatalf("%q against %s: got %q %d %v, regexp %q", l, c.re, id, head, ok, m)
			}
		}
	}
}
