package harness

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// palette is Tableau 20: ten hues, then their light variants.
var palette = []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
	"#a0cbe8", "#ffbe7d", "#8cd17d", "#b6992d", "#f1ce63", "#499894", "#86bcb6", "#d37295", "#fabfd2", "#79706e"}

func colour(i int) string { return palette[i%len(palette)] }

// systemColour gives a system the same colour in every chart: by its
// position in the report.
func systemColour(all []SystemResult, label string) string {
	return colour(max(slices.IndexFunc(all, func(s SystemResult) bool { return s.Label == label }), 0))
}

// svg builds an SVG document by hand.
type svg struct {
	b    strings.Builder
	w, h int
}

func newSVG(w, h int, title string) *svg {
	s := &svg{w: w, h: h}
	fmt.Fprintf(&s.b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="12">`+"\n", w, h, w, h)
	fmt.Fprintf(&s.b, `<title>%s</title>`+"\n", esc(title))
	fmt.Fprintf(&s.b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", w, h)
	s.text(float64(w)/2, 22, "middle", 15, title, "bold")
	return s
}

func esc(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")
	return r.Replace(s)
}

func (s *svg) text(x, y float64, anchor string, size int, str, weight string) {
	w := ""
	if weight != "" {
		w = ` font-weight="` + weight + `"`
	}
	fmt.Fprintf(&s.b, `<text x="%.1f" y="%.1f" text-anchor="%s" font-size="%d"%s>%s</text>`+"\n", x, y, anchor, size, w, esc(str))
}

func (s *svg) vtext(x, y float64, str string) {
	fmt.Fprintf(&s.b, `<text x="%.1f" y="%.1f" text-anchor="middle" transform="rotate(-90 %.1f %.1f)">%s</text>`+"\n", x, y, x, y, esc(str))
}

func (s *svg) line(x1, y1, x2, y2 float64, stroke string, width float64) {
	fmt.Fprintf(&s.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="%.1f"/>`+"\n", x1, y1, x2, y2, stroke, width)
}

func (s *svg) rect(x, y, w, h float64, fill, title string) {
	fmt.Fprintf(&s.b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s</title></rect>`+"\n", x, y, w, h, fill, esc(title))
}

func (s *svg) circle(cx, cy, r float64, fill, title string) {
	fmt.Fprintf(&s.b, `<circle cx="%.1f" cy="%.1f" r="%.1f" fill="%s" stroke="#333333" stroke-width="0.8"><title>%s</title></circle>`+"\n", cx, cy, r, fill, esc(title))
}

func (s *svg) polyline(pts [][2]float64, stroke string) {
	var p []string
	for _, q := range pts {
		p = append(p, fmt.Sprintf("%.1f,%.1f", q[0], q[1]))
	}
	fmt.Fprintf(&s.b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="1.5" stroke-opacity="0.8"/>`+"\n", strings.Join(p, " "), stroke)
}

func (s *svg) String() string { return s.b.String() + "</svg>\n" }

// legend draws swatches and labels from (x, y) downwards.
func (s *svg) legend(x, y float64, labels []string, colours []string) {
	for i, l := range labels {
		yy := y + float64(i)*18
		s.rect(x, yy-10, 12, 12, colours[i], l)
		s.text(x+18, yy, "start", 12, l, "")
	}
}

func (s *svg) message(msg string) string {
	s.text(float64(s.w)/2, float64(s.h)/2, "middle", 13, msg, "")
	return s.String()
}

// niceCeil rounds x up to 1, 2 or 5 times a power of ten.
func niceCeil(x float64) float64 {
	if x <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x-1e-9 {
			return m * p
		}
	}
	return 10 * p
}

// RecallChart plots evidence recall against K: per system a curve of the
// recall of its ranked search stage cut at k, and a dot at the average K
// and recall of what its answer model saw (log-scaled K).
func RecallChart(systems []SystemResult) string {
	const w, h, left, right, top, bottom = 760, 440, 60, 230, 40, 50
	s := newSVG(w, h, "Evidence recall vs K")
	type sys struct {
		label string
		curve []CurvePoint
		k, r  float64
		dot   bool
	}
	var ss []sys
	maxK := 10.0
	for _, x := range ran(systems) {
		g := group(x, "1-5")
		it := sys{label: x.Label, curve: x.Curve}
		if g.Recall != nil && *g.K > 0 {
			it.k, it.r, it.dot = *g.K, *g.Recall, true
			maxK = max(maxK, it.k)
		}
		for _, p := range x.Curve {
			maxK = max(maxK, float64(p.K))
		}
		if it.dot || len(it.curve) > 0 {
			ss = append(ss, it)
		}
	}
	if len(ss) == 0 {
		return s.message("no retrieval results")
	}
	maxK = niceCeil(maxK)
	pw, ph := float64(w-left-right), float64(h-top-bottom)
	xOf := func(k float64) float64 { return left + pw*math.Log10(max(k, 1))/math.Log10(maxK) }
	yOf := func(r float64) float64 { return top + ph*(1-r) }
	for _, r := range []float64{0, 0.2, 0.4, 0.6, 0.8, 1} {
		s.line(left, yOf(r), left+pw, yOf(r), "#e0e0e0", 1)
		s.text(left-6, yOf(r)+4, "end", 11, fmt.Sprintf("%.1f", r), "")
	}
	for p := 1.0; p <= maxK; p *= 10 {
		for _, m := range []float64{1, 2, 5} {
			k := m * p
			if k > maxK {
				break
			}
			s.line(xOf(k), top, xOf(k), top+ph, "#f0f0f0", 1)
			s.text(xOf(k), top+ph+16, "middle", 11, fmt.Sprint(k), "")
		}
	}
	s.line(left, top+ph, left+pw, top+ph, "#333333", 1)
	s.line(left, top, left, top+ph, "#333333", 1)
	s.text(left+pw/2, h-12, "middle", 12, "K (turns passed to the answer model; log scale)", "")
	s.vtext(18, top+ph/2, "evidence recall")
	var labels, cols []string
	for _, x := range ss {
		c := systemColour(systems, x.label)
		if len(x.curve) > 1 {
			var pts [][2]float64
			for _, p := range x.curve {
				pts = append(pts, [2]float64{xOf(float64(p.K)), yOf(p.Recall)})
			}
			s.polyline(pts, c)
		}
		if x.dot {
			s.circle(xOf(x.k), yOf(x.r), 5, c, fmt.Sprintf("%s: R %.3f at K %.1f", x.label, x.r, x.k))
		}
		labels = append(labels, x.label)
		cols = append(cols, c)
	}
	s.legend(left+pw+20, top+10, labels, cols)
	s.text(left+pw+20, top+float64(len(labels))*18+24, "start", 10, "line: ranked search cut at k", "")
	s.text(left+pw+20, top+float64(len(labels))*18+38, "start", 10, "dot: what the answer model saw", "")
	return s.String()
}

// F1Chart draws grouped bars of the official F1 per category.
func F1Chart(systems []SystemResult) string {
	ss := answered(systems)
	keys := append(categoryKeys(systems, true), "1-4")
	const h, left, right, top, bottom = 420, 50, 230, 40, 60
	w := max(760, left+right+len(keys)*(len(ss)*14+30))
	s := newSVG(w, h, "Official LoCoMo F1 per category")
	if len(ss) == 0 {
		return s.message("no written answers (no answer model configured)")
	}
	pw, ph := float64(w-left-right), float64(h-top-bottom)
	yOf := func(v float64) float64 { return top + ph*(1-v) }
	for _, v := range []float64{0, 0.2, 0.4, 0.6, 0.8, 1} {
		s.line(left, yOf(v), left+pw, yOf(v), "#e0e0e0", 1)
		s.text(left-6, yOf(v)+4, "end", 11, fmt.Sprintf("%.1f", v), "")
	}
	gw := pw / float64(len(keys))
	bw := min(24, (gw-16)/float64(len(ss)))
	for gi, k := range keys {
		x0 := left + gw*float64(gi) + (gw-bw*float64(len(ss)))/2
		for si, x := range ss {
			v := group(x, k).OfficialF1
			if v == nil {
				continue
			}
			s.rect(x0+bw*float64(si), yOf(*v), bw-1, ph*(*v), systemColour(systems, x.Label), fmt.Sprintf("%s, %s: %.3f", x.Label, k, *v))
		}
		label := groupHead("", []string{k}, ss)[1]
		s.text(left+gw*float64(gi)+gw/2, top+ph+16, "middle", 11, label, "")
	}
	s.line(left, top+ph, left+pw, top+ph, "#333333", 1)
	s.vtext(16, top+ph/2, "official F1")
	var labels, cols []string
	for _, x := range ss {
		labels = append(labels, x.Label)
		cols = append(cols, systemColour(systems, x.Label))
	}
	s.legend(left+pw+20, top+10, labels, cols)
	return s.String()
}

// hbars draws stacked horizontal bars: one bar per row, one segment per
// series.
func hbars(title, unit string, rows, series []string, values [][]float64) string {
	const w, left, right, top = 760, 170, 190, 40
	h := top + 40 + len(rows)*26
	s := newSVG(w, max(h, 160), title)
	total := 0.0
	for _, vs := range values {
		sum := 0.0
		for _, v := range vs {
			sum += v
		}
		total = max(total, sum)
	}
	if len(rows) == 0 || total == 0 {
		return s.message("no LLM calls")
	}
	step := niceCeil(total / 4)
	ticks := int(math.Ceil(total/step - 1e-9))
	top2 := step * float64(ticks)
	pw := float64(w - left - right)
	xOf := func(v float64) float64 { return left + pw*v/top2 }
	for i := 0; i <= ticks; i++ {
		v := step * float64(i)
		s.line(xOf(v), top, xOf(v), float64(top+len(rows)*26), "#e0e0e0", 1)
		s.text(xOf(v), float64(top+len(rows)*26+16), "middle", 11, trimFloat(v), "")
	}
	for r, label := range rows {
		y := float64(top + r*26 + 4)
		s.text(left-8, y+13, "end", 12, label, "")
		x := 0.0
		for si, v := range values[r] {
			if v <= 0 {
				continue
			}
			s.rect(xOf(x), y, xOf(x+v)-xOf(x), 18, colour(si), fmt.Sprintf("%s, %s: %s %s", label, series[si], trimFloat(v), unit))
			x += v
		}
		s.text(xOf(x)+4, y+13, "start", 11, trimFloat(x), "")
	}
	s.text(left+pw/2, float64(top+len(rows)*26+34), "middle", 12, unit, "")
	var cols []string
	for i := range series {
		cols = append(cols, colour(i))
	}
	s.legend(left+pw+50, top+10, series, cols)
	return s.String()
}

func trimFloat(v float64) string {
	switch {
	case v == math.Trunc(v):
		return fmt.Sprintf("%.0f", v)
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// TokensChart draws LLM tokens per question by role.
func TokensChart(systems []SystemResult) string {
	var rows []string
	var vals [][]float64
	series := []string{"memory", "answer"}
	for _, x := range ran(systems) {
		_, mt := x.QA.RoleTokens("memory")
		_, at := x.QA.RoleTokens("answer")
		rows = append(rows, x.Label)
		vals = append(vals, []float64{x.QA.Per(float64(mt)), x.QA.Per(float64(at))})
	}
	return hbars("LLM tokens per question (question answering)", "tokens per question", rows, series, vals)
}

// CallsChart draws construction LLM calls per turn by operation.
func CallsChart(systems []SystemResult) string {
	var series []string
	for _, x := range ran(systems) {
		for _, op := range x.Build.ByOp {
			if !slices.Contains(series, op.Operation) {
				series = append(series, op.Operation)
			}
		}
	}
	var rows []string
	var vals [][]float64
	for _, x := range ran(systems) {
		v := make([]float64, len(series))
		for _, op := range x.Build.ByOp {
			v[slices.Index(series, op.Operation)] += x.Build.Per(float64(op.Calls))
		}
		rows = append(rows, x.Label)
		vals = append(vals, v)
	}
	return hbars("LLM calls per turn (memory construction)", "calls per turn", rows, series, vals)
}
