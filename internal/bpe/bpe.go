// Package bpe counts tokens the way OpenAI's tiktoken does, for the
// o200k_base encoding of gpt-4o and gpt-4o-mini, so that an evaluation can
// report real token counts beside its 4-bytes-per-token estimate.
//
// The vocabulary is not in the repository: Fetch takes it from the npm
// package js-tiktoken (MIT; its dist/ranks/o200k_base.js holds the same
// 199,998 ranks as tiktoken's o200k_base.tiktoken), through the npm client,
// checks its SHA-256 and keeps the file under a cache directory. Load
// reads it. The pre-tokenizer is o200k's pattern compiled for Go's RE2,
// with its one look-ahead ("\s+(?!\S)") done by hand; golden tests compare
// the token ids with tiktoken's own.
package bpe

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrNoVocab is returned by Load when the vocabulary file is missing (run
// Fetch, or `higmem models fetch --tokenizer o200k_base`).
var ErrNoVocab = errors.New("bpe: vocabulary not fetched")

// O200kBase is the encoding's name.
const O200kBase = "o200k_base"

// VocabFile is the file Fetch writes into its directory.
const VocabFile = "o200k_base.js"

// ws is Unicode White_Space, which tiktoken's \s means.
const ws = `\t\n\x{0B}\f\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}`

// o200k's pattern for RE2: the alternatives in tiktoken's order, with
// "\s+(?!\S)" left out (see split) and \s spelled as ws.
var o200kRE = regexp.MustCompile(strings.Join([]string{
	`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:'s|'S|'t|'T|'re|'rE|'Re|'RE|'ve|'vE|'Ve|'VE|'m|'M|'ll|'lL|'Ll|'LL|'d|'D)?`,
	`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?:'s|'S|'t|'T|'re|'rE|'Re|'RE|'ve|'vE|'Ve|'VE|'m|'M|'ll|'lL|'Ll|'LL|'d|'D)?`,
	`\p{N}{1,3}`,
	` ?[^` + ws + `\p{L}\p{N}]+[\r\n/]*`,
	`[` + ws + `]*[\r\n]+`,
	`[` + ws + `]+`,
}, "|"))

func isSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// Encoding is a loaded byte-pair encoding. Safe for concurrent use.
type Encoding struct {
	ranks map[string]int
}

// Load reads the vocabulary Fetch wrote into dir.
func Load(dir string) (*Encoding, error) {
	b, err := os.ReadFile(dir + string(os.PathSeparator) + VocabFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s (run `higmem models fetch --tokenizer %s`)", ErrNoVocab, dir, O200kBase)
	}
	if err != nil {
		return nil, err
	}
	return Parse(b)
}

// Parse reads js-tiktoken's rank module: `export default {"pat_str":…,
// "special_tokens":…, "bpe_ranks":"! 0 IQ== Ig== …\n…"}`, where each line
// of bpe_ranks is a marker, the rank of its first token, and base64 tokens
// of consecutive ranks.
func Parse(module []byte) (*Encoding, error) {
	s := strings.TrimSpace(string(module))
	s = strings.TrimPrefix(s, "export default")
	s = strings.TrimSuffix(strings.TrimSpace(s), ";")
	var doc struct {
		BPERanks string `json:"bpe_ranks"`
	}
	if err := json.Unmarshal([]byte(s), &doc); err != nil {
		return nil, fmt.Errorf("bpe: reading ranks: %w", err)
	}
	e := &Encoding{ranks: make(map[string]int, 200_000)}
	for _, line := range strings.Split(doc.BPERanks, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		off, err := strconv.Atoi(f[1])
		if err != nil {
			return nil, fmt.Errorf("bpe: bad rank line %.40q", line)
		}
		for i, t := range f[2:] {
			tok, err := base64.StdEncoding.DecodeString(t)
			if err != nil {
				return nil, fmt.Errorf("bpe: bad token %q: %w", t, err)
			}
			e.ranks[string(tok)] = off + i
		}
	}
	if len(e.ranks) < 256 {
		return nil, fmt.Errorf("bpe: only %d ranks", len(e.ranks))
	}
	return e, nil
}

// Len is the vocabulary size (special tokens not counted).
func (e *Encoding) Len() int { return len(e.ranks) }

// split cuts text into pre-tokens as o200k's pattern does.
func split(text string, yield func(string)) {
	for len(text) > 0 {
		loc := o200kRE.FindStringIndex(text)
		if loc == nil || loc[1] == 0 {
			// Cannot happen (the last alternatives match any white space
			// and the others any other rune); keep going byte by byte.
			_, n := utf8.DecodeRuneInString(text)
			yield(text[:n])
			text = text[n:]
			continue
		}
		start, end := loc[0], loc[1]
		if start > 0 {
			yield(text[:start])
		}
		m := text[start:end]
		// "\s+(?!\S)": a run of white space followed by a non-space gives
		// its last character to the next piece (" word").
		if end < len(text) && allSpace(m) && !strings.ContainsAny(m[len(m)-1:], "\r\n") {
			if r, _ := utf8.DecodeRuneInString(text[end:]); !isSpace(r) {
				_, last := utf8.DecodeLastRuneInString(m)
				if len(m) > last {
					m = m[:len(m)-last]
					end -= last
				}
			}
		}
		yield(m)
		text = text[end:]
	}
}

func allSpace(s string) bool {
	for _, r := range s {
		if !isSpace(r) {
			return false
		}
	}
	return s != ""
}

// Encode returns the token ids of text (special tokens are ordinary
// text, as tiktoken's encode with disallowed_special=()).
func (e *Encoding) Encode(text string) []int {
	var out []int
	split(text, func(piece string) {
		if r, ok := e.ranks[piece]; ok {
			out = append(out, r)
			return
		}
		out = e.merge(piece, out)
	})
	return out
}

// Count returns the number of tokens of text.
func (e *Encoding) Count(text string) int {
	n := 0
	split(text, func(piece string) {
		if _, ok := e.ranks[piece]; ok {
			n++
			return
		}
		n += len(e.merge(piece, nil))
	})
	return n
}

// merge is tiktoken's byte pair merge: start from bytes, repeatedly join
// the adjacent pair of lowest rank.
func (e *Encoding) merge(piece string, out []int) []int {
	// parts[i] is the start of part i; parts[len-1] == len(piece).
	parts := make([]int, len(piece)+1)
	for i := range parts {
		parts[i] = i
	}
	rank := func(i int) int {
		if i+2 >= len(parts) {
			return math.MaxInt
		}
		if r, ok := e.ranks[piece[parts[i]:parts[i+2]]]; ok {
			return r
		}
		return math.MaxInt
	}
	ranks := make([]int, len(parts))
	for i := range ranks {
		ranks[i] = rank(i)
	}
	for len(parts) > 2 {
		best, at := math.MaxInt, -1
		for i := 0; i < len(parts)-2; i++ {
			if ranks[i] < best {
				best, at = ranks[i], i
			}
		}
		if at < 0 {
			break
		}
		parts = append(parts[:at+1], parts[at+2:]...)
		ranks = append(ranks[:at+1], ranks[at+2:]...)
		ranks[at] = rank(at)
		if at > 0 {
			ranks[at-1] = rank(at - 1)
		}
	}
	for i := 0; i+1 < len(parts); i++ {
		r, ok := e.ranks[piece[parts[i]:parts[i+1]]]
		if !ok {
			r = -1 // a byte outside the vocabulary: cannot happen with o200k
		}
		out = append(out, r)
	}
	return out
}

// ChatTokens counts the prompt tokens of chat messages as OpenAI bills
// gpt-4o models: each message's content and role plus 3 tokens of
// framing, and 3 tokens priming the reply.
func (e *Encoding) ChatTokens(roles, contents []string) int {
	n := 3
	for i := range contents {
		n += 3 + e.Count(contents[i])
		if i < len(roles) {
			n += e.Count(roles[i])
		}
	}
	return n
}
