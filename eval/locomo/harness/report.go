package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/higmem/higmem/eval/locomo"
	"github.com/higmem/higmem/llm"
)

// Chart files written next to report.md.
const (
	ChartRecall = "recall_vs_k.svg"
	ChartF1     = "f1_by_category.svg"
	ChartTokens = "tokens_per_question.svg"
	ChartCalls  = "calls_per_turn.svg"
)

// Section headings of report.md, in order. Tests check that each is there.
var Sections = []string{
	"## Runs",
	"## Systems",
	"## Questions",
	"## Answer quality: official LoCoMo F1",
	"## Answer quality: A-Mem/Mem0 F1 (category 5 trap-scored)",
	"## Answer quality: BLEU-1 (category 5 trap-scored)",
	"## Answer quality: LLM judge J",
	"## Evidence retrieval at the K passed to the answer model",
	"## Retrieval by stage",
	"## Cost: memory construction (per turn)",
	"## Cost: question answering (per question)",
	"## Cost by operation",
	"## LLM output validity",
	"## Charts",
	"## Definitions",
}

// WriteReport writes report.md, results.json and the SVG charts of rep
// into dir.
func WriteReport(dir string, rep *Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := writeJSONFile(filepath.Join(dir, ResultsFile), rep); err != nil {
		return err
	}
	charts := map[string]string{
		ChartRecall: RecallChart(rep.Systems),
		ChartF1:     F1Chart(rep.Systems),
		ChartTokens: TokensChart(rep.Systems),
		ChartCalls:  CallsChart(rep.Systems),
	}
	for name, svg := range charts {
		if err := writeFile(filepath.Join(dir, name), []byte(svg)); err != nil {
			return err
		}
	}
	return writeFile(filepath.Join(dir, ReportFile), []byte(Markdown(rep)))
}

func f3(p *float64) string {
	if p == nil {
		return "–"
	}
	return fmt.Sprintf("%.3f", *p)
}

func f1d(x float64) string { return fmt.Sprintf("%.1f", x) }
func f2d(x float64) string { return fmt.Sprintf("%.2f", x) }

// table renders a Markdown table; the first left columns are
// left-aligned, the others (numbers) right-aligned.
func table(b *strings.Builder, head []string, rows [][]string, left ...int) {
	l := 1
	if len(left) > 0 {
		l = left[0]
	}
	b.WriteString("| " + strings.Join(head, " | ") + " |\n|")
	for i := range head {
		if i < l {
			b.WriteString("---|")
		} else {
			b.WriteString("---:|")
		}
	}
	b.WriteString("\n")
	for _, r := range rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	b.WriteString("\n")
}

// groupHead is a table head: first, then each group's key and name as the
// systems' groups give them ("category N" when runs name it differently).
func groupHead(first string, keys []string, ss []SystemResult) []string {
	h := []string{first}
	for _, k := range keys {
		name, single := "", true
		for _, s := range ss {
			for _, g := range s.Groups {
				if g.Key != k {
					continue
				}
				if name != "" && name != g.Name {
					name = "category " + k
				} else {
					name = g.Name
				}
			}
		}
		if _, err := strconv.Atoi(k); err != nil {
			single = false
		}
		switch {
		case name == "":
			h = append(h, k)
		case single && name != "category "+k:
			h = append(h, k+" "+name)
		default:
			h = append(h, name)
		}
	}
	return h
}

// categoryKeys returns the keys of the category groups the systems have,
// in number order; without trap, LoCoMo's trap-scored adversarial
// category is left out.
func categoryKeys(ss []SystemResult, trap bool) []string {
	var cats []int
	for _, s := range ss {
		for _, g := range s.Groups {
			if c, err := strconv.Atoi(g.Key); err == nil && !slices.Contains(cats, c) {
				if !trap && g.Name == locomo.CategoryName(locomo.Adversarial) {
					continue
				}
				cats = append(cats, c)
			}
		}
	}
	slices.Sort(cats)
	out := make([]string, len(cats))
	for i, c := range cats {
		out[i] = strconv.Itoa(c)
	}
	return out
}

// allKeys returns every category key, then "1-4" when some run has
// trap-scored questions (it then differs from "1-5"), then "1-5".
func allKeys(ss []SystemResult) []string {
	out := categoryKeys(ss, true)
	for _, s := range ss {
		if group(s, "1-4").N != group(s, "1-5").N {
			out = append(out, "1-4")
			break
		}
	}
	return append(out, "1-5")
}

func group(s SystemResult, key string) Group {
	for _, g := range s.Groups {
		if g.Key == key {
			return g
		}
	}
	return Group{Key: key}
}

// ran returns the systems that ran.
func ran(ss []SystemResult) []SystemResult {
	var out []SystemResult
	for _, s := range ss {
		if s.Skipped == "" {
			out = append(out, s)
		}
	}
	return out
}

func answered(ss []SystemResult) []SystemResult {
	var out []SystemResult
	for _, s := range ran(ss) {
		if group(s, "1-5").Answered > 0 {
			out = append(out, s)
		}
	}
	return out
}

// Markdown renders the report.
func Markdown(rep *Report) string {
	var b strings.Builder
	b.WriteString("# LoCoMo evaluation\n\n")
	b.WriteString("Made by `higmem eval locomo` (" + Version + "). Scores are on a 0–1 scale; every mean is a micro-average over questions. See Definitions at the end.\n\n")

	b.WriteString(Sections[0] + "\n\n")
	var rows [][]string
	for _, r := range rep.Runs {
		c := r.Config
		var commits []string
		for _, inv := range c.Invocations {
			cm := inv.GitCommit
			if cm == "" {
				cm = "unknown"
			} else if len(cm) > 12 {
				cm = cm[:12]
			}
			if inv.GitDirty {
				cm += " (dirty)"
			}
			if !slices.Contains(commits, cm) {
				commits = append(commits, cm)
			}
		}
		models := []string{}
		for _, role := range []string{"memory", "answer", "judge"} {
			m := c.Models[role]
			if m == "" {
				m = "none"
			}
			models = append(models, role+": "+m)
		}
		if c.FakeLLM != "" {
			models = append(models, "fake LLM: "+c.FakeLLM)
		}
		sha := c.DataSHA256
		if len(sha) > 12 {
			sha = sha[:12]
		}
		max := "all"
		if c.MaxQuestions > 0 {
			max = fmt.Sprint(c.MaxQuestions)
		}
		if c.MaxSessions > 0 {
			max += fmt.Sprintf(", first %d sessions", c.MaxSessions)
		}
		settings := fmt.Sprintf("top-k k=%d; amem k=%d; judge runs %d", c.K, c.AMemK, c.JudgeRuns)
		if c.CutTurns > 0 {
			settings += fmt.Sprintf("; %d turns over the engine's per-turn cap cut to fit it", c.CutTurns)
		}
		rows = append(rows, []string{r.Name, fmt.Sprintf("`%s` (sha256 %s…)", filepath.Base(c.Data), sha),
			fmt.Sprintf("%d: %s", len(c.Samples), strings.Join(c.Samples, ", ")),
			fmt.Sprintf("%v, max %s per sample", c.Categories, max),
			strings.Join(models, "; "), c.Embedder,
			settings,
			c.PromptVersion + ", " + c.AMemPrompts,
			strings.Join(commits, ", "), fmt.Sprint(len(c.Invocations))})
	}
	table(&b, []string{"run", "data", "samples", "categories", "models", "embedder", "settings", "prompts", "git commit", "invocations"}, rows, 10)

	b.WriteString(Sections[1] + "\n\n")
	rows = nil
	for _, s := range rep.Systems {
		status := "ran"
		if s.Skipped != "" {
			status = "**skipped**: " + s.Skipped
		} else if group(s, "1-5").Answered == 0 && s.Failed < s.Questions {
			status = "ran (retrieval only: no written answers)"
		}
		if s.Failed > 0 || s.FailedBuilds > 0 {
			status += fmt.Sprintf("; **%d questions failed** (%d memory builds failed; first: %s)", s.Failed, s.FailedBuilds, s.FirstError)
		}
		rows = append(rows, []string{s.Label, status, fmt.Sprint(s.Questions), s.Description})
	}
	table(&b, []string{"system", "status", "questions", "what it is"}, rows, 4)

	b.WriteString(Sections[2] + "\n\nQuestions per category (with gold evidence in brackets).\n\n")
	rows = nil
	for _, s := range ran(rep.Systems) {
		row := []string{s.Label}
		for _, k := range allKeys(rep.Systems) {
			g := group(s, k)
			row = append(row, fmt.Sprintf("%d (%d)", g.N, g.EvidenceN))
		}
		rows = append(rows, row)
	}
	table(&b, groupHead("system", allKeys(rep.Systems), rep.Systems), rows)

	metric := func(title, note string, get func(Group) *float64, keys []string) {
		b.WriteString(title + "\n\n" + note + "\n\n")
		ss := answered(rep.Systems)
		if len(ss) == 0 {
			b.WriteString("No system wrote answers (no answer model configured): answer metrics need an LLM.\n\n")
			return
		}
		rows := [][]string{}
		for _, s := range ss {
			row := []string{s.Label}
			for _, k := range keys {
				row = append(row, f3(get(group(s, k))))
			}
			rows = append(rows, row)
		}
		table(&b, groupHead("system", keys, rep.Systems), rows)
	}
	metric(Sections[3], "Official snap-research/LoCoMo scoring: normalised, Porter-stemmed token-multiset F1; category 1 partial F1 over comma-separated sub-answers; category 3 gold cut at `;`; category 5 scores 1 when the answer says \"not mentioned\" or \"no information available\".",
		func(g Group) *float64 { return g.OfficialF1 }, allKeys(rep.Systems))
	metric(Sections[4], "A-Mem's `utils.py` token-set F1 (used by A-Mem, Mem0 and HiGMem). † Category 5 is scored against `adversarial_answer`, the tempting wrong answer, as those papers do: a higher number means the system fell for the trap more often. Read \"all (1-4)\".",
		func(g Group) *float64 { return g.AMemF1 }, append(categoryKeys(rep.Systems, true), "1-4"))
	metric(Sections[5], "NLTK-compatible sentence BLEU-1 with A-Mem's reference (category 5 trap-scored, as above).",
		func(g Group) *float64 { return g.BLEU1 }, append(categoryKeys(rep.Systems, true), "1-4"))

	b.WriteString(Sections[6] + "\n\n")
	judged := false
	rows = nil
	keys := append(categoryKeys(rep.Systems, false), "1-4")
	for _, s := range answered(rep.Systems) {
		row := []string{s.Label}
		any := false
		for _, k := range keys {
			j := group(s, k).J
			if j == nil {
				row = append(row, "–")
				continue
			}
			any = true
			if j.Runs > 1 {
				row = append(row, fmt.Sprintf("%.3f ± %.3f", j.Mean, j.SD))
			} else {
				row = append(row, fmt.Sprintf("%.3f", j.Mean))
			}
		}
		if any {
			judged = true
			rows = append(rows, row)
		}
	}
	runs := 0
	for _, r := range rep.Runs {
		runs = max(runs, r.Config.JudgeRuns)
	}
	fmt.Fprintf(&b, "Fraction of answers the judge model labels CORRECT (generous on wording and date formats); category 5 is not judged. Mean ± population sd over %d judge run(s).\n\n", runs)
	failed := false
	for _, r := range rep.Runs {
		switch c := r.Calibration; {
		case c == nil && judged:
			fmt.Fprintf(&b, "Run %s: the judge was **not calibrated** (run made without a calibration set): read its J with care.\n\n", r.Name)
		case c != nil && c.Passed:
			fmt.Fprintf(&b, "Run %s: judge calibration %s.\n\n", r.Name, c)
		case c != nil:
			failed = true
			fmt.Fprintf(&b, "Run %s: **J withheld**: the judge failed its calibration (%s; the set holds \"Not mentioned\" answers its own prompt defines as WRONG), so its grades mean nothing.\n\n", r.Name, c)
		}
	}
	if judged {
		table(&b, groupHead("system", keys, rep.Systems), rows)
	} else if !failed {
		b.WriteString("No judge verdicts: no judge model configured, or no written answers.\n\n")
	}

	b.WriteString(Sections[7] + "\n\nRecall / precision (average K) over the questions with gold evidence. K counts the distinct turns passed to the answer model (for offline and retrieval-only runs: the turns that would be passed). The last column is the spread of recall across conversations: the mean and population sd of each sample's recall.\n\n")
	rows = nil
	for _, s := range ran(rep.Systems) {
		row := []string{s.Label}
		for _, k := range allKeys(rep.Systems) {
			g := group(s, k)
			if g.Recall == nil {
				row = append(row, "–")
				continue
			}
			row = append(row, fmt.Sprintf("%.3f / %.3f (%.1f)", *g.Recall, *g.Precision, *g.K))
		}
		spread := "–"
		if sr := s.SampleRecall; sr != nil {
			spread = fmt.Sprintf("%.3f ± %.3f (%d)", sr.Mean, sr.SD, sr.Runs)
		}
		rows = append(rows, append(row, spread))
	}
	table(&b, append(groupHead("system", allKeys(rep.Systems), rep.Systems), "R per conversation, mean ± sd (samples)"), rows)
	writeFloor(&b, rep.Systems)

	b.WriteString(Sections[8] + "\n\nCandidates after each retrieval step, over the questions with gold evidence (search: the turn search's top-k, lexical and dense relevance, in default mode offline mode's scores; predicted: turns chosen inside candidate events; filtered: kept by the relevance filter; union; links: added by link expansion; final: passed to the answer model).\n\n")
	rows = nil
	for _, s := range ran(rep.Systems) {
		for _, st := range s.Stages {
			rows = append(rows, []string{s.Label, st.Name, fmt.Sprint(st.N), f1d(st.K), fmt.Sprintf("%.3f", st.Precision), fmt.Sprintf("%.3f", st.Recall)})
		}
	}
	table(&b, []string{"system", "stage", "questions", "avg K", "P", "R"}, rows, 2)

	b.WriteString(Sections[9] + "\n\n")
	rows = nil
	for _, s := range ran(rep.Systems) {
		c := s.Build
		rows = append(rows, []string{s.Label, fmt.Sprint(c.Units), f2d(c.Per(float64(c.Calls))), f2d(c.Per(float64(c.Requests))),
			f1d(c.Per(float64(c.Prompt))), f1d(c.Per(float64(c.Completion))), f1d(c.Per(float64(c.Tokens()))),
			pct(c.Cached, c.Calls), fmt.Sprint(c.Errors), fmt.Sprint(c.Reasked), fmt.Sprint(c.FellBack), fmt.Sprint(c.Warnings), f2d(c.Per(c.WallMS))})
	}
	table(&b, []string{"system", "turns", "LLM calls / turn", "HTTP requests / turn", "prompt tok / turn", "completion tok / turn", "tokens / turn", "cached", "errors",
		"re-asks", "fallbacks", "warnings", "wall ms / turn"}, rows)

	b.WriteString(Sections[10] + "\n\n")
	rows = nil
	for _, s := range ran(rep.Systems) {
		c := s.QA
		g := group(s, "1-5")
		mc, mt := c.RoleTokens(llm.RoleMemory)
		ac, at := c.RoleTokens(llm.RoleAnswer)
		rows = append(rows, []string{s.Label, fmt.Sprint(c.Units), f2d(c.Per(float64(c.Calls))),
			f2d(c.Per(float64(mc))), f2d(c.Per(float64(ac))), f1d(c.Per(float64(mt))), f1d(c.Per(float64(at))),
			f1d(c.Per(float64(c.Tokens()))), f1d(g.ContextTokens), f1d(g.AnswerPromptTokens), f2d(g.Rounds),
			f2d(c.Per(float64(c.Requests))), pct(c.Cached, c.Calls), fmt.Sprint(c.Errors), fmt.Sprint(c.Reasked), fmt.Sprint(c.FellBack), fmt.Sprint(c.Notes),
			f2d(c.Per(c.WallMS))})
	}
	table(&b, []string{"system", "questions", "LLM calls / q", "memory calls / q", "answer calls / q", "memory tok / q", "answer tok / q", "tokens / q",
		"answer-context tok", "answer prompt tok", "rounds", "HTTP requests / q", "cached", "errors", "re-asks", "fallbacks", "notes", "wall ms / q"}, rows)
	rows = nil
	for _, s := range ran(rep.Systems) {
		if c := s.Judge; c.Calls > 0 {
			rows = append(rows, []string{s.Label, fmt.Sprint(c.Units), fmt.Sprint(c.Calls), f1d(c.Per(float64(c.Tokens()))), pct(c.Cached, c.Calls), fmt.Sprint(c.Errors)})
		}
	}
	if len(rows) > 0 {
		b.WriteString("Judge (not part of any system's cost):\n\n")
		table(&b, []string{"system", "judged questions", "judge calls", "tokens / judged q", "cached", "errors"}, rows)
	}

	b.WriteString(Sections[11] + "\n\nPer turn for construction, per question for question answering.\n\n")
	rows = nil
	for _, s := range ran(rep.Systems) {
		for _, ph := range phases(s) {
			for _, op := range ph.c.ByOp {
				rows = append(rows, []string{s.Label, ph.name, string(op.Role), op.Operation, fmt.Sprint(op.Calls),
					f2d(ph.c.Per(float64(op.Calls))), f1d(ph.c.Per(float64(op.Prompt))), f1d(ph.c.Per(float64(op.Completion))),
					pct(op.Cached, op.Calls), fmt.Sprint(op.Errors), fmt.Sprint(op.Requests), f2d(op.LatencyMS / 1000),
					f2d(ph.c.Per(op.LatencyMS))})
			}
		}
	}
	if len(rows) == 0 {
		b.WriteString("No LLM calls.\n\n")
	} else {
		table(&b, []string{"system", "phase", "role", "operation", "calls", "calls / unit", "prompt tok / unit", "completion tok / unit", "cached", "errors",
			"HTTP requests", "LLM s", "LLM ms / unit"}, rows, 4)
	}
	for _, r := range rep.Runs {
		tok := r.Config.Tokenizer
		if tok == "" {
			continue
		}
		fmt.Fprintf(&b, "Run %s: tokens also counted with %s (the tokenizer of gpt-4o and gpt-4o-mini; chat framing of 3 tokens per message and 3 per reply), memory and answer roles:\n\n", r.Name, tok)
		rows = nil
		for _, s := range ran(rep.Systems) {
			if s.Run != r.Name {
				continue
			}
			bc, qc := s.Build, s.QA
			rows = append(rows, []string{s.Label, f1d(bc.Per(float64(bc.CountedPrompt))), f1d(bc.Per(float64(bc.CountedCompletion))),
				f1d(qc.Per(float64(qc.CountedPrompt))), f1d(qc.Per(float64(qc.CountedCompletion)))})
		}
		table(&b, []string{"system", "prompt tok / turn", "completion tok / turn", "prompt tok / q", "completion tok / q"}, rows)
	}

	b.WriteString(Sections[12] + "\n\nPer operation: logical calls (re-asks not counted), the share whose first reply was usable, corrective re-asks, fallbacks (the reply was still unusable and the engine used its documented fallback: rules, offline segmentation, an empty selection), the semantic verdict of internal/memcheck on every reply (junk titles, copied instructions, ids not shown, runaway lists: the same checks the engine applies before it stores anything: a repaired reply is used repaired, a rejected one is never stored and counts as a fallback), and HTTP requests.\n\n")
	rows = nil
	for _, s := range ran(rep.Systems) {
		for _, ph := range phases(s) {
			for _, op := range ph.c.ByOp {
				n := op.Logical()
				if n <= 0 && op.FellBack == 0 {
					continue
				}
				content := "–"
				if judged := op.ContentValid + op.ContentRepaired + op.ContentRejected + op.Unparsed; judged > 0 {
					content = fmt.Sprintf("%s / %s / %s / %s", pct(op.ContentValid, judged), pct(op.ContentRepaired, judged),
						pct(op.ContentRejected, judged), pct(op.Unparsed, judged))
				}
				rows = append(rows, []string{s.Label, ph.name, string(op.Role), op.Operation, fmt.Sprint(n),
					pct(n-op.Reasked, n), fmt.Sprint(op.Reasked), fmt.Sprint(op.FellBack), content, fmt.Sprint(op.Requests)})
			}
		}
	}
	if len(rows) == 0 {
		b.WriteString("No LLM calls.\n\n")
	} else {
		table(&b, []string{"system", "phase", "role", "operation", "calls", "valid first try", "re-asked", "fell back",
			"content valid / repaired / rejected / no JSON", "HTTP requests"}, rows, 4)
	}

	b.WriteString(Sections[13] + "\n\n")
	for _, c := range []struct{ file, alt string }{
		{ChartRecall, "Evidence recall vs K"}, {ChartF1, "Official F1 per category"},
		{ChartTokens, "LLM tokens per question"}, {ChartCalls, "LLM calls per turn"},
	} {
		fmt.Fprintf(&b, "![%s](%s)\n\n", c.alt, c.file)
	}

	b.WriteString(Sections[14] + "\n\n")
	b.WriteString(`- **Categories** are the numbers in the data file, named as the file names them (its questions' "qtype", as in FriendsQA: What, When, Why, Who, Where, How) or, in a file without names, with the official LoCoMo mapping (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial; LoCoMo paper Table 5). "all (1-4)" leaves out LoCoMo's trap-scored category 5; in a file with names of its own, "all" is every question. Mem0's paper labels 1 as single-hop and 3 as multi-hop, which is wrong.
- **No gold leaks into answering.** Systems get the question text only (the oracle also gets the gold evidence ids). Each chooses its answer prompt by its own rule-based or LLM analysis of the question, never by the gold category, and no system is offered the adversarial answer as an option.
- **Official F1** follows snap-research/LoCoMo task_eval/evaluation.py. **A-Mem F1, BLEU-1 and EM** follow A-Mem's utils.py, with A-Mem's reference answer (category 5: adversarial_answer, hence "trap-scored" †).
- **J** is the share of CORRECT labels from the judge role's model with the judge prompt of internal/prompt; category 5 is excluded (as Mem0); with several runs, each run has its own seed and J is mean ± population sd over runs.
- **Evidence P/R** compare the distinct turn ids with the normalised gold evidence, over questions with non-empty gold evidence: P = hits / K, R = hits / |gold|. K is what the answer model saw (A-Mem: hits plus linked notes; full-context: every turn).
- **Tokens** are the model's reported usage (the scripted fake estimates 4 bytes per token); cached calls count with the usage of the original call. **Answer-context tokens** estimate the rendered evidence at 4 bytes per token; **answer prompt tokens** are the answer call's reported prompt size.
- **Rounds** are sequential LLM rounds on a question's critical path (answer included). **Wall times** include waiting for concurrency slots when --concurrency > 1, and embedding.
- **HTTP requests** count what was sent to the server, retries and structured-output downgrades included; **re-asks** are corrective second requests after an unusable or cut reply; **fallbacks** count the engine's notes and warnings that say a reply was unusable and a documented fallback was used; **warnings** are AddResult.Warnings, **notes** Trace.Notes, all kept in builds.jsonl and questions.jsonl.
- **J** is printed only for a judge that graded the calibration set (known right answers, and known wrong ones including "Not mentioned" answers) as its prompt defines.
- **Construction** is counted once per session, from its first build; a resumed run rebuilds memories (free with the LLM cache and the vector cache) without counting them again.
`)
	return b.String()
}

// writeFloor writes the floor table: each top-k system's evidence at
// offline mode's K of the same question, beside offline's (nothing when no
// top-k system ran beside offline mode).
func writeFloor(b *strings.Builder, ss []SystemResult) {
	var rows [][]string
	for _, s := range ran(ss) {
		f := s.AtOfflineK
		if f == nil {
			continue
		}
		verdict := "holds"
		if !f.Holds() {
			verdict = fmt.Sprintf("**below** by %.3f", f.Recall-f.OfflineRecall)
		}
		short := ""
		if f.Short > 0 {
			short = fmt.Sprintf(" (%d lists shorter than K)", f.Short)
		}
		rows = append(rows, []string{s.Label, fmt.Sprint(f.N), f1d(f.K), fmt.Sprintf("%.3f / %.3f%s", f.Recall, f.Precision, short),
			fmt.Sprintf("%.3f / %.3f", f.OfflineRecall, f.OfflinePrecision), verdict})
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("**The floor: top-k at offline's K.** Each top-k system's ranked list cut, per question, to the K offline mode passed for that same question (\"@K\"), over the questions with gold evidence both answered: offline mode holds the floor when its recall is at least that.\n\n")
	table(b, []string{"system", "questions", "offline's mean K", "R / P @K", "offline R / P", "offline"}, rows)
}

// phase is the LLM work of construction or of questions.
type phase struct {
	name string
	c    Cost
}

func phases(s SystemResult) []phase {
	return []phase{{"construction", s.Build}, {"questions", s.QA}}
}

func pct(n, d int) string {
	if d == 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(n)/float64(d))
}
