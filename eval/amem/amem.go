// Package amem is a Go re-implementation of A-Mem (Xu et al., "A-MEM:
// Agentic Memory for LLM Agents", arXiv:2502.12110) as the LoCoMo baseline
// for higmem's evaluation harness.
//
// It follows the reproduction code behind the paper's numbers
// (WujiangXu/AgenticMemory at 7f716dc), as summarised in the project's
// reference-amem-locomo.md §6:
//
//   - One note per turn. Adding a note makes two LLM calls: a note analysis
//     (keywords, one-sentence context, tags) and an evolution call that sees
//     the 5 nearest existing notes (searched with the new note's content)
//     and may link the new note to them ("strengthen": links are
//     one-directional, new → old, kept as insertion positions, duplicates
//     kept) and rewrite their context and tags ("update_neighbor";
//     keywords are never evolved, evolved notes are not re-embedded).
//   - The document indexed for a new note is context + " keywords: " +
//     keywords (no content, no tags), unless Options.ContentDocument selects
//     the later content+context+keywords+tags form. Every
//     Options.EvolveThreshold notes that evolved, the whole index is rebuilt
//     from content , context keywords tags.
//   - A question makes two LLM calls: a keyword query (its string, not the
//     question, is the search query; the question is used when the reply is
//     unusable) and the answer. Retrieval takes the top RetrieveK notes and
//     appends each hit's linked notes, with the neighbour counter j global
//     to the question as in the paper's code (Options.ResetJ gives the later
//     per-hit counter). Neighbours are not deduplicated.
//
// Deliberate differences from the reference, all in the name of a fair
// comparison: the prompts are our own wording (golden-tested in testdata);
// the answer prompt's date instruction is chosen by a rule-based analysis of
// the question (internal/temporal), never by the gold category, and there is
// no two-option prompt offering the adversarial answer; evolution links that
// name no existing note are dropped instead of crashing; without an Embedder
// the index is BM25 over the same documents instead of all-MiniLM-L6-v2;
// temperature is left at the request default (0), as in Mem0's A-Mem* re-run.
package amem

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/internal/bm25"
	"github.com/higmem/higmem/internal/temporal"
	"github.com/higmem/higmem/internal/vec"
	"github.com/higmem/higmem/llm"
)

// ErrNoModel is returned by New when Options.Model is nil.
var ErrNoModel = errors.New("amem: a model is required")

// Defaults of Options.
const (
	DefaultNeighbours      = 5
	DefaultRetrieveK       = 10
	DefaultEvolveThreshold = 100
)

// Options configures a Memory.
type Options struct {
	// Model does the memory work: note analysis, evolution and the keyword
	// query. Required.
	Model llm.Model
	// Answer writes answers (nil: Model).
	Answer llm.Model
	// Embedder embeds note documents and queries. Nil means BM25 over the
	// same documents.
	Embedder embed.Embedder
	// Neighbours is how many nearest notes the evolution call sees
	// (default 5).
	Neighbours int
	// RetrieveK is the top-k of question-time search (default 10, the
	// reproduction's CLI default; the paper tuned 40–50 for GPT-4o-mini).
	RetrieveK int
	// EvolveThreshold is how many evolving notes trigger a rebuild of the
	// whole index (default 100).
	EvolveThreshold int
	// ContentDocument indexes a new note as content, context, keywords and
	// tags (the July 2025 fix) instead of context and keywords only.
	ContentDocument bool
	// ResetJ resets the neighbour counter for every hit (the December 2025
	// fix) instead of counting neighbours across the whole question.
	ResetJ bool
}

// Note is one memory note.
type Note struct {
	// ID is the caller's id of the turn (such as "D1:3").
	ID string `json:"id"`
	// Content is "Speaker <name>says : <text>" (the missing space is the
	// reference's).
	Content  string   `json:"content"`
	Time     string   `json:"time"`
	Keywords []string `json:"keywords"`
	Context  string   `json:"context"`
	Tags     []string `json:"tags"`
	// Links are insertion positions of linked notes.
	Links []int `json:"links,omitempty"`
}

// Input is a turn to add.
type Input struct {
	ID      string
	Speaker string
	Text    string
	// Time is kept verbatim (LoCoMo's session date_time).
	Time string
}

// Call records one LLM call.
type Call struct {
	Role      llm.Role
	Operation string
	Usage     llm.Usage
	Latency   time.Duration
	Cached    bool
	// Error is set when the call failed or its reply was unusable and a
	// fallback was used.
	Error string
}

// Memory is an A-Mem memory for one conversation. Add is serialised;
// Retrieve and Ask may run concurrently with each other.
type Memory struct {
	opts Options

	mu       sync.RWMutex // guards everything below
	notes    []Note
	docs     []string
	vecs     [][]float32 // one per note when an embedder is set
	lex      *bm25.Index // keyed by position, when no embedder is set
	evolved  int         // notes whose evolution said should_evolve
	rebuilds int
}

// New returns an empty Memory.
func New(opts Options) (*Memory, error) {
	if opts.Model == nil {
		return nil, ErrNoModel
	}
	if opts.Answer == nil {
		opts.Answer = opts.Model
	}
	def := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	def(&opts.Neighbours, DefaultNeighbours)
	def(&opts.RetrieveK, DefaultRetrieveK)
	def(&opts.EvolveThreshold, DefaultEvolveThreshold)
	return &Memory{opts: opts, lex: bm25.New(bm25.Options{})}, nil
}

// Notes returns a copy of the notes in insertion order.
func (m *Memory) Notes() []Note {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]Note, len(m.notes))
	for i, n := range m.notes {
		out[i] = cloneNote(n)
	}
	return out
}

// Rebuilds returns how many times the index was rebuilt (consolidated).
func (m *Memory) Rebuilds() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.rebuilds
}

func cloneNote(n Note) Note {
	n.Keywords = slices.Clone(n.Keywords)
	n.Tags = slices.Clone(n.Tags)
	n.Links = slices.Clone(n.Links)
	return n
}

// NoteContent is the content string A-Mem builds for a turn.
func NoteContent(speaker, text string) string {
	return "Speaker " + speaker + "says : " + text
}

// Add adds one turn as a note: the analysis call, the evolution call over
// the nearest notes, their effects, and the indexing of the new note. The
// calls made are returned even when an error is. Unusable model replies
// fall back as the reference does (empty keywords and tags, context
// "General"; no evolution); other errors abort and leave memory unchanged.
func (m *Memory) Add(ctx context.Context, in Input) ([]Call, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var calls []Call
	note := Note{ID: in.ID, Content: NoteContent(in.Speaker, in.Text), Time: in.Time}

	var nr NoteReply
	err := m.ask(ctx, &calls, llm.RoleMemory, PromptNote, NoteData{Content: note.Content}, &nr)
	switch {
	case err == nil:
		note.Keywords, note.Context, note.Tags = clean(nr.Keywords), strings.TrimSpace(nr.Context), clean(nr.Tags)
		if note.Context == "" {
			note.Context = "General"
		}
	case errors.Is(err, llm.ErrInvalidOutput):
		note.Keywords, note.Context, note.Tags = nil, "General", nil
	default:
		return calls, err
	}

	// Evolution over the nearest existing notes, searched by content.
	hits, err := m.search(ctx, note.Content, m.opts.Neighbours)
	if err != nil {
		return calls, err
	}
	ed := EvolveData{Content: note.Content, Context: note.Context, Keywords: note.Keywords}
	for _, h := range hits {
		n := m.notes[h]
		ed.Neighbours = append(ed.Neighbours, Neighbour{Index: h, Time: n.Time, Content: n.Content, Context: n.Context, Keywords: n.Keywords, Tags: n.Tags})
	}
	var er EvolveReply
	err = m.ask(ctx, &calls, llm.RoleMemory, PromptEvolve, ed, &er)
	if err != nil && !errors.Is(err, llm.ErrInvalidOutput) {
		return calls, err
	}
	evolved := err == nil && er.ShouldEvolve
	var updates map[int]Note
	if evolved {
		for _, a := range er.Actions {
			switch strings.TrimSpace(strings.ToLower(a)) {
			case "strengthen":
				for _, c := range er.SuggestedConnections {
					if c >= 0 && c < len(m.notes) {
						note.Links = append(note.Links, c)
					}
				}
				note.Tags = clean(er.TagsToUpdate)
			case "update_neighbor":
				updates = map[int]Note{}
				for i := 0; i < min(len(hits), len(er.NewTagsNeighborhood)); i++ {
					n := cloneNote(m.notes[hits[i]])
					n.Tags = clean(er.NewTagsNeighborhood[i])
					if i < len(er.NewContextNeighborhood) {
						n.Context = strings.TrimSpace(er.NewContextNeighborhood[i])
					}
					updates[hits[i]] = n
				}
			}
		}
	}

	// Everything the model said is known: compute the new document and its
	// vector before changing memory, so a failing embedder leaves it as
	// it was.
	doc := note.Context + " keywords: " + strings.Join(note.Keywords, ", ")
	if m.opts.ContentDocument {
		doc = "content:" + note.Content + " context:" + note.Context + " keywords: " + strings.Join(note.Keywords, ", ") +
			" tags: " + strings.Join(note.Tags, ", ")
	}
	var v []float32
	if m.opts.Embedder != nil {
		vs, err := m.opts.Embedder.Embed(ctx, []string{doc})
		if err != nil {
			return calls, fmt.Errorf("amem: embed note %s: %w", note.ID, err)
		}
		v = vec.Normalize(slices.Clone(vs[0]))
	}
	for i, n := range updates {
		m.notes[i] = n
	}
	pos := len(m.notes)
	m.notes = append(m.notes, note)
	m.docs = append(m.docs, doc)
	if m.opts.Embedder != nil {
		m.vecs = append(m.vecs, v)
	} else {
		m.lex.Add(strconv.Itoa(pos), doc)
	}
	if evolved {
		m.evolved++
		if m.evolved%m.opts.EvolveThreshold == 0 {
			if err := m.consolidate(ctx); err != nil {
				return calls, err
			}
		}
	}
	return calls, nil
}

// consolidate rebuilds the index from every note's content, context,
// keywords and tags. Caller holds mu.
func (m *Memory) consolidate(ctx context.Context) error {
	docs := make([]string, len(m.notes))
	for i, n := range m.notes {
		docs[i] = n.Content + " , " + n.Context + " " + strings.Join(n.Keywords, " ") + " " + strings.Join(n.Tags, " ")
	}
	if m.opts.Embedder != nil {
		vs, err := m.opts.Embedder.Embed(ctx, docs)
		if err != nil {
			return fmt.Errorf("amem: consolidate: %w", err)
		}
		for i := range vs {
			m.vecs[i] = vec.Normalize(slices.Clone(vs[i]))
		}
	} else {
		m.lex = bm25.New(bm25.Options{})
		for i, d := range docs {
			m.lex.Add(strconv.Itoa(i), d)
		}
	}
	m.docs = docs
	m.rebuilds++
	return nil
}

// search returns the positions of the k notes nearest to query, best first
// (ties by position). Caller holds mu.
func (m *Memory) search(ctx context.Context, query string, k int) ([]int, error) {
	if len(m.notes) == 0 || k <= 0 {
		return nil, nil
	}
	type hit struct {
		pos   int
		score float64
	}
	var hs []hit
	if m.opts.Embedder != nil {
		vs, err := embed.EmbedQuestions(ctx, m.opts.Embedder, []string{query})
		if err != nil {
			return nil, fmt.Errorf("amem: embed query: %w", err)
		}
		q := vec.Normalize(slices.Clone(vs[0]))
		for i, v := range m.vecs {
			hs = append(hs, hit{i, float64(vec.Dot(q, v))})
		}
	} else {
		for _, h := range m.lex.Search(query, k) {
			p, _ := strconv.Atoi(h.ID)
			hs = append(hs, hit{p, h.Score})
		}
	}
	slices.SortFunc(hs, func(a, b hit) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.pos, b.pos)
	})
	out := make([]int, 0, min(k, len(hs)))
	for _, h := range hs[:min(k, len(hs))] {
		out = append(out, h.pos)
	}
	return out, nil
}

// Entry is one note as placed in the answer context.
type Entry struct {
	Note Note
	// Pos is the note's insertion position.
	Pos int
	// Link is true for a note added as a neighbour of a hit.
	Link bool
}

// Result is what Retrieve found.
type Result struct {
	// Query is the search string (the keyword query, or the question when
	// the keyword reply was unusable).
	Query string
	// Hits are the note positions returned by search, best first.
	Hits []int
	// Entries are the notes in the order the answer model sees them: each
	// hit followed by its linked notes. Duplicates are kept.
	Entries []Entry
	// Context is Entries rendered as the answer model sees them.
	Context string
	Calls   []Call
}

// IDs returns the distinct ids of the entries, in first-seen order.
func (r *Result) IDs() []string {
	var out []string
	for _, e := range r.Entries {
		if !slices.Contains(out, e.Note.ID) {
			out = append(out, e.Note.ID)
		}
	}
	return out
}

// Retrieve makes the keyword-query call, searches the top RetrieveK notes
// and expands their links.
func (m *Memory) Retrieve(ctx context.Context, question string) (*Result, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	res := &Result{}
	var qr QueryReply
	err := m.ask(ctx, &res.Calls, llm.RoleMemory, PromptQuery, QueryData{Question: question}, &qr)
	switch {
	case err == nil && strings.TrimSpace(qr.Keywords) != "":
		res.Query = strings.TrimSpace(qr.Keywords)
	case err == nil || errors.Is(err, llm.ErrInvalidOutput):
		res.Query = question
	default:
		return res, err
	}
	k := m.opts.RetrieveK
	res.Hits, err = m.search(ctx, res.Query, k)
	if err != nil {
		return res, err
	}
	j := 0
	for _, h := range res.Hits {
		n := m.notes[h]
		res.Entries = append(res.Entries, Entry{Note: cloneNote(n), Pos: h})
		if m.opts.ResetJ {
			j = 0
		}
		for _, l := range n.Links {
			res.Entries = append(res.Entries, Entry{Note: cloneNote(m.notes[l]), Pos: l, Link: true})
			if j >= k {
				break
			}
			j++
		}
	}
	res.Context = RenderContext(res.Entries)
	return res, nil
}

// RenderContext renders entries as the reference's memory string: per
// note "talk start time:…memory content: …memory context: …memory
// keywords: …memory tags: …" and a newline.
func RenderContext(entries []Entry) string {
	var b strings.Builder
	for _, e := range entries {
		n := e.Note
		fmt.Fprintf(&b, "talk start time:%smemory content: %smemory context: %smemory keywords: %smemory tags: %s\n",
			n.Time, n.Content, n.Context, strings.Join(n.Keywords, ", "), strings.Join(n.Tags, ", "))
	}
	return b.String()
}

// Answer is the outcome of Ask.
type Answer struct {
	Result
	// Text is the answer ("" when the answer reply was unusable).
	Text string
	// Temporal reports whether the date instruction was used.
	Temporal bool
}

// Ask retrieves memories and has the answer model answer from them. The
// date instruction is used when a rule-based analysis of the question says
// it asks about time.
func (m *Memory) Ask(ctx context.Context, question string) (*Answer, error) {
	res, err := m.Retrieve(ctx, question)
	if err != nil {
		return nil, err
	}
	a := &Answer{Result: *res, Temporal: temporal.AnalyzeQuestion(question).AsksTime()}
	var r AnswerReply
	err = m.ask(ctx, &a.Calls, llm.RoleAnswer, PromptAnswer, AnswerData{Question: question, Context: res.Context, Temporal: a.Temporal}, &r)
	switch {
	case err == nil:
		a.Text = strings.TrimSpace(r.Answer)
	case errors.Is(err, llm.ErrInvalidOutput):
	default:
		return nil, err
	}
	return a, nil
}

// ask renders a prompt, sends it to the model of role, decodes the reply
// into out and records the call.
func (m *Memory) ask(ctx context.Context, calls *[]Call, role llm.Role, name string, data, out any) error {
	p, err := Render(name, data)
	if err != nil {
		return err
	}
	model := m.opts.Model
	if role == llm.RoleAnswer {
		model = m.opts.Answer
	}
	req := llm.Request{
		Messages:   []llm.Message{{Role: "system", Content: p.System}, {Role: "user", Content: p.User}},
		Schema:     p.Schema,
		SchemaName: p.Name,
		Operation:  p.Name,
	}
	start := time.Now()
	resp, err := llm.CompleteJSON(ctx, model, req, out)
	c := Call{Role: role, Operation: name, Usage: resp.Usage, Latency: resp.Latency, Cached: resp.Cached}
	if c.Latency == 0 && !resp.Cached {
		c.Latency = time.Since(start)
	}
	if err != nil {
		c.Error = err.Error()
	}
	*calls = append(*calls, c)
	if err != nil {
		return fmt.Errorf("amem: %s call: %w", name, err)
	}
	return nil
}

// clean trims list items and drops empty ones.
func clean(xs []string) []string {
	var out []string
	for _, x := range xs {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}
