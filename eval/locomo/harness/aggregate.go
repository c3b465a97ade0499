package harness

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/higmem/higmem/eval/locomo"
	"github.com/higmem/higmem/llm"
)

// Report aggregates one run, or several runs side by side.
type Report struct {
	Runs    []RunInfo      `json:"runs"`
	Systems []SystemResult `json:"systems"`
}

// RunInfo names a run directory and its configuration.
type RunInfo struct {
	Name   string    `json:"name"`
	Dir    string    `json:"dir"`
	Config RunConfig `json:"config"`
	// Calibration is how the judge graded CalibrationSet (nil: no judge,
	// or a run made before calibration existed).
	Calibration *Calibration `json:"judge_calibration,omitempty"`
}

// SystemResult is everything measured for one system in one run.
type SystemResult struct {
	// Label names the system in tables: its name, or "name @ run" when
	// several runs are compared.
	Label       string `json:"label"`
	System      string `json:"system"`
	Run         string `json:"run"`
	Description string `json:"description"`
	// Skipped says why the system did not run ("" if it ran).
	Skipped   string `json:"skipped,omitempty"`
	Questions int    `json:"questions"`
	// Failed counts the questions that could not be asked (Error set on
	// their records), FailedBuilds the samples whose memory build failed;
	// FirstError is the first of those errors.
	Failed       int    `json:"failed,omitempty"`
	FailedBuilds int    `json:"failed_builds,omitempty"`
	FirstError   string `json:"first_error,omitempty"`
	// Groups are the selected categories (by number), then "1-4" (all
	// but trap-scored questions) and "1-5" (all), micro-averages over
	// questions (see groupDefs).
	Groups []Group `json:"groups"`
	// Stages scores each retrieval stage over the questions with gold
	// evidence.
	Stages []StageSummary `json:"stages,omitempty"`
	// Curve is recall at k of the ranked search stage, k = 1, 2, ...
	Curve []CurvePoint `json:"curve,omitempty"`
	// SampleRecall is the mean and population sd over samples
	// (conversations) of each sample's evidence recall, over all
	// questions with gold evidence (Runs counts the samples, N the
	// questions); nil without evidence.
	SampleRecall *MeanSD `json:"sample_recall,omitempty"`
	// AtOfflineK is, for a top-k system run beside offline mode, its
	// evidence at offline's K ("@K"): nil for other systems or without an
	// offline run.
	AtOfflineK *Floor `json:"at_offline_k,omitempty"`
	// Build, QA and Judge count LLM work: Build per turn, QA and Judge per
	// question.
	Build Cost `json:"build"`
	QA    Cost `json:"qa"`
	Judge Cost `json:"judge"`
}

// Group aggregates the questions of one category or of several.
type Group struct {
	Key string `json:"key"` // a category number, "1-4" or "1-5"
	// Name is the category's name in the data file (LoCoMo's official
	// names for a file without its own) or the aggregate's ("all (1-5)").
	Name     string `json:"name"`
	N        int    `json:"n"`
	Answered int    `json:"answered"`
	// Answer scores: means over answered questions (nil when none).
	OfficialF1 *float64 `json:"official_f1,omitempty"`
	AMemF1     *float64 `json:"amem_f1,omitempty"`
	BLEU1      *float64 `json:"bleu1,omitempty"`
	EM         *float64 `json:"em,omitempty"`
	// J is the judge accuracy, mean and sd over judge runs (nil without
	// judge verdicts; category 5 is never judged).
	J *MeanSD `json:"j,omitempty"`
	// EvidenceN counts questions with gold evidence; Precision, Recall
	// and K are their means (nil when EvidenceN is 0).
	EvidenceN int      `json:"evidence_n"`
	Precision *float64 `json:"p,omitempty"`
	Recall    *float64 `json:"r,omitempty"`
	K         *float64 `json:"k,omitempty"`
	// Means over all questions of the group.
	ContextTokens float64 `json:"context_tokens"`
	// AnswerPromptTokens is the mean prompt size of the answer calls.
	AnswerPromptTokens float64 `json:"answer_prompt_tokens"`
	Rounds             float64 `json:"rounds"`
	WallMS             float64 `json:"wall_ms"`
}

// MeanSD is a mean and a population standard deviation over runs.
type MeanSD struct {
	Mean float64 `json:"mean"`
	SD   float64 `json:"sd"`
	Runs int     `json:"runs"`
	// N is the number of judged questions (of the first run).
	N int `json:"n"`
}

// StageSummary scores one retrieval stage.
type StageSummary struct {
	Name      string  `json:"name"`
	N         int     `json:"n"`
	K         float64 `json:"k"`
	Precision float64 `json:"p"`
	Recall    float64 `json:"r"`
}

// Floor compares a top-k system with offline mode at offline's K: per
// question with gold evidence that both answered, the top-k system's
// ranked search list is cut to the K (distinct turns) offline mode passed
// for that same question, and scored. Offline holds the floor when its
// recall is at least the cut list's.
type Floor struct {
	// N counts the questions compared; K is offline's mean K over them.
	N int     `json:"n"`
	K float64 `json:"k"`
	// Precision and Recall are the top-k system's means at offline's K.
	Precision float64 `json:"p"`
	Recall    float64 `json:"r"`
	// OfflinePrecision and OfflineRecall are offline mode's means over
	// the same questions.
	OfflinePrecision float64 `json:"offline_p"`
	OfflineRecall    float64 `json:"offline_r"`
	// Short counts the questions whose top-k list held fewer distinct
	// turns than offline's K (--k below it): scored with the whole list.
	Short int `json:"short,omitempty"`
}

// Holds reports whether offline mode's recall is at least the top-k
// system's at offline's K.
func (f *Floor) Holds() bool { return f.OfflineRecall >= f.Recall }

// FloorReference is the system whose per-question K the top-k systems are
// cut to.
const FloorReference = "offline"

// isTopK reports whether a system is a plain top-k baseline (hybrid-topk,
// dense-topk, bm25-topk), whose search stage is its ranked list.
func isTopK(name string) bool { return strings.HasSuffix(name, "-topk") }

// floorAt cuts each question of a top-k system to the K of the offline
// record of the same question (see Floor); nil when none compare.
func floorAt(topk, offline []QuestionRecord) *Floor {
	ref := make(map[string]QuestionRecord, len(offline))
	for _, q := range offline {
		if q.Error == "" && len(q.GoldEvidence) > 0 {
			ref[q.Sample+"|"+strconv.Itoa(q.QA)] = q
		}
	}
	var f Floor
	for _, q := range topk {
		o, ok := ref[q.Sample+"|"+strconv.Itoa(q.QA)]
		if !ok || q.Error != "" || len(q.GoldEvidence) == 0 {
			continue
		}
		var ranked []string
		for _, st := range q.Stages {
			if st.Name == "search" {
				ranked = st.IDs
			}
		}
		cut := firstDistinct(ranked, o.K)
		if len(cut) < o.K {
			f.Short++
		}
		p, r := locomo.EvidenceScore(cut, q.GoldEvidence)
		f.N++
		f.K += float64(o.K)
		f.Precision += p
		f.Recall += r
		f.OfflinePrecision += o.Precision
		f.OfflineRecall += o.Recall
	}
	if f.N == 0 {
		return nil
	}
	n := float64(f.N)
	f.K, f.Precision, f.Recall, f.OfflinePrecision, f.OfflineRecall = f.K/n, f.Precision/n, f.Recall/n, f.OfflinePrecision/n, f.OfflineRecall/n
	return &f
}

// firstDistinct returns the first k distinct ids of ranked, in order.
func firstDistinct(ranked []string, k int) []string {
	var out []string
	seen := map[string]bool{}
	for _, id := range ranked {
		if len(out) == k {
			break
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// CurvePoint is recall at a cut-off of the ranked search stage.
type CurvePoint struct {
	K      int     `json:"k"`
	Recall float64 `json:"r"`
}

// Cost counts the LLM work and wall time of a phase.
type Cost struct {
	// Units is the number of turns (construction) or questions.
	Units      int `json:"units"`
	Calls      int `json:"calls"`
	Cached     int `json:"cached"`
	Errors     int `json:"errors"`
	Prompt     int `json:"prompt_tokens"`
	Completion int `json:"completion_tokens"`
	// Requests, Reasked and FellBack sum the CallStats' (HTTP requests,
	// corrective re-asks, fallbacks after an unusable reply).
	Requests int `json:"requests"`
	Reasked  int `json:"reasked"`
	FellBack int `json:"fell_back"`
	// CountedPrompt and CountedCompletion are the run tokenizer's counts.
	CountedPrompt     int `json:"counted_prompt_tokens,omitempty"`
	CountedCompletion int `json:"counted_completion_tokens,omitempty"`
	// Warnings and Notes count the engine's AddResult.Warnings
	// (construction) and Trace.Notes (questions).
	Warnings int        `json:"warnings"`
	Notes    int        `json:"notes"`
	WallMS   float64    `json:"wall_ms"`
	ByOp     []CallStat `json:"by_op,omitempty"`
}

// Per returns x per unit (0 without units).
func (c Cost) Per(x float64) float64 {
	if c.Units == 0 {
		return 0
	}
	return x / float64(c.Units)
}

// Tokens is prompt plus completion tokens.
func (c Cost) Tokens() int { return c.Prompt + c.Completion }

// RoleTokens returns the prompt and completion tokens of one role.
func (c Cost) RoleTokens(role llm.Role) (calls, tokens int) {
	for _, s := range c.ByOp {
		if s.Role == role {
			calls += s.Calls
			tokens += s.Tokens()
		}
	}
	return calls, tokens
}

func (c *Cost) add(stats []CallStat) {
	c.ByOp = mergeStats(c.ByOp, stats)
	for _, s := range stats {
		c.Calls += s.Calls
		c.Cached += s.Cached
		c.Errors += s.Errors
		c.Prompt += s.Prompt
		c.Completion += s.Completion
		c.Requests += s.Requests
		c.Reasked += s.Reasked
		c.FellBack += s.FellBack
		c.CountedPrompt += s.CountedPrompt
		c.CountedCompletion += s.CountedCompletion
	}
}

// groupDef is one group of a report: a category, or an aggregate.
type groupDef struct {
	key  string
	name string
	cats []int
}

// groupDefs lists the groups of a run: one per selected category, named as
// the data file names it (RunConfig.CategoryNames; LoCoMo's official names
// for a file without type names), then "1-4" (every question that is not
// trap-scored: all but LoCoMo's adversarial category 5) and "1-5" (every
// question). The aggregate keys keep LoCoMo's spelling so that results
// stay comparable; their names say what they hold.
func groupDefs(rc RunConfig) []groupDef {
	cats := rc.Categories
	if len(cats) == 0 {
		cats = []int{1, 2, 3, 4, 5}
	}
	var out, scored []groupDef
	var all, notTrap []int
	for _, c := range cats {
		name := rc.categoryName(c)
		out = append(out, groupDef{strconv.Itoa(c), name, []int{c}})
		all = append(all, c)
		if !rc.trapScored(c) {
			notTrap = append(notTrap, c)
		}
	}
	allName, notTrapName := "all", "all"
	if rc.locomoNames() {
		allName, notTrapName = "all (1-5)", "all (1-4)"
	} else if len(notTrap) < len(all) {
		notTrapName = "all but adversarial"
	}
	scored = append(scored, groupDef{"1-4", notTrapName, notTrap}, groupDef{"1-5", allName, all})
	return append(out, scored...)
}

// categoryName names a category as the run's data file does.
func (c RunConfig) categoryName(cat int) string {
	if n, ok := c.CategoryNames[strconv.Itoa(cat)]; ok {
		return n
	}
	return locomo.CategoryName(cat)
}

// locomoNames reports whether the run's categories carry LoCoMo's names
// (a file without names of its own).
func (c RunConfig) locomoNames() bool {
	for k, n := range c.CategoryNames {
		if cat, err := strconv.Atoi(k); err != nil || n != locomo.CategoryName(cat) {
			return false
		}
	}
	return true
}

// trapScored reports whether answers of a category are scored against a
// tempting wrong answer (LoCoMo's adversarial category).
func (c RunConfig) trapScored(cat int) bool {
	return cat == locomo.Adversarial && c.categoryName(cat) == locomo.CategoryName(locomo.Adversarial)
}

// LoadRun reads a run directory and aggregates it.
func LoadRun(dir string) (*Report, error) {
	rc, err := readConfig(dir)
	if err != nil {
		return nil, err
	}
	if rc == nil {
		return nil, fmt.Errorf("harness: %s is not a run directory (no %s)", dir, ConfigFile)
	}
	qs, err := readJSONL[QuestionRecord](filepath.Join(dir, QuestionsFile))
	if err != nil {
		return nil, err
	}
	bs, err := readJSONL[BuildRecord](filepath.Join(dir, BuildsFile))
	if err != nil {
		return nil, err
	}
	cal, err := readCalibration(dir)
	if err != nil {
		return nil, err
	}
	name := filepath.Base(filepath.Clean(dir))
	systems := Summarize(*rc, name, bs, qs)
	if cal != nil && !cal.Passed {
		// A judge that failed its calibration has no J to report.
		for i := range systems {
			for j := range systems[i].Groups {
				systems[i].Groups[j].J = nil
			}
		}
	}
	return &Report{
		Runs:    []RunInfo{{Name: name, Dir: dir, Config: *rc, Calibration: cal}},
		Systems: systems,
	}, nil
}

// Compare loads several runs and puts their systems side by side, labelled
// "system @ run".
func Compare(dirs ...string) (*Report, error) {
	out := &Report{}
	for i, d := range dirs {
		r, err := LoadRun(d)
		if err != nil {
			return nil, err
		}
		name := r.Runs[0].Name
		if slices.ContainsFunc(out.Runs, func(x RunInfo) bool { return x.Name == name }) {
			name += "#" + strconv.Itoa(i+1)
			r.Runs[0].Name = name
		}
		out.Runs = append(out.Runs, r.Runs[0])
		for _, s := range r.Systems {
			s.Run = name
			if len(dirs) > 1 {
				s.Label = s.System + " @ " + name
			}
			out.Systems = append(out.Systems, s)
		}
	}
	return out, nil
}

// Summarize aggregates the records of one run, per system in the order of
// rc.Systems. Duplicate records (same system, sample and question) count
// once.
func Summarize(rc RunConfig, run string, builds []BuildRecord, questions []QuestionRecord) []SystemResult {
	// A question asked again after it failed (a resumed run) is counted
	// by its last record; any other repeat by its first.
	seenQ := map[string]int{}
	bySys := map[string][]QuestionRecord{}
	for _, q := range questions {
		if i, ok := seenQ[q.key()]; ok {
			if qs := bySys[q.System]; qs[i].Error != "" {
				qs[i] = q
			}
			continue
		}
		seenQ[q.key()] = len(bySys[q.System])
		bySys[q.System] = append(bySys[q.System], q)
	}
	// A failed build that a resumed run then made counts by what it
	// spent, not as a failure.
	// (a success record of the sample written after the failure's).
	rebuilt := map[string]bool{}
	lastFail := map[string]int{}
	for i, b := range builds {
		if b.Error != "" {
			lastFail[b.System+"|"+b.Sample] = i
		}
	}
	for i, b := range builds {
		if f, ok := lastFail[b.System+"|"+b.Sample]; ok && b.Error == "" && i > f {
			rebuilt[b.System+"|"+b.Sample] = true
		}
	}
	seenB := map[string]bool{}
	buildBySys := map[string][]BuildRecord{}
	for _, b := range builds {
		if seenB[b.key()] && b.Error == "" {
			continue
		}
		if b.Error != "" && rebuilt[b.System+"|"+b.Sample] {
			b.Error = ""
		}
		seenB[b.key()] = true
		buildBySys[b.System] = append(buildBySys[b.System], b)
	}
	var out []SystemResult
	for _, name := range rc.Systems {
		qs := bySys[name]
		slices.SortFunc(qs, func(a, b QuestionRecord) int {
			ai, bi := slices.Index(rc.Samples, a.Sample), slices.Index(rc.Samples, b.Sample)
			if ai != bi {
				return ai - bi
			}
			return a.QA - b.QA
		})
		sr := SystemResult{Label: name, System: name, Run: run, Description: Describe(name),
			Skipped: rc.Skipped[name], Questions: len(qs)}
		for _, g := range groupDefs(rc) {
			var in []QuestionRecord
			for _, q := range qs {
				if slices.Contains(g.cats, q.Category) {
					in = append(in, q)
				}
			}
			grp := summarizeGroup(in, rc.JudgeRuns)
			grp.Key, grp.Name = g.key, g.name
			sr.Groups = append(sr.Groups, grp)
		}
		sr.Stages = summarizeStages(qs)
		sr.SampleRecall = sampleRecall(qs)
		sr.Curve = searchCurve(qs, 100)
		if off, ok := bySys[FloorReference]; ok && isTopK(name) {
			sr.AtOfflineK = floorAt(qs, off)
		}
		for _, q := range qs {
			if q.Error != "" {
				sr.Failed++
				if sr.FirstError == "" {
					sr.FirstError = q.Error
				}
			}
		}
		for _, b := range buildBySys[name] {
			if b.Error != "" {
				sr.FailedBuilds++
				if sr.FirstError == "" || sr.Failed > 0 && !strings.Contains(sr.FirstError, b.Error) {
					sr.FirstError = "memory build of " + b.Sample + ": " + b.Error
				}
			}
			sr.Build.Units += b.Turns
			sr.Build.WallMS += b.WallMS
			sr.Build.Warnings += len(b.Warnings)
			sr.Build.add(b.Calls)
		}
		for _, q := range qs {
			sr.QA.Units++
			sr.QA.WallMS += q.WallMS
			sr.QA.Notes += len(q.Notes)
			sr.QA.add(q.Calls)
			if len(q.Judge) > 0 {
				sr.Judge.Units++
			}
			for _, v := range q.Judge {
				st := CallStat{Role: llm.RoleJudge, Operation: "judge", Calls: 1, Prompt: v.Prompt, Completion: v.Completion}
				if v.Cached {
					st.Cached = 1
				}
				if v.Error != "" {
					st.Errors = 1
				}
				sr.Judge.add([]CallStat{st})
			}
		}
		out = append(out, sr)
	}
	return out
}

func mean(sum float64, n int) *float64 {
	if n == 0 {
		return nil
	}
	v := sum / float64(n)
	return &v
}

// summarizeGroup computes the means of one group of questions.
func summarizeGroup(qs []QuestionRecord, judgeRuns int) Group {
	g := Group{N: len(qs)}
	var off, af1, bleu, em, p, r, k float64
	var ctxTok, ansTok, rounds, wall float64
	for _, q := range qs {
		ctxTok += float64(q.ContextTokens)
		rounds += float64(q.Rounds)
		wall += q.WallMS
		if q.Scores != nil {
			g.Answered++
			off += q.Scores.Official
			af1 += q.Scores.AMemF1
			bleu += q.Scores.BLEU1
			em += q.Scores.EM
			for _, c := range q.Calls {
				if c.Role == llm.RoleAnswer {
					ansTok += float64(c.Prompt)
				}
			}
		}
		if len(q.GoldEvidence) > 0 {
			g.EvidenceN++
			p += q.Precision
			r += q.Recall
			k += float64(q.K)
		}
	}
	g.OfficialF1, g.AMemF1, g.BLEU1, g.EM = mean(off, g.Answered), mean(af1, g.Answered), mean(bleu, g.Answered), mean(em, g.Answered)
	g.Precision, g.Recall, g.K = mean(p, g.EvidenceN), mean(r, g.EvidenceN), mean(k, g.EvidenceN)
	if n := len(qs); n > 0 {
		g.ContextTokens, g.Rounds, g.WallMS = ctxTok/float64(n), rounds/float64(n), wall/float64(n)
	}
	if g.Answered > 0 {
		g.AnswerPromptTokens = ansTok / float64(g.Answered)
	}
	g.J = judgeScore(qs, judgeRuns)
	return g
}

// sampleRecall is the spread of evidence recall across samples.
func sampleRecall(qs []QuestionRecord) *MeanSD {
	sum, n := map[string]float64{}, map[string]int{}
	var order []string
	total := 0
	for _, q := range qs {
		if len(q.GoldEvidence) == 0 {
			continue
		}
		if n[q.Sample] == 0 {
			order = append(order, q.Sample)
		}
		sum[q.Sample] += q.Recall
		n[q.Sample]++
		total++
	}
	if total == 0 {
		return nil
	}
	rs := make([]float64, len(order))
	for i, s := range order {
		rs[i] = sum[s] / float64(n[s])
	}
	m, sd := meanSD(rs)
	return &MeanSD{Mean: m, SD: sd, Runs: len(rs), N: total}
}

// judgeScore is the mean and population sd over runs of each run's
// accuracy on the questions it judged without error.
func judgeScore(qs []QuestionRecord, runs int) *MeanSD {
	var accs []float64
	n0 := 0
	for run := range max(runs, 1) {
		correct, judged := 0, 0
		for _, q := range qs {
			for _, v := range q.Judge {
				if v.Run == run && v.Error == "" {
					judged++
					if v.Correct {
						correct++
					}
				}
			}
		}
		if judged == 0 {
			continue
		}
		if len(accs) == 0 {
			n0 = judged
		}
		accs = append(accs, float64(correct)/float64(judged))
	}
	if len(accs) == 0 {
		return nil
	}
	m, sd := meanSD(accs)
	return &MeanSD{Mean: m, SD: sd, Runs: len(accs), N: n0}
}

// meanSD returns the mean and the population standard deviation.
func meanSD(xs []float64) (float64, float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	m := s / float64(len(xs))
	v := 0.0
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	return m, math.Sqrt(v / float64(len(xs)))
}

// summarizeStages averages each stage over the questions with gold
// evidence that have it, in order of first appearance.
func summarizeStages(qs []QuestionRecord) []StageSummary {
	var out []StageSummary
	for _, q := range qs {
		if len(q.GoldEvidence) == 0 {
			continue
		}
		for _, st := range q.Stages {
			i := slices.IndexFunc(out, func(s StageSummary) bool { return s.Name == st.Name })
			if i < 0 {
				out = append(out, StageSummary{Name: st.Name})
				i = len(out) - 1
			}
			out[i].N++
			out[i].K += float64(st.K)
			out[i].Precision += st.Precision
			out[i].Recall += st.Recall
		}
	}
	for i := range out {
		n := float64(out[i].N)
		out[i].K /= n
		out[i].Precision /= n
		out[i].Recall /= n
	}
	return out
}

// searchCurve returns recall at k = 1..(longest search stage, at most
// limit) over the questions with gold evidence and a search stage; a
// question whose list is shorter than k keeps its full-list recall.
func searchCurve(qs []QuestionRecord, limit int) []CurvePoint {
	var lists [][]string
	var golds [][]string
	longest := 0
	for _, q := range qs {
		if len(q.GoldEvidence) == 0 {
			continue
		}
		for _, st := range q.Stages {
			if st.Name == "search" {
				lists = append(lists, st.IDs)
				golds = append(golds, q.GoldEvidence)
				longest = max(longest, len(st.IDs))
			}
		}
	}
	if len(lists) == 0 || longest == 0 {
		return nil
	}
	var out []CurvePoint
	for k := 1; k <= min(longest, limit); k++ {
		sum := 0.0
		for i, l := range lists {
			_, r := locomo.EvidenceScore(l[:min(k, len(l))], golds[i])
			sum += r
		}
		out = append(out, CurvePoint{K: k, Recall: sum / float64(len(lists))})
	}
	return out
}
