package llmfake

import (
	"encoding/json"
	"math/bits"
	"strings"
	"sync"
)

// The select reply is the one the bench asks for every question, on a
// prompt of 4–8 kB: it is read here in one pass that keeps only what the
// reply needs (the question, the "at most N", and the turns of each
// section header), with the turns' words counted against the question's
// in a loop over ASCII bytes. It replies exactly as parse and then
// ranked over all the sections' turns did: scripted_same_test.go
// compares it with the old fake (oldfake_test.go) on recorded, golden
// and fuzzed prompts.

// selectState is the scratch of one select reply, reused through
// selectPool.
type selectState struct {
	heads []string  // distinct section headers, first seen first
	turns []selTurn // turn lines under a header, in prompt order
	order []selTurn // turns grouped by header, header order first
	// grouped: turns is grouped already (its headers ascend).
	grouped bool
	next    []int   // per header, where its next turn goes in order
	seen    []int32 // ids seen: 1 + their index in order (first)
	hits    []selHit
	ws      wordSet
	keys    []uint32 // per word of ws: its length and first and last bytes
	lens    uint64   // bit n set when a word of ws is n < 64 bytes long
}

// selTurn is a turn line read by turnLine, with its header's index.
type selTurn struct {
	id, speaker, text string
	head              int
}

// selHit is a turn sharing k > 0 words with the question.
type selHit struct {
	id string
	k  int
}

var selectPool = sync.Pool{New: func() any {
	return new(selectState)
}}

// selectIDs answers select: the turns of every list sharing most words
// with the question, at most the prompt's maximum.
func (p parsed) selectIDs() map[string]any {
	st := selectPool.Get().(*selectState)
	defer selectPool.Put(st)
	out := []string{}
	for _, h := range st.ranked(p.raw) {
		out = append(out, h.id)
	}
	return map[string]any{"turn_ids": out}
}

// appendSelect appends the JSON reply to a select prompt whose user
// message is s: what json.Marshal makes of selectIDs' reply.
func appendSelect(dst []byte, s string) []byte {
	st := selectPool.Get().(*selectState)
	defer selectPool.Put(st)
	dst = append(dst, `{"turn_ids":[`...)
	for i, h := range st.ranked(s) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, h.id)
	}
	return append(dst, "]}"...)
}

// appendJSONString appends s as json.Marshal encodes it.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if !jsonPlain[s[i]] {
			b, _ := json.Marshal(s) // escapes, or invalid UTF-8: as json does
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// jsonPlain marks the bytes json.Marshal writes as they are in a string:
// printable ASCII but '"', '\\' and the HTML characters '<', '>', '&'.
var jsonPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = true
	}
	for _, c := range `"\<>&` {
		t[c] = false
	}
	return t
}()

// ranked returns the turns of the select prompt s that the scripted
// model picks, best first: those of all sections (headers in first-seen
// order, the turns of a header in prompt order, an id's first turn
// only) sharing at least one word with the question, by decreasing
// count of shared words and then in that order, at most max(atMost(s),
// 1). It is what parse and then ranked over the sections compute.
func (st *selectState) ranked(s string) []selHit {
	st.read(s)
	n := max(atMost(s), 1)
	// The turns grouped by header (a counting sort, stable), unless
	// they are already.
	order := st.turns
	if !st.grouped {
		clear(st.next)
		st.next = st.next[:0]
		for range st.heads {
			st.next = append(st.next, 0)
		}
		for _, t := range st.turns {
			st.next[t.head]++
		}
		at := 0
		for h, c := range st.next {
			st.next[h] = at
			at += c
		}
		st.order = append(st.order[:0], st.turns...)
		for _, t := range st.turns {
			st.order[st.next[t.head]] = t
			st.next[t.head]++
		}
		order = st.order
	}
	// The count of each id's first turn.
	st.resetSeen(len(order))
	st.hits = st.hits[:0]
	best := 0
	for i, t := range order {
		if !st.first(order, i) {
			continue
		}
		if k := st.count(t.speaker, t.text); k > 0 {
			st.hits = append(st.hits, selHit{t.id, k})
			best = max(best, k)
		}
	}
	// A stable sort by decreasing count, cut at n: counts are small.
	if len(st.hits) <= n && best <= 1 {
		return st.hits
	}
	out := st.hits[len(st.hits):]
	for k := best; k > 0 && len(out) < n; k-- {
		for _, h := range st.hits {
			if h.k == k {
				if out = append(out, h); len(out) == n {
					break
				}
			}
		}
	}
	return out
}

// resetSeen empties the set of ids seen, for n turns: an open-addressed
// table of indices in the turns' order, at most half full.
func (st *selectState) resetSeen(n int) {
	size := 16
	for size < 2*n {
		size *= 2
	}
	if cap(st.seen) < size {
		st.seen = make([]int32, size)
	}
	st.seen = st.seen[:size]
	clear(st.seen)
}

// first reports whether order[i] is the first turn of its id (among
// those passed to first since resetSeen), and adds it.
func (st *selectState) first(order []selTurn, i int) bool {
	id := order[i].id
	h := uint32(2166136261) // FNV-1a
	for j := 0; j < len(id); j++ {
		h = (h ^ uint32(id[j])) * 16777619
	}
	mask := uint32(len(st.seen) - 1)
	for k := h & mask; ; k = (k + 1) & mask {
		switch at := st.seen[k]; {
		case at == 0:
			st.seen[k] = int32(i) + 1
			return true
		case order[at-1].id == id:
			return false
		}
	}
}

// read reads the question and the turns under each header of s, as parse
// does: the last "Question: " line; turn lines (turnLine) under the
// header (a trimmed line ending in ':', not starting with '-', that is
// no turn or event line) above them, none before the first header.
func (st *selectState) read(s string) {
	st.heads = st.heads[:0]
	st.turns = st.turns[:0]
	st.grouped = true
	question := ""
	head, last := -1, 0 // the header, and that of the last turn
	for rest, more := s, true; more; {
		var l string
		l, rest, more = strings.Cut(rest, "\n")
		if len(l) == 0 {
			continue
		}
		switch l[0] {
		case '[':
			if t, ok := turnLine(l); ok {
				if head >= 0 {
					st.grouped = st.grouped && head >= last
					last = head
					st.turns = append(st.turns, selTurn{t.id, t.speaker, t.text, head})
				}
				continue
			}
		case 'Q':
			if q, ok := strings.CutPrefix(l, "Question: "); ok {
				question = q
				continue
			}
		}
		// A header, unless the line is read as something else.
		h := strings.TrimSpace(l)
		if !strings.HasSuffix(h, ":") || l[0] == '-' {
			continue
		}
		if _, ok := eventLine(l); ok || strings.HasPrefix(l, "Gold answer: ") || strings.HasPrefix(l, "Answer to grade: ") {
			continue
		}
		head = st.head(h)
	}
	st.ws.reset(question)
	st.keys = st.keys[:0]
	st.lens = 0
	for _, w := range st.ws.words {
		st.keys = append(st.keys, wordKey(w))
		if len(w) < 64 {
			st.lens |= 1 << len(w)
		}
	}
}

// head returns the index of header h, adding it if new.
func (st *selectState) head(h string) int {
	for i := len(st.heads) - 1; i >= 0; i-- {
		if st.heads[i] == h {
			return i
		}
	}
	st.heads = append(st.heads, h)
	return len(st.heads) - 1
}

// wordKey packs a word's length (up to 255) and its first and last
// bytes, to rule out most tokens before comparing them.
func wordKey(w string) uint32 {
	return uint32(min(len(w), 255))<<16 | uint32(w[0])<<8 | uint32(w[len(w)-1])
}

// asciiByte maps a byte to its lower case when it is an ASCII letter or
// digit, to 0 when it is another ASCII byte (a separator), and to
// nonASCII when it is not ASCII.
var asciiByte = func() (t [256]byte) {
	copy(t[:], asciiWord[:])
	for c := 0x80; c < 0x100; c++ {
		t[c] = nonASCII
	}
	return t
}()

const nonASCII = 0xff

// count is st.ws.count(speaker, text), the number of question words
// in the turn, read byte by byte when both are ASCII and the question
// has at most 64 words.
func (st *selectState) count(speaker, text string) int {
	words := st.ws.words
	if len(words) == 0 {
		return 0
	}
	if len(words) > 64 {
		return st.ws.count(speaker, text)
	}
	var found uint64
	all := ^uint64(0) >> (64 - len(words))
	for _, s := range [2]string{speaker, text} {
		for i := 0; i < len(s); {
			// Skip separators; a token runs over ASCII letters and
			// digits (asciiByte 1 to 0x7f).
			if c := asciiByte[s[i]]; c == 0 {
				i++
				continue
			}
			start := i
			for i < len(s) && asciiByte[s[i]]-1 < 0x7f {
				i++
			}
			if i < len(s) && asciiByte[s[i]] == nonASCII {
				return st.ws.count(speaker, text)
			}
			n := i - start
			if n >= 64 || st.lens&(1<<n) == 0 {
				continue
			}
			key := uint32(n)<<16 | uint32(asciiByte[s[start]])<<8 | uint32(asciiByte[s[i-1]])
			for j, k := range st.keys {
				if k == key && found&(1<<j) == 0 && equalFold(s[start:i], words[j]) {
					if found |= 1 << j; found == all {
						return len(words)
					}
					break
				}
			}
		}
	}
	return bits.OnesCount64(found)
}

// equalFold reports whether the ASCII letters and digits t, lowered, are
// w.
func equalFold(t, w string) bool {
	if len(t) != len(w) {
		return false
	}
	for i := 0; i < len(t); i++ {
		if asciiByte[t[i]] != w[i] {
			return false
		}
	}
	return true
}
