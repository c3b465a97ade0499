package harness

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/eval/amem"
	"github.com/higmem/higmem/eval/locomo"
	"github.com/higmem/higmem/internal/prompt"
	"github.com/higmem/higmem/internal/rules"
	"github.com/higmem/higmem/internal/temporal"
	"github.com/higmem/higmem/internal/vec"
	"github.com/higmem/higmem/llm"
)

// estimateTokens approximates a token count as the engine does (about 4
// bytes per token).
func estimateTokens(s string) int { return (len(s) + 3) / 4 }

// SessionInputs returns a session's turns as engine input: ids are the
// dialogue ids, the time is the session's date, captions are image
// attachments. The research loaders (internal/research) ingest with it too.
func SessionInputs(sess locomo.Session) []higmem.TurnInput {
	in := make([]higmem.TurnInput, 0, len(sess.Turns))
	for _, tr := range sess.Turns {
		ti := higmem.TurnInput{ID: tr.DiaID, SessionID: strconv.Itoa(sess.N), Speaker: tr.Speaker, Text: tr.Text, Time: sess.DateTime}
		if tr.Caption != "" {
			ti.Attachments = []higmem.Attachment{{Kind: "image", Caption: tr.Caption}}
		}
		in = append(in, ti)
	}
	return in
}

// engineSystem is a higmem Memory in some mode and ablation.
type engineSystem struct {
	name                      string
	mode                      higmem.Mode
	links, noEvents, noFilter bool
	noTemporal                bool
	noProfiles                bool
	noStage                   bool
	// retrieveOnly makes Ask call Retrieve: no answer is written.
	retrieveOnly bool
	// topK makes a top-k system (hybrid-topk, bm25-topk): its evidence is
	// the search stage.
	topK bool
	// noEmbed builds memory without the embedder (BM25 only).
	noEmbed bool
}

func (e *engineSystem) Name() string           { return e.name }
func (e *engineSystem) NeedsMemoryModel() bool { return e.mode != higmem.ModeOffline }

func (e *engineSystem) Build(ctx context.Context, env *Env, s *locomo.Sample, done func(SessionBuild)) (Instance, error) {
	emb := env.Embedder
	if e.noEmbed {
		emb = nil
	}
	opts := higmem.Options{
		Embedder:   emb,
		Mode:       e.mode,
		PaperLinks: e.links,
		Ablations: higmem.Ablations{
			NoEvents: e.noEvents,
			NoFilter: e.noFilter,
			// NoTemporal drops the temporal route (issue 7's measurement).
			NoTemporal: e.noTemporal,
			// NoProfiles drops profile evidence (issue 20's measurement).
			NoProfiles: e.noProfiles,
			// NoStage keeps the context score's order (issue 15).
			NoStage: e.noStage,
		},
	}
	if e.mode != higmem.ModeOffline {
		opts.MemoryModel, opts.AnswerModel = env.Memory, env.Answer
	}
	if e.topK {
		opts.KTurn = env.K
	}
	m, err := higmem.Open(ctx, opts)
	if err != nil {
		return nil, err
	}
	sp := higmem.Space{UserID: s.ID, AgentID: "locomo-eval"}
	for _, sess := range s.Sessions {
		in := SessionInputs(sess)
		if len(in) == 0 {
			continue
		}
		start := time.Now()
		res, err := m.Add(ctx, sp, in)
		if err != nil {
			m.Close()
			return nil, fmt.Errorf("%s: %s session %d: %w", e.name, s.ID, sess.N, err)
		}
		done(SessionBuild{Session: sess.N, Turns: len(in), Calls: res.Calls, Wall: time.Since(start), Warnings: res.Warnings})
	}
	return &engineInstance{sys: e, m: m, sp: sp, env: env, sample: s}, nil
}

type engineInstance struct {
	sys    *engineSystem
	m      *higmem.Memory
	sp     higmem.Space
	env    *Env
	sample *locomo.Sample
}

func (in *engineInstance) Close() error { return in.m.Close() }

func (in *engineInstance) Ask(ctx context.Context, q Query) (*Outcome, error) {
	if in.sys.topK {
		res, err := in.m.Retrieve(ctx, in.sp, q.Question, higmem.RetrieveOptions{KTurn: in.env.K})
		if err != nil {
			return nil, err
		}
		return answerFromTurns(ctx, in.env.answerModel(), in.sample, q.Question, res.Trace.Stage("search"), "search")
	}
	if in.sys.retrieveOnly {
		res, err := in.m.Retrieve(ctx, in.sp, q.Question, higmem.RetrieveOptions{})
		if err != nil {
			return nil, err
		}
		return &Outcome{Evidence: res.IDs(), Stages: res.Trace.Stages, ContextTokens: estimateTokens(res.Context),
			Calls: res.Trace.Calls, Rounds: res.Trace.Rounds, Notes: res.Trace.Notes}, nil
	}
	ans, err := in.m.Ask(ctx, in.sp, q.Question, higmem.RetrieveOptions{})
	if err != nil {
		return nil, err
	}
	return &Outcome{Answer: ans.Text, Answered: true, Evidence: ans.IDs(), Stages: ans.Trace.Stages,
		ContextTokens: estimateTokens(ans.Context), Calls: ans.Trace.Calls, Rounds: ans.Trace.Rounds, Notes: ans.Trace.Notes}, nil
}

// denseTopK ranks turns by the cosine similarity of their vectors to the
// question's alone: the dense half of hybrid-topk, as a baseline.
type denseTopK struct{}

func (denseTopK) Name() string           { return "dense-topk" }
func (denseTopK) NeedsMemoryModel() bool { return false }

// NeedsEmbedder reports that dense-topk is skipped without an embedder.
func (denseTopK) NeedsEmbedder() bool { return true }

func (denseTopK) Build(ctx context.Context, env *Env, s *locomo.Sample, done func(SessionBuild)) (Instance, error) {
	if env.Embedder == nil {
		return nil, errors.New("dense-topk: no embedder configured")
	}
	in := &denseInstance{env: env, sample: s}
	for _, sess := range s.Sessions {
		start := time.Now()
		texts := make([]string, len(sess.Turns))
		for i, t := range sess.Turns {
			// The engine's embedding form, so that the vectors are the
			// ones hybrid-topk fuses.
			texts[i] = rules.EmbedForm(t.Speaker, sess.DateTime, t.Content())
			in.ids = append(in.ids, t.DiaID)
		}
		if len(texts) > 0 {
			vs, err := env.Embedder.Embed(ctx, texts)
			if err != nil {
				return nil, fmt.Errorf("dense-topk: %s session %d: %w", s.ID, sess.N, err)
			}
			for _, v := range vs {
				in.vecs = append(in.vecs, vec.Normalize(slices.Clone(v)))
			}
		}
		done(SessionBuild{Session: sess.N, Turns: len(sess.Turns), Wall: time.Since(start)})
	}
	return in, nil
}

// denseInstance holds one vector per turn, in file order.
type denseInstance struct {
	env    *Env
	sample *locomo.Sample
	ids    []string
	vecs   [][]float32
}

func (d *denseInstance) Close() error { return nil }

func (d *denseInstance) Ask(ctx context.Context, q Query) (*Outcome, error) {
	vs, err := embed.EmbedQuestions(ctx, d.env.Embedder, []string{q.Question})
	if err != nil {
		return nil, err
	}
	qv := vec.Normalize(slices.Clone(vs[0]))
	idx := make([]int, len(d.vecs))
	cos := make([]float32, len(d.vecs))
	for i, v := range d.vecs {
		idx[i], cos[i] = i, vec.Dot(qv, v)
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(cos[b], cos[a]) })
	var ids []string
	for _, i := range idx[:min(d.env.K, len(idx))] {
		ids = append(ids, d.ids[i])
	}
	return answerFromTurns(ctx, d.env.answerModel(), d.sample, q.Question, ids, "search")
}

// fullContext passes every turn to the answer model.
type fullContext struct{}

func (fullContext) Name() string           { return "full-context" }
func (fullContext) NeedsMemoryModel() bool { return false }

func (fullContext) Build(_ context.Context, env *Env, s *locomo.Sample, done func(SessionBuild)) (Instance, error) {
	for _, sess := range s.Sessions {
		done(SessionBuild{Session: sess.N, Turns: len(sess.Turns)})
	}
	return &listInstance{env: env, sample: s, all: true}, nil
}

// oracle passes only the gold evidence turns to the answer model.
type oracle struct{}

func (oracle) Name() string           { return "oracle" }
func (oracle) NeedsMemoryModel() bool { return false }

func (oracle) Build(_ context.Context, env *Env, s *locomo.Sample, done func(SessionBuild)) (Instance, error) {
	for _, sess := range s.Sessions {
		done(SessionBuild{Session: sess.N, Turns: len(sess.Turns)})
	}
	return &listInstance{env: env, sample: s}, nil
}

// listInstance answers from all turns or from the gold evidence.
type listInstance struct {
	env    *Env
	sample *locomo.Sample
	all    bool
}

func (l *listInstance) Close() error { return nil }

func (l *listInstance) Ask(ctx context.Context, q Query) (*Outcome, error) {
	var ids []string
	if l.all {
		for _, t := range l.sample.Turns() {
			ids = append(ids, t.DiaID)
		}
	} else {
		for _, id := range q.Gold {
			if _, ok := l.sample.Turn(id); ok && !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	return answerFromTurns(ctx, l.env.answerModel(), l.sample, q.Question, ids, "")
}

// answerFromTurns shows the given turns, in conversation order, to the
// answer model with higmem's answer prompt; the date instruction is chosen
// by the rule-based analysis of the question. With a nil model it only
// reports the evidence. stage, when set, names the stage ids came from.
func answerFromTurns(ctx context.Context, model llm.Model, s *locomo.Sample, question string, ids []string, stage string) (*Outcome, error) {
	var turns []locomo.Turn
	for _, id := range ids {
		if t, ok := s.Turn(id); ok {
			turns = append(turns, t)
		}
	}
	slices.SortFunc(turns, func(a, b locomo.Turn) int { return a.Seq - b.Seq })
	dates := sessionDates(s)
	pts := make([]prompt.Turn, len(turns))
	final := make([]string, len(turns))
	var ctxText strings.Builder
	for i, t := range turns {
		pts[i] = prompt.Turn{ID: t.DiaID, Date: dates[t.Session], Speaker: t.Speaker, Text: t.Content()}
		final[i] = t.DiaID
		date := pts[i].Date
		if date == "" {
			date = "unknown date"
		}
		fmt.Fprintf(&ctxText, "[%s] %s | %s: %s\n", t.DiaID, date, t.Speaker, t.Content())
	}
	out := &Outcome{Evidence: final, ContextTokens: estimateTokens(ctxText.String())}
	if stage != "" {
		out.Stages = append(out.Stages, higmem.Stage{Name: stage, IDs: slices.Clone(ids)})
	}
	out.Stages = append(out.Stages, higmem.Stage{Name: "final", IDs: final})
	if model == nil {
		return out, nil
	}
	p, err := prompt.Render(prompt.Answer, prompt.AnswerData{Question: question, Turns: pts, Temporal: temporal.AnalyzeQuestion(question).AsksTime()})
	if err != nil {
		return nil, err
	}
	req := llm.Request{
		Messages:   []llm.Message{{Role: "system", Content: p.System}, {Role: "user", Content: p.User}},
		Schema:     p.Schema,
		Constraint: p.Constraint,
		SchemaName: p.Name,
		Operation:  p.Name,
		MaxTokens:  prompt.MaxTokens(prompt.Answer, 1),
	}
	var r prompt.AnswerReply
	start := time.Now()
	resp, err := llm.CompleteJSON(ctx, model, req, &r)
	c := higmem.Call{Role: llm.RoleAnswer, Operation: prompt.Answer, Round: 1, Usage: resp.Usage, Latency: resp.Latency, Cached: resp.Cached}
	if c.Latency == 0 && !resp.Cached {
		c.Latency = time.Since(start)
	}
	switch {
	case err == nil:
		out.Answer = strings.TrimSpace(r.Answer)
	case errors.Is(err, llm.ErrInvalidOutput):
		c.Error = err.Error()
	default:
		return nil, err
	}
	out.Answered = true
	out.Calls = []higmem.Call{c}
	out.Rounds = 1
	return out, nil
}

// sessionDates maps session numbers to the date shown to answer models
// ("8 May 2023"), or the raw date when it does not parse.
func sessionDates(s *locomo.Sample) map[int]string {
	out := make(map[int]string, len(s.Sessions))
	for _, sess := range s.Sessions {
		if t, err := sess.Time(); err == nil {
			out[sess.N] = temporal.FormatDay(t)
		} else {
			out[sess.N] = sess.DateTime
		}
	}
	return out
}

// amemSystem is the A-Mem baseline (eval/amem).
type amemSystem struct{}

func (amemSystem) Name() string           { return "amem" }
func (amemSystem) NeedsMemoryModel() bool { return true }

func (amemSystem) Build(ctx context.Context, env *Env, s *locomo.Sample, done func(SessionBuild)) (Instance, error) {
	m, err := amem.New(amem.Options{Model: env.Memory, Answer: env.Answer, Embedder: env.Embedder, RetrieveK: env.AMemK})
	if err != nil {
		return nil, err
	}
	for _, sess := range s.Sessions {
		start := time.Now()
		var calls []higmem.Call
		for _, t := range sess.Turns {
			cs, err := m.Add(ctx, amem.Input{ID: t.DiaID, Speaker: t.Speaker, Text: t.Content(), Time: sess.DateTime})
			calls = append(calls, amemCalls(cs, 0)...)
			if err != nil {
				return nil, fmt.Errorf("amem: %s turn %s: %w", s.ID, t.DiaID, err)
			}
		}
		done(SessionBuild{Session: sess.N, Turns: len(sess.Turns), Calls: calls, Wall: time.Since(start)})
	}
	return &amemInstance{m: m}, nil
}

func amemCalls(cs []amem.Call, round int) []higmem.Call {
	out := make([]higmem.Call, len(cs))
	for i, c := range cs {
		r := round
		if round > 0 {
			r = round + i
		}
		out[i] = higmem.Call{Role: c.Role, Operation: c.Operation, Round: r, Usage: c.Usage, Latency: c.Latency, Cached: c.Cached, Error: c.Error}
	}
	return out
}

type amemInstance struct{ m *amem.Memory }

func (a *amemInstance) Close() error { return nil }

func (a *amemInstance) Ask(ctx context.Context, q Query) (*Outcome, error) {
	ans, err := a.m.Ask(ctx, q.Question)
	if err != nil {
		return nil, err
	}
	notes := a.m.Notes()
	var search, links []string
	for _, h := range ans.Hits {
		search = append(search, notes[h].ID)
	}
	for _, e := range ans.Entries {
		if e.Link && !slices.Contains(links, e.Note.ID) {
			links = append(links, e.Note.ID)
		}
	}
	final := ans.IDs()
	return &Outcome{
		Answer:        ans.Text,
		Answered:      true,
		Evidence:      final,
		Stages:        []higmem.Stage{{Name: "search", IDs: search}, {Name: "links", IDs: links}, {Name: "final", IDs: final}},
		ContextTokens: estimateTokens(ans.Context),
		Calls:         amemCalls(ans.Calls, 1),
		Rounds:        len(ans.Calls),
	}, nil
}
