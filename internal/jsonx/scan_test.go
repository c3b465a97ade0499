package jsonx

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestScannerTokens walks a document with every Scanner method, and
// checks where each one stops and what it refuses.
func TestScannerTokens(t *testing.T) {
	r := Scanner{Text: " \t{\"a\" :\n[ \"é\", true ,null,-1.5e+3 ]\r}  x"}
	step := func(what string, ok bool) {
		t.Helper()
		if !ok {
			t.Fatalf("%s: refused at %d (%q)", what, r.Pos, r.Text[r.Pos:])
		}
	}
	step("Peek {", r.Peek() == '{')
	step("Byte {", r.Byte('{'))
	step("Byte } refused", !r.Byte('}') && r.Peek() == '"')
	text, ok := r.Str()
	step("Str a", ok && text == "a")
	step("Byte :", r.Byte(':'))
	step("Byte [", r.Byte('['))
	r.Space()
	text, ok = r.Str()
	step("Str é", ok && text == "é")
	more, ok := r.Next(']')
	step("Next ,", ok && more)
	r.Space()
	step("Literal tru refused", !r.Literal("truex") && r.Peek() == 't')
	step("Literal true", r.Literal("true"))
	more, ok = r.Next(']')
	step("Next , again", ok && more)
	r.Space()
	step("Literal null", r.Literal("null"))
	more, ok = r.Next(']')
	step("Next , before a number", ok && more)
	r.Space()
	num, ok := r.Number()
	step("Number", ok && num == "-1.5e+3")
	more, ok = r.Next(']')
	step("Next ]", ok && !more)
	more, ok = r.Next(',')
	step("Next refuses }", !ok && !more && r.Peek() == '}')
	step("Byte }", r.Byte('}'))
	step("End refused", !r.End() && r.Pos == len(r.Text)-1)
	r.Pos++
	step("End", r.End())
	step("Peek at the end", r.Peek() == 0)
	_, ok = r.Str()
	step("Str at the end", !ok)
	_, ok = r.Number()
	step("Number at the end", !ok)
}

// TestScannerStr checks the strings Str reads and those it refuses,
// with and without NoLineSep, and that a refusal leaves Pos where it was.
func TestScannerStr(t *testing.T) {
	for _, c := range []struct {
		text string
		want string // "" for a refusal, when ok is false
		ok   bool
		// lineSep is true when the string holds U+2028 or U+2029:
		// NoLineSep refuses it.
		lineSep bool
	}{
		{`"abc" x`, "abc", true, false},
		{`""`, "", true, false},
		{`"日本\u00e9"`, "", false, false},
		{"\"日本\"", "日本", true, false},
		{"\"a\u2028b\"", "a\u2028b", true, true},
		{"\"\u2029\"", "\u2029", true, true},
		{"\"\u2027\u202a\"", "\u2027\u202a", true, false},
		{`"a\"b"`, "", false, false},
		{`"a\\"`, "", false, false},
		{"\"a\tb\"", "", false, false},
		{"\"a\x1fb\"", "", false, false},
		{"\"a\x7fb\"", "a\x7fb", true, false},
		{"\"\xff\"", "", false, false},
		{"\"\xe2\x80\"", "", false, false},
		{`"abc`, "", false, false},
		{`abc"`, "", false, false},
		{` "abc"`, "", false, false}, // Str does not skip white space
	} {
		for _, noLineSep := range []bool{false, true} {
			r := Scanner{Text: c.text, NoLineSep: noLineSep}
			got, ok := r.Str()
			wantOK := c.ok && !(noLineSep && c.lineSep)
			want := c.want
			if !wantOK {
				want = ""
			}
			if got != want || ok != wantOK {
				t.Errorf("Str(%q), NoLineSep %v = %q, %v; want %q, %v", c.text, noLineSep, got, ok, want, wantOK)
			}
			if end := strings.Index(c.text[1:], `"`) + 2; ok && r.Pos != end || !ok && r.Pos != 0 {
				t.Errorf("Str(%q), NoLineSep %v stopped at %d", c.text, noLineSep, r.Pos)
			}
		}
	}
}

// TestScannerNumber checks the numbers Number reads by the JSON grammar.
func TestScannerNumber(t *testing.T) {
	for text, want := range map[string]string{
		"0": "0", "-0": "-0", "12,": "12", "1.25]": "1.25", "1e5": "1e5", "1E-5": "1E-5", "-1.5e+3}": "-1.5e+3",
		"01": "0", "0x1": "0", "1.5.5": "1.5", "1e5e": "1e5",
		"-": "", "+1": "", ".5": "", "1.": "", "1.e3": "", "1e": "", "1e+": "", "-x": "", "": "", "x": "",
	} {
		r := Scanner{Text: text}
		got, ok := r.Number()
		if got != want || ok != (want != "") || r.Pos != len(got) {
			t.Errorf("Number(%q) = %q, %v, stopped at %d; want %q", text, got, ok, r.Pos, want)
		}
	}
}

// FuzzScanner checks Str and Number against encoding/json on any text:
// what they read is a valid token that decodes to the text they
// return, and they read every valid UTF-8 string without a backslash
// and every number that encoding/json finds valid.
func FuzzScanner(f *testing.F) {
	for _, s := range []string{`"abc"`, `"é"`, "\"\xff\"", `"a\"b"`, "\"a\tb\"", `"x`, `0`, `-1.5e+3`, `01`, `1.`, `-`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		r := Scanner{Text: text}
		if s, ok := r.Str(); ok {
			var got string
			if err := json.Unmarshal([]byte(text[:r.Pos]), &got); err != nil || got != s {
				t.Fatalf("Str(%q) = %q, json.Unmarshal = %q, %v", text, s, got, err)
			}
			// Under NoLineSep, Str reads the strings encoding/json
			// writes back as they are (HTML left unescaped, as the
			// canonical encoding writes it).
			strict := Scanner{Text: text, NoLineSep: true}
			_, ok := strict.Str()
			var again bytes.Buffer
			enc := json.NewEncoder(&again)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(s); err != nil {
				t.Fatal(err)
			}
			if canonical := strings.TrimSuffix(again.String(), "\n") == text[:r.Pos]; ok != canonical {
				t.Fatalf("Str(%q) under NoLineSep: %v; encoded again %s", text, ok, again.String())
			}
		} else if r.Pos != 0 {
			t.Fatalf("Str(%q) refused, stopped at %d", text, r.Pos)
		} else if json.Valid([]byte(text)) && utf8.ValidString(text) && strings.HasPrefix(text, `"`) && !strings.Contains(text, `\`) {
			t.Fatalf("Str(%q) refused a valid string", text)
		}
		r = Scanner{Text: text}
		if num, ok := r.Number(); ok {
			if !json.Valid([]byte(num)) || num != text[:r.Pos] {
				t.Fatalf("Number(%q) = %q", text, num)
			}
		} else if r.Pos != 0 {
			t.Fatalf("Number(%q) refused, stopped at %d", text, r.Pos)
		} else if json.Valid([]byte(text)) && text != "" && (text[0] == '-' || text[0] >= '0' && text[0] <= '9') {
			t.Fatalf("Number(%q) refused a valid number", text)
		}
	})
}
