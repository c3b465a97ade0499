// Package locomo loads the LoCoMo long-conversation QA benchmark
// (locomo10.json and slices of it) and scores answers and evidence the ways
// the LoCoMo, A-Mem, Mem0 and HiGMem papers do.
//
// Category numbers are kept as they are in the file; their official names
// (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial) are
// given by CategoryName, for reports only.
package locomo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrMalformed reports a LoCoMo file whose structure is not as expected.
var ErrMalformed = errors.New("locomo: malformed data")

// Question categories as numbered in locomo10.json.
const (
	MultiHop    = 1
	Temporal    = 2
	OpenDomain  = 3
	SingleHop   = 4
	Adversarial = 5
)

// CategoryName returns the official name of a LoCoMo category number
// ("multi-hop", "temporal", "open-domain", "single-hop", "adversarial"), or
// "category N" for any other number.
func CategoryName(category int) string {
	switch category {
	case MultiHop:
		return "multi-hop"
	case Temporal:
		return "temporal"
	case OpenDomain:
		return "open-domain"
	case SingleHop:
		return "single-hop"
	case Adversarial:
		return "adversarial"
	}
	return "category " + strconv.Itoa(category)
}

// CategoryNames names the question categories of samples from the file:
// a category whose questions all carry one type name (the "qtype" field,
// as FriendsQA converted to LoCoMo's format has: What, When, Why, Who,
// Where, How) is named by it; in a file without type names, categories are
// LoCoMo's (CategoryName). Any other category is "category N".
func CategoryNames(samples []Sample) map[int]string {
	types := map[int]map[string]bool{}
	typed := false
	for _, s := range samples {
		for _, q := range s.QA {
			if types[q.Category] == nil {
				types[q.Category] = map[string]bool{}
			}
			types[q.Category][q.Type] = true
			typed = typed || q.Type != ""
		}
	}
	out := make(map[int]string, len(types))
	for c, ts := range types {
		out[c] = "category " + strconv.Itoa(c)
		switch {
		case !typed:
			out[c] = CategoryName(c)
		case len(ts) == 1 && !ts[""]:
			for name := range ts {
				out[c] = name
			}
		}
	}
	return out
}

// Sample is one LoCoMo conversation with its questions.
type Sample struct {
	ID       string // sample_id, such as "conv-26"
	Index    int    // 0-based position in the file
	SpeakerA string
	SpeakerB string
	Sessions []Session // in numeric session order
	QA       []QA

	turnIndex map[string]int // dia_id -> position in Turns()
	turns     []Turn
}

// Session is one dated chat session.
type Session struct {
	N        int    // session number, from the key session_N
	DateTime string // raw session_N_date_time, such as "1:56 pm on 8 May, 2023"; may be empty
	Turns    []Turn
}

// DateTimeLayout is the layout of Session.DateTime in time.Parse terms.
const DateTimeLayout = "3:04 pm on 2 January, 2006"

// Time parses DateTime with DateTimeLayout, in UTC.
func (s Session) Time() (time.Time, error) {
	t, err := time.Parse(DateTimeLayout, strings.TrimSpace(s.DateTime))
	if err != nil {
		return time.Time{}, fmt.Errorf("locomo: parsing date of session %d: %w", s.N, err)
	}
	return t, nil
}

// Turn is one utterance.
type Turn struct {
	DiaID   string   // dialogue id, "D<session>:<n>"
	Speaker string   // speaker name
	Text    string   // what was said
	ImgURL  []string // shared image URLs (the images are not released)
	Caption string   // BLIP caption of the shared image, if any
	Session int      // session number
	Seq     int      // 0-based position of the turn in the whole conversation
}

// Content returns the turn's text with "[Image: <caption>] " in front when
// the turn has a caption, whether or not it has an image URL (A-Mem's loader
// drops the 316 captions without URL); when the text is empty it returns
// just "[Image: <caption>]".
func (t Turn) Content() string {
	if t.Caption == "" {
		return t.Text
	}
	if t.Text == "" {
		return "[Image: " + t.Caption + "]"
	}
	return "[Image: " + t.Caption + "] " + t.Text
}

// QA is one question with its gold answer and evidence.
type QA struct {
	Question string
	// Answer is the gold answer; numbers in the file are given in decimal.
	// It is empty for most adversarial (category 5) questions.
	Answer string
	// AdversarialAnswer is the tempting wrong answer of category 5
	// questions, which A-Mem scores against.
	AdversarialAnswer string
	Category          int
	// Type is the question's type as the file names it (the "qtype"
	// field, such as "Why" in FriendsQA), "" when the file has none.
	Type string
	// Evidence holds the normalised evidence dialogue ids (see
	// NormalizeEvidence); RawEvidence is the list as in the file.
	Evidence    []string
	RawEvidence []string
}

// MalformedEvidence returns the pieces of RawEvidence that are not valid
// dialogue ids and were dropped from Evidence (such as "D" or "D:11:26").
func (q QA) MalformedEvidence() []string {
	var out []string
	for _, raw := range q.RawEvidence {
		for _, p := range loadSplitEvidence(raw) {
			if _, ok := loadDiaID(p); !ok {
				out = append(out, p)
			}
		}
	}
	return out
}

// NormalizeEvidence turns raw evidence entries into a list of dialogue ids:
// entries are split on ';', ',' and whitespace (the file packs a few lists
// into one string), pieces that are not of the form D<n>:<m> are dropped,
// numbers lose leading zeros ("D30:05" becomes "D30:5"), and duplicates are
// removed, keeping first-seen order. It also suits ids returned by a model.
func NormalizeEvidence(raw []string) []string {
	out := make([]string, 0, len(raw))
	for _, r := range raw {
		for _, p := range loadSplitEvidence(r) {
			if id, ok := loadDiaID(p); ok && !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	return out
}

func loadSplitEvidence(raw string) []string {
	return strings.FieldsFunc(raw, func(r rune) bool {
		return r == ';' || r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r'
	})
}

// loadDiaID parses "D<n>:<m>" with decimal n, m and returns it in
// canonical form.
func loadDiaID(s string) (string, bool) {
	rest, ok := strings.CutPrefix(s, "D")
	if !ok {
		return "", false
	}
	a, b, ok := strings.Cut(rest, ":")
	if !ok {
		return "", false
	}
	n, okA := loadDecimal(a)
	m, okB := loadDecimal(b)
	if !okA || !okB {
		return "", false
	}
	return "D" + strconv.Itoa(n) + ":" + strconv.Itoa(m), true
}

func loadDecimal(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// Turns returns all turns of the conversation in order (sessions in numeric
// order, turns in file order). The slice is shared: do not modify it.
//
// Turns, Turn and UnknownEvidence use an index that Parse builds; they are
// then safe for concurrent use. On a Sample built by hand the index is built
// on first use, so make one call before sharing such a Sample between
// goroutines; later changes to Sessions are not seen.
func (s *Sample) Turns() []Turn {
	if s.turns == nil {
		s.index()
	}
	return s.turns
}

// Turn returns the turn with the given dialogue id.
func (s *Sample) Turn(diaID string) (Turn, bool) {
	if s.turnIndex == nil {
		s.index()
	}
	i, ok := s.turnIndex[diaID]
	if !ok {
		return Turn{}, false
	}
	return s.turns[i], true
}

// UnknownEvidence returns the ids in q.Evidence that name no turn of this
// conversation (the file has a few, such as "D10:19").
func (s *Sample) UnknownEvidence(q QA) []string {
	var out []string
	for _, id := range q.Evidence {
		if _, ok := s.Turn(id); !ok {
			out = append(out, id)
		}
	}
	return out
}

func (s *Sample) index() {
	s.turns = make([]Turn, 0)
	s.turnIndex = make(map[string]int)
	for _, sess := range s.Sessions {
		for _, t := range sess.Turns {
			if _, dup := s.turnIndex[t.DiaID]; !dup {
				s.turnIndex[t.DiaID] = len(s.turns)
			}
			s.turns = append(s.turns, t)
		}
	}
}

// CapTurns cuts every turn whose text and caption together exceed
// maxBytes (the engine's per-turn cap) to fit it, on a rune boundary,
// ending the text with a marker that says how many bytes were left out
// (a caption longer than the cap alone is cut too). It returns how many
// turns it cut and the largest size before cutting; a maxBytes <= 0 cuts
// nothing. The sample is changed in place and re-indexed.
func (s *Sample) CapTurns(maxBytes int) (cut, largest int) {
	if maxBytes <= 0 {
		return 0, 0
	}
	for i := range s.Sessions {
		for j := range s.Sessions[i].Turns {
			t := &s.Sessions[i].Turns[j]
			n := len(t.Text) + len(t.Caption)
			if n <= maxBytes {
				continue
			}
			cut++
			largest = max(largest, n)
			if len(t.Caption) > maxBytes/2 {
				t.Caption = cutToFit(t.Caption, maxBytes/2)
			}
			t.Text = cutToFit(t.Text, maxBytes-len(t.Caption))
		}
	}
	if cut > 0 {
		s.index()
	}
	return cut, largest
}

// cutToFit shortens s to at most n bytes, marker included: s's first
// bytes up to a rune boundary, then " […cut: N more bytes]".
func cutToFit(s string, n int) string {
	if len(s) <= n {
		return s
	}
	keep := max(n-len(fmt.Sprintf(" […cut: %d more bytes]", len(s))), 0)
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep] + fmt.Sprintf(" […cut: %d more bytes]", len(s)-keep)
}

// FirstSessions returns a copy of the sample that keeps its first n
// sessions (all of them when n <= 0 or the sample has no more), with its own
// index. Its questions are the sample's, unchanged (so that their indexes
// stay those of the file); InSlice tells which of them the kept sessions can
// answer.
func (s *Sample) FirstSessions(n int) Sample {
	out := Sample{ID: s.ID, Index: s.Index, SpeakerA: s.SpeakerA, SpeakerB: s.SpeakerB, Sessions: s.Sessions, QA: s.QA}
	if n > 0 && n < len(s.Sessions) {
		out.Sessions = s.Sessions[:n]
	}
	out.index()
	return out
}

// InSlice reports whether every evidence turn of q is a turn of this
// sample: on a sample cut by FirstSessions, whether the kept sessions hold
// what q asks about. A question without evidence is never in a slice, as
// nothing says where its answer lies.
func (s *Sample) InSlice(q QA) bool {
	return len(q.Evidence) > 0 && len(s.UnknownEvidence(q)) == 0
}

// Load reads a LoCoMo JSON file (an array of samples).
func Load(path string) ([]Sample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("locomo: opening dataset: %w", err)
	}
	defer f.Close()
	samples, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%w (file %s)", err, path)
	}
	return samples, nil
}

// wire types: only the fields we use; the rest of the file is ignored.
type fileSample struct {
	SampleID     json.RawMessage            `json:"sample_id"`
	Conversation map[string]json.RawMessage `json:"conversation"`
	QA           []fileQA                   `json:"qa"`
}

type fileTurn struct {
	Speaker string          `json:"speaker"`
	DiaID   string          `json:"dia_id"`
	Text    json.RawMessage `json:"text"`
	ImgURL  json.RawMessage `json:"img_url"`
	Caption json.RawMessage `json:"blip_caption"`
}

type fileQA struct {
	Question          json.RawMessage `json:"question"`
	Answer            json.RawMessage `json:"answer"`
	AdversarialAnswer json.RawMessage `json:"adversarial_answer"`
	Evidence          json.RawMessage `json:"evidence"`
	Category          json.RawMessage `json:"category"`
	QType             json.RawMessage `json:"qtype"`
}

// Parse reads LoCoMo JSON (an array of samples) from r.
func Parse(r io.Reader) ([]Sample, error) {
	var wire []fileSample
	dec := json.NewDecoder(r)
	dec.UseNumber()
	if err := dec.Decode(&wire); err != nil {
		return nil, fmt.Errorf("%w: decoding JSON: %v", ErrMalformed, err)
	}
	out := make([]Sample, 0, len(wire))
	for i, ws := range wire {
		s, err := loadSample(i, ws)
		if err != nil {
			return nil, fmt.Errorf("%w: sample %d: %v", ErrMalformed, i, err)
		}
		out = append(out, s)
	}
	return out, nil
}

func loadSample(index int, ws fileSample) (Sample, error) {
	s := Sample{Index: index}
	id, err := loadScalar(ws.SampleID)
	if err != nil {
		return s, fmt.Errorf("sample_id: %v", err)
	}
	s.ID = id
	if ws.Conversation == nil {
		return s, errors.New("no conversation")
	}
	if s.SpeakerA, err = loadScalar(ws.Conversation["speaker_a"]); err != nil {
		return s, fmt.Errorf("speaker_a: %v", err)
	}
	if s.SpeakerB, err = loadScalar(ws.Conversation["speaker_b"]); err != nil {
		return s, fmt.Errorf("speaker_b: %v", err)
	}
	for key, raw := range ws.Conversation {
		num, ok := strings.CutPrefix(key, "session_")
		if !ok {
			continue
		}
		n, ok := loadDecimal(num)
		if !ok {
			continue // session_N_date_time and other keys
		}
		if !loadIsArray(raw) {
			continue // only lists are sessions
		}
		var wts []fileTurn
		if err := json.Unmarshal(raw, &wts); err != nil {
			return s, fmt.Errorf("%s: %v", key, err)
		}
		sess := Session{N: n}
		if dt, ok := ws.Conversation[key+"_date_time"]; ok {
			if sess.DateTime, err = loadScalar(dt); err != nil {
				return s, fmt.Errorf("%s_date_time: %v", key, err)
			}
		}
		for j, wt := range wts {
			t := Turn{DiaID: wt.DiaID, Speaker: wt.Speaker, Session: n}
			if t.Text, err = loadScalar(wt.Text); err != nil {
				return s, fmt.Errorf("%s turn %d text: %v", key, j, err)
			}
			if t.Caption, err = loadScalar(wt.Caption); err != nil {
				return s, fmt.Errorf("%s turn %d blip_caption: %v", key, j, err)
			}
			if t.ImgURL, err = loadStringList(wt.ImgURL); err != nil {
				return s, fmt.Errorf("%s turn %d img_url: %v", key, j, err)
			}
			if t.DiaID == "" {
				return s, fmt.Errorf("%s turn %d: no dia_id", key, j)
			}
			sess.Turns = append(sess.Turns, t)
		}
		s.Sessions = append(s.Sessions, sess)
	}
	slices.SortFunc(s.Sessions, func(a, b Session) int { return a.N - b.N })
	seq := 0
	for i := range s.Sessions {
		for j := range s.Sessions[i].Turns {
			s.Sessions[i].Turns[j].Seq = seq
			seq++
		}
	}
	for j, wq := range ws.QA {
		q, err := loadQA(wq)
		if err != nil {
			return s, fmt.Errorf("qa %d: %v", j, err)
		}
		s.QA = append(s.QA, q)
	}
	s.index()
	return s, nil
}

func loadQA(wq fileQA) (QA, error) {
	var q QA
	var err error
	if q.Question, err = loadScalar(wq.Question); err != nil {
		return q, fmt.Errorf("question: %v", err)
	}
	if q.Answer, err = loadScalar(wq.Answer); err != nil {
		return q, fmt.Errorf("answer: %v", err)
	}
	if q.AdversarialAnswer, err = loadScalar(wq.AdversarialAnswer); err != nil {
		return q, fmt.Errorf("adversarial_answer: %v", err)
	}
	if q.RawEvidence, err = loadStringList(wq.Evidence); err != nil {
		return q, fmt.Errorf("evidence: %v", err)
	}
	q.Evidence = NormalizeEvidence(q.RawEvidence)
	if q.Type, err = loadScalar(wq.QType); err != nil {
		return q, fmt.Errorf("qtype: %v", err)
	}
	cat, err := loadScalar(wq.Category)
	if err != nil {
		return q, fmt.Errorf("category: %v", err)
	}
	if q.Category, err = strconv.Atoi(cat); err != nil {
		return q, fmt.Errorf("category %q is not an integer", cat)
	}
	return q, nil
}

func loadIsArray(raw json.RawMessage) bool {
	b := bytes.TrimLeft(raw, " \t\r\n")
	return len(b) > 0 && b[0] == '['
}

// loadScalar decodes a JSON string, number or null (absent) as a string;
// numbers keep their decimal text, so 2022 becomes "2022".
func loadScalar(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		var n json.Number
		if err := json.Unmarshal(raw, &n); err != nil {
			return "", err
		}
		return n.String(), nil
	}
	return "", fmt.Errorf("want a string or number, got %.20s", raw)
}

// loadStringList decodes a JSON list of strings (or numbers), a single string,
// or null.
func loadStringList(raw json.RawMessage) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] != '[' {
		s, err := loadScalar(raw)
		if err != nil {
			return nil, err
		}
		return []string{s}, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		s, err := loadScalar(it)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}
