package minilm

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"unicode/utf8"
)

// Special token strings of BERT vocabularies.
const (
	tokPAD  = "[PAD]"
	tokUNK  = "[UNK]"
	tokCLS  = "[CLS]"
	tokSEP  = "[SEP]"
	tokMASK = "[MASK]"
)

// maxInputCharsPerWord is the WordPiece limit above which a whole word
// becomes [UNK] (HF default, also in the all-MiniLM-L6-v2 tokenizer.json).
const maxInputCharsPerWord = 100

// ErrBadVocab is returned when a vocabulary lacks a required special token
// or is otherwise unusable.
var ErrBadVocab = errors.New("minilm: bad vocabulary")

// TokenizerOptions configures a Tokenizer.
type TokenizerOptions struct {
	// Lowercase lower-cases text (do_lower_case); it also turns on accent
	// stripping, as in HF BertTokenizer with strip_accents=None.
	Lowercase bool
	// MaxLen is the maximum number of ids Encode returns, [CLS] and [SEP]
	// included. Zero means no limit.
	MaxLen int
}

// Tokenizer is a BERT WordPiece tokenizer that reproduces HF
// BertTokenizerFast (tokenizers' BertNormalizer, BertPreTokenizer and
// WordPiece model): text cleaning, CJK character splitting, accent stripping,
// lower-casing, whitespace and punctuation splitting, greedy
// longest-match-first WordPiece with "##" continuations, and [CLS]/[SEP]
// framing. Special tokens written literally in the text ("[SEP]") are
// recognised, as HF does.
//
// A Tokenizer is safe for concurrent use.
type Tokenizer struct {
	vocab    map[string]int32
	lower    bool
	strip    bool
	maxLen   int
	cls, sep int32
	unk      int32
	specials []specialToken // longest first
}

type specialToken struct {
	text string
	id   int32
}

// NewTokenizer builds a tokenizer from a vocabulary given in id order (the
// lines of vocab.txt). The vocabulary must contain [CLS], [SEP] and [UNK].
func NewTokenizer(vocab []string, opts TokenizerOptions) (*Tokenizer, error) {
	t := &Tokenizer{
		vocab:  make(map[string]int32, len(vocab)),
		lower:  opts.Lowercase,
		strip:  opts.Lowercase,
		maxLen: opts.MaxLen,
	}
	for i, w := range vocab {
		if _, dup := t.vocab[w]; !dup {
			t.vocab[w] = int32(i)
		}
	}
	for _, name := range []string{tokCLS, tokSEP, tokUNK} {
		if _, ok := t.vocab[name]; !ok {
			return nil, fmt.Errorf("%w: no %s token", ErrBadVocab, name)
		}
	}
	t.cls, t.sep, t.unk = t.vocab[tokCLS], t.vocab[tokSEP], t.vocab[tokUNK]
	for _, name := range []string{tokPAD, tokUNK, tokCLS, tokSEP, tokMASK} {
		if id, ok := t.vocab[name]; ok {
			t.specials = append(t.specials, specialToken{name, id})
		}
	}
	sort.SliceStable(t.specials, func(i, j int) bool { return len(t.specials[i].text) > len(t.specials[j].text) })
	if opts.MaxLen != 0 && opts.MaxLen < 2 {
		return nil, fmt.Errorf("minilm: tokenizer MaxLen %d leaves no room for [CLS] and [SEP]", opts.MaxLen)
	}
	return t, nil
}

// LoadTokenizer reads a vocab.txt file (one token per line, line number =
// id) and builds a Tokenizer.
func LoadTokenizer(vocabPath string, opts TokenizerOptions) (*Tokenizer, error) {
	f, err := os.Open(vocabPath)
	if err != nil {
		return nil, fmt.Errorf("minilm: opening vocabulary: %w", err)
	}
	defer f.Close()
	vocab, err := readVocab(f)
	if err != nil {
		return nil, fmt.Errorf("minilm: reading vocabulary %s: %w", vocabPath, err)
	}
	return NewTokenizer(vocab, opts)
}

func readVocab(r io.Reader) ([]string, error) {
	var vocab []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		// HF load_vocab strips only the trailing newline (rstrip("\n")).
		vocab = append(vocab, strings.TrimSuffix(sc.Text(), "\r"))
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(vocab) == 0 {
		return nil, fmt.Errorf("%w: empty", ErrBadVocab)
	}
	return vocab, nil
}

// VocabSize reports the number of distinct tokens.
func (t *Tokenizer) VocabSize() int { return len(t.vocab) }

// Encode returns the token ids of text framed as [CLS] ... [SEP], truncated
// to MaxLen ids.
func (t *Tokenizer) Encode(text string) []int32 {
	ids := make([]int32, 0, len(text)/3+2)
	ids = append(ids, t.cls)
	limit := -1
	if t.maxLen > 0 {
		limit = t.maxLen - 2
	}
	for text != "" && (limit < 0 || len(ids)-1 < limit) {
		pos, sp := t.nextSpecial(text)
		ids = t.encodeSegment(ids, text[:pos])
		if sp == nil {
			break
		}
		ids = append(ids, sp.id)
		text = text[pos+len(sp.text):]
	}
	if limit >= 0 && len(ids)-1 > limit {
		ids = ids[:limit+1]
	}
	return append(ids, t.sep)
}

// nextSpecial finds the leftmost (then longest) special token in text. It
// returns len(text) and nil when there is none.
func (t *Tokenizer) nextSpecial(text string) (int, *specialToken) {
	for off := 0; ; {
		i := strings.IndexByte(text[off:], '[')
		if i < 0 {
			return len(text), nil
		}
		off += i
		for k := range t.specials {
			if strings.HasPrefix(text[off:], t.specials[k].text) {
				return off, &t.specials[k]
			}
		}
		off++
	}
}

// encodeSegment appends the WordPiece ids of a text segment that contains
// no special token.
func (t *Tokenizer) encodeSegment(ids []int32, seg string) []int32 {
	if seg == "" {
		return ids
	}
	splitWords(t.normalize(seg), func(w string) { ids = t.wordPiece(ids, w) })
	return ids
}

// splitWords is BertPreTokenizer: whitespace separates words and is dropped;
// each punctuation rune is a word of its own.
func splitWords(s string, word func(string)) {
	start := -1
	for i, r := range s {
		switch {
		case isWhitespace(r):
			if start >= 0 {
				word(s[start:i])
				start = -1
			}
		case isPunct(r):
			if start >= 0 {
				word(s[start:i])
				start = -1
			}
			word(s[i : i+utf8.RuneLen(r)])
		default:
			if start < 0 {
				start = i
			}
		}
	}
	if start >= 0 {
		word(s[start:])
	}
}

// normalize applies the BertNormalizer steps in the order tokenizers does:
// clean text, pad CJK ideographs with spaces, strip accents, lower-case.
func (t *Tokenizer) normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		if r == utf8.RuneError || r == 0 || isControl(r) {
			// utf8.RuneError is also what invalid UTF-8 decodes to; HF drops
			// U+FFFD, so both vanish.
			continue
		}
		if isWhitespace(r) {
			b.WriteByte(' ')
			continue
		}
		if isCJK(r) {
			b.WriteByte(' ')
			t.writeNorm(&b, r)
			b.WriteByte(' ')
			continue
		}
		t.writeNorm(&b, r)
	}
	return b.String()
}

// writeNorm writes one rune after accent stripping and lower-casing.
func (t *Tokenizer) writeNorm(b *strings.Builder, r rune) {
	if t.strip {
		if inRanges(stripDropped, r) {
			return
		}
		if d, ok := stripMapped[r]; ok {
			for _, q := range d {
				t.writeLower(b, q)
			}
			return
		}
		if r >= hangulBase && r < hangulBase+hangulCount {
			decomposeHangul(b, r)
			return
		}
	}
	t.writeLower(b, r)
}

func (t *Tokenizer) writeLower(b *strings.Builder, r rune) {
	if t.lower {
		if r >= 'A' && r <= 'Z' {
			r += 'a' - 'A'
		} else if l, ok := lowerMapped[r]; ok && r >= 0x80 {
			b.WriteString(l)
			return
		}
	}
	b.WriteRune(r)
}

// Hangul syllable decomposition (Unicode 3.12).
const (
	hangulBase  = 0xAC00
	hangulCount = 11172
	jamoL       = 0x1100
	jamoV       = 0x1161
	jamoT       = 0x11A7
	jamoVCount  = 21
	jamoTCount  = 28
	jamoNCount  = jamoVCount * jamoTCount
)

func decomposeHangul(b *strings.Builder, r rune) {
	s := r - hangulBase
	b.WriteRune(jamoL + s/jamoNCount)
	b.WriteRune(jamoV + (s%jamoNCount)/jamoTCount)
	if t := s % jamoTCount; t != 0 {
		b.WriteRune(jamoT + t)
	}
}

// wordPiece appends the ids of one pre-tokenised word.
func (t *Tokenizer) wordPiece(ids []int32, word string) []int32 {
	if utf8.RuneCountInString(word) > maxInputCharsPerWord {
		return append(ids, t.unk)
	}
	n := len(ids)
	var buf []byte
	for start := 0; start < len(word); {
		end := len(word)
		found := int32(-1)
		for end > start {
			var id int32
			var ok bool
			if start == 0 {
				id, ok = t.vocab[word[start:end]]
			} else {
				buf = append(append(buf[:0], "##"...), word[start:end]...)
				id, ok = t.vocab[string(buf)]
			}
			if ok {
				found = id
				break
			}
			// Step back one rune.
			_, size := utf8.DecodeLastRuneInString(word[start:end])
			end -= size
		}
		if found < 0 {
			return append(ids[:n], t.unk)
		}
		ids = append(ids, found)
		start = end
	}
	return ids
}

// isWhitespace reports whether BERT treats r as whitespace (\t, \n, \r and
// Unicode White_Space as tokenizers' tables have it).
func isWhitespace(r rune) bool {
	if r < 0x80 {
		return asciiClass[r] == classSpace
	}
	return inRanges(spaceRanges, r)
}

// isControl reports whether BERT text cleaning removes r (categories Cc,
// Cf, Co, Cs as tokenizers' tables have them, except \t \n \r).
func isControl(r rune) bool {
	if r < 0x80 {
		return asciiClass[r] == classControl
	}
	return inRanges(controlRanges, r)
}

// isPunct reports whether BERT splits r off as punctuation (ASCII
// punctuation plus Unicode P*, as tokenizers' tables have it).
func isPunct(r rune) bool {
	if r < 0x80 {
		return asciiClass[r] == classPunct
	}
	return inRanges(punctRanges, r)
}

// ASCII fast path for the range tables.
const (
	classOther = iota
	classSpace
	classControl
	classPunct
)

var asciiClass = func() (c [0x80]uint8) {
	for r := rune(0); r < 0x80; r++ {
		switch {
		case inRanges(spaceRanges, r):
			c[r] = classSpace
		case inRanges(controlRanges, r):
			c[r] = classControl
		case inRanges(punctRanges, r):
			c[r] = classPunct
		}
	}
	return c
}()

// inRanges reports whether r is in one of the sorted inclusive ranges.
func inRanges(ranges [][2]rune, r rune) bool {
	i := sort.Search(len(ranges), func(i int) bool { return ranges[i][1] >= r })
	return i < len(ranges) && ranges[i][0] <= r
}

// isCJK reports whether r is in the CJK Unified Ideographs blocks that BERT
// splits into single characters.
func isCJK(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FFF ||
		r >= 0x3400 && r <= 0x4DBF ||
		r >= 0x20000 && r <= 0x2A6DF ||
		r >= 0x2A700 && r <= 0x2B73F ||
		r >= 0x2B740 && r <= 0x2B81F ||
		r >= 0x2B920 && r <= 0x2CEAF || // sic: tokenizers has 0x2B920, Python BERT 0x2B820

		r >= 0xF900 && r <= 0xFAFF ||
		r >= 0x2F800 && r <= 0x2FA1F
}
