package harness

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"sync"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/eval/locomo"
	"github.com/higmem/higmem/llm"
)

// CallStat counts the LLM calls of one role and operation.
type CallStat struct {
	Role       llm.Role `json:"role"`
	Operation  string   `json:"op"`
	Calls      int      `json:"calls"`
	Cached     int      `json:"cached,omitempty"`
	Errors     int      `json:"errors,omitempty"`
	Prompt     int      `json:"prompt_tokens"`
	Completion int      `json:"completion_tokens"`
	// Requests counts the HTTP requests the calls made (retries, format
	// downgrades and re-asks included; cached calls count the requests of
	// the original call when the cache kept them).
	Requests int `json:"requests,omitempty"`
	// LatencyMS sums the wall time of the calls (a re-ask's, retries' and
	// timed-out requests' included), in milliseconds.
	LatencyMS float64 `json:"latency_ms,omitempty"`
	// Reasked counts corrective re-asks (a second request after an
	// unusable or cut reply); FellBack counts replies still unusable
	// after it, for which the engine used a documented fallback.
	Reasked  int `json:"reasked,omitempty"`
	FellBack int `json:"fell_back,omitempty"`
	// CountedPrompt and CountedCompletion are the tokens of the calls as
	// the run's tokenizer counts them (RunConfig.Tokenizer; 0 without
	// one), beside the server's or the fake's usage above.
	CountedPrompt     int `json:"counted_prompt_tokens,omitempty"`
	CountedCompletion int `json:"counted_completion_tokens,omitempty"`
	// ContentValid, ContentRepaired and ContentRejected judge what each
	// parsed reply says (internal/memcheck: junk titles, copied
	// instructions, ids not shown, runaway lists); Unparsed counts replies
	// with no JSON fitting the schema. Measured on every reply, re-asks
	// included, whatever the engine then did with it.
	ContentValid    int `json:"content_valid,omitempty"`
	ContentRepaired int `json:"content_repaired,omitempty"`
	ContentRejected int `json:"content_rejected,omitempty"`
	Unparsed        int `json:"unparsed,omitempty"`
}

// Logical is the number of calls the engine made, re-asks not counted:
// Calls itself, since an engine call carries its re-ask inside it
// (higmem.Call.Reasked, one Call for both requests), and the calls of a
// failed build are counted the same way (tally.takeAll).
func (c CallStat) Logical() int { return c.Calls }

// Tokens is prompt plus completion tokens.
func (c CallStat) Tokens() int { return c.Prompt + c.Completion }

// callStats groups calls by role and operation, sorted. Tokens of cached
// calls are counted (the cache keeps the usage of the original call), so
// a rerun reports what the work costs, not what it cost this time.
func callStats(calls []higmem.Call) []CallStat {
	var out []CallStat
	for _, c := range calls {
		i := slices.IndexFunc(out, func(s CallStat) bool { return s.Role == c.Role && s.Operation == c.Operation })
		if i < 0 {
			out = append(out, CallStat{Role: c.Role, Operation: c.Operation})
			i = len(out) - 1
		}
		s := &out[i]
		s.Calls++
		if c.Cached {
			s.Cached++
		}
		if c.Error != "" {
			s.Errors++
		}
		s.Prompt += c.Usage.PromptTokens
		s.Completion += c.Usage.CompletionTokens
		s.LatencyMS += ms(c.Latency)
	}
	sortStats(out)
	return out
}

func sortStats(s []CallStat) {
	slices.SortFunc(s, func(a, b CallStat) int {
		return cmp.Or(cmp.Compare(a.Role, b.Role), cmp.Compare(a.Operation, b.Operation))
	})
}

// mergeStats adds b into a (grouped by role and operation).
func mergeStats(a, b []CallStat) []CallStat {
	for _, x := range b {
		i := slices.IndexFunc(a, func(s CallStat) bool { return s.Role == x.Role && s.Operation == x.Operation })
		if i < 0 {
			a = append(a, CallStat{Role: x.Role, Operation: x.Operation})
			i = len(a) - 1
		}
		a[i].Calls += x.Calls
		a[i].Cached += x.Cached
		a[i].Errors += x.Errors
		a[i].Prompt += x.Prompt
		a[i].Completion += x.Completion
		a[i].Requests += x.Requests
		a[i].LatencyMS += x.LatencyMS
		a[i].Reasked += x.Reasked
		a[i].FellBack += x.FellBack
		a[i].CountedPrompt += x.CountedPrompt
		a[i].CountedCompletion += x.CountedCompletion
		a[i].ContentValid += x.ContentValid
		a[i].ContentRepaired += x.ContentRepaired
		a[i].ContentRejected += x.ContentRejected
		a[i].Unparsed += x.Unparsed
	}
	sortStats(a)
	return a
}

// BuildRecord is the construction of one session by one system; one line
// of builds.jsonl.
type BuildRecord struct {
	System  string     `json:"system"`
	Sample  string     `json:"sample"`
	Session int        `json:"session"`
	Turns   int        `json:"turns"`
	Calls   []CallStat `json:"calls,omitempty"`
	WallMS  float64    `json:"wall_ms"`
	// Warnings are the engine's AddResult.Warnings for the session:
	// fallbacks, unparsable times.
	Warnings []string `json:"warnings,omitempty"`
	// Error is set on the record of a build that failed (Session is then
	// failedBuild): the system's memory of the sample could not be made,
	// and its questions are recorded failed. Calls and WallMS are what the
	// failed session spent.
	Error string `json:"error,omitempty"`
}

// failedBuild is the Session of a failed build's record.
const failedBuild = -1

func (b BuildRecord) key() string { return b.System + "|" + b.Sample + "|" + strconv.Itoa(b.Session) }

// StageScore is the evidence score of one retrieval stage.
type StageScore struct {
	Name string   `json:"name"`
	IDs  []string `json:"ids"`
	// K is the number of distinct ids.
	K         int     `json:"k"`
	Precision float64 `json:"p"`
	Recall    float64 `json:"r"`
}

// Scores are the answer scores of one question.
type Scores struct {
	// Official is the official LoCoMo F1 (category 5: "not mentioned" /
	// "no information available" in the answer scores 1).
	Official float64 `json:"official_f1"`
	// AMemF1, BLEU1 and EM are A-Mem's metrics against A-Mem's reference:
	// the answer, or for category 5 the adversarial answer (trap-scored).
	AMemF1 float64 `json:"amem_f1"`
	BLEU1  float64 `json:"bleu1"`
	EM     float64 `json:"em"`
}

// Verdict is one LLM-judge run on one answer.
type Verdict struct {
	Run int `json:"run"`
	// Correct is the judge's label; meaningless when Error is set.
	Correct    bool   `json:"correct"`
	Error      string `json:"error,omitempty"`
	Prompt     int    `json:"prompt_tokens"`
	Completion int    `json:"completion_tokens"`
	Cached     bool   `json:"cached,omitempty"`
}

// QuestionRecord is the outcome of one question for one system; one line
// of questions.jsonl.
type QuestionRecord struct {
	System string `json:"system"`
	Sample string `json:"sample"`
	// QA is the question's index in the sample's qa list.
	QA       int    `json:"qa"`
	Category int    `json:"category"`
	Question string `json:"question"`
	Gold     string `json:"gold"`
	// Adversarial is the category-5 trap answer.
	Adversarial  string   `json:"adversarial_answer,omitempty"`
	GoldEvidence []string `json:"gold_evidence"`

	Answered bool      `json:"answered"`
	Answer   string    `json:"answer,omitempty"`
	Scores   *Scores   `json:"scores,omitempty"`
	Judge    []Verdict `json:"judge,omitempty"`

	// Evidence holds the ids passed to the answer model; K is their
	// distinct count, and Precision and Recall compare them with the gold
	// evidence (meaningful only when GoldEvidence is not empty).
	Evidence      []string     `json:"evidence"`
	K             int          `json:"k"`
	Precision     float64      `json:"p"`
	Recall        float64      `json:"r"`
	Stages        []StageScore `json:"stages,omitempty"`
	ContextTokens int          `json:"context_tokens"`
	Calls         []CallStat   `json:"calls,omitempty"`
	Rounds        int          `json:"rounds"`
	WallMS        float64      `json:"wall_ms"`
	// Notes are the engine's Trace.Notes: fallbacks, budget cuts.
	Notes []string `json:"notes,omitempty"`
	// Error is set when the question could not be asked (its system's
	// memory build failed, or the ask itself did, the run going on): it
	// counts as not answered. A resumed run asks it again.
	Error string `json:"error,omitempty"`
}

func (q QuestionRecord) key() string { return questionKey(q.System, q.Sample, q.QA) }

func questionKey(system, sample string, qa int) string {
	return system + "|" + sample + "|" + strconv.Itoa(qa)
}

// newRecord scores an outcome.
func newRecord(system string, s *locomo.Sample, qi int, out *Outcome) QuestionRecord {
	qa := s.QA[qi]
	r := QuestionRecord{
		System: system, Sample: s.ID, QA: qi, Category: qa.Category, Question: qa.Question,
		Gold: qa.Answer, Adversarial: qa.AdversarialAnswer, GoldEvidence: slices.Clone(qa.Evidence),
		Answered: out.Answered, Answer: out.Answer,
		Evidence: out.Evidence, ContextTokens: out.ContextTokens, Calls: callStats(out.Calls), Rounds: out.Rounds,
		Notes: out.Notes,
	}
	r.Calls = mergeStats(r.Calls, fallbacks(out.Notes))
	if r.GoldEvidence == nil {
		r.GoldEvidence = []string{}
	}
	if r.Evidence == nil {
		r.Evidence = []string{}
	}
	if out.Answered {
		ref := qa.Answer
		if qa.Category == locomo.Adversarial {
			ref = qa.AdversarialAnswer
		}
		r.Scores = &Scores{
			Official: locomo.OfficialF1(out.Answer, qa.Answer, qa.Category),
			AMemF1:   locomo.AMemF1(out.Answer, ref),
			BLEU1:    locomo.BLEU1(out.Answer, ref),
			EM:       locomo.ExactMatch(out.Answer, ref),
		}
	}
	r.K = distinct(out.Evidence)
	r.Precision, r.Recall = locomo.EvidenceScore(out.Evidence, qa.Evidence)
	for _, st := range out.Stages {
		if st.Name == "events" {
			continue // event ids, not turns
		}
		ss := StageScore{Name: st.Name, IDs: slices.Clone(st.IDs), K: distinct(st.IDs)}
		if ss.IDs == nil {
			ss.IDs = []string{}
		}
		ss.Precision, ss.Recall = locomo.EvidenceScore(st.IDs, qa.Evidence)
		r.Stages = append(r.Stages, ss)
	}
	return r
}

func distinct(ids []string) int {
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		seen[id] = true
	}
	return len(seen)
}

// jsonl appends JSON lines to a file; safe for concurrent use.
type jsonl struct {
	mu sync.Mutex
	f  *os.File
}

// openJSONL reads the records of path into fn (one call per complete
// line) and opens it for appending. A last line cut short by a killed
// run is removed; damage elsewhere is ErrCorrupt.
func openJSONL(path string, fn func([]byte) error) (*jsonl, error) {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	good := 0
	for off := 0; off < len(data); {
		nl := bytes.IndexByte(data[off:], '\n')
		if nl < 0 {
			break // unterminated last line: dropped below
		}
		line := data[off : off+nl]
		if len(bytes.TrimSpace(line)) > 0 {
			if err := fn(line); err != nil {
				if off+nl+1 < len(data) {
					return nil, fmt.Errorf("%w: %s at byte %d: %v", ErrCorrupt, path, off, err)
				}
				break
			}
		}
		off += nl + 1
		good = off
	}
	if good < len(data) {
		if err := os.Truncate(path, int64(good)); err != nil {
			return nil, err
		}
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &jsonl{f: f}, nil
}

// write appends v as one line and syncs it to disk.
func (w *jsonl) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.f.Write(b); err != nil {
		return err
	}
	return w.f.Sync()
}

func (w *jsonl) Close() error { return w.f.Close() }

// readJSONL reads every complete record of a JSON-lines file (none when it
// does not exist).
func readJSONL[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(b, &v); err != nil {
			// A cut-short last line of a killed run is ignored.
			if !sc.Scan() {
				break
			}
			return nil, fmt.Errorf("%w: %s line %d: %v", ErrCorrupt, path, line, err)
		}
		out = append(out, v)
	}
	return out, sc.Err()
}
