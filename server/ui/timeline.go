package ui

import (
	"cmp"
	"html/template"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/higmem/higmem/api"
)

// Geometry of the timeline picture, in SVG user units (the picture
// scales to the page's width).
const (
	tlWidth    = 1000.0
	tlMargin   = 12.0
	tlAxisY    = 24.0 // the axis line; tick labels above it
	tlSessionY = 34.0 // the sessions row
	tlRowH     = 14.0 // templates/timeline.html draws event bars 14 high
	tlRowGap   = 4.0
	tlEventsY  = tlSessionY + tlRowH + 14 // the first events lane
	tlMaxLanes = 24
	tlMinW     = 4.0
)

type timelineView struct {
	Scope    api.Scope
	Stats    api.Stats
	Sessions []sessionBar
	Events   []eventBar // every event, in time order (undated last)
	Undated  int
	Pic      picture
	Deleted  string
	// Rows is the page of Events the table lists (eventRowsPerPage at a
	// time; the picture draws them all), First its 1-based position.
	Rows             []eventBar
	First, Last      int
	PrevURL, NextURL string
}

// eventRowsPerPage bounds the events table of one timeline page.
const eventRowsPerPage = 500

// paginate selects the table's page (1-based; out of range is clamped).
func (v *timelineView) paginate(page int) {
	pages := max(1, (len(v.Events)+eventRowsPerPage-1)/eventRowsPerPage)
	page = min(max(page, 1), pages)
	lo := (page - 1) * eventRowsPerPage
	hi := min(lo+eventRowsPerPage, len(v.Events))
	v.Rows, v.First, v.Last = v.Events[lo:hi], lo+1, hi
	if page > 1 {
		v.PrevURL = spaceURL("space", v.Scope, "page", strconv.Itoa(page-1)) + "#events"
	}
	if page < pages {
		v.NextURL = spaceURL("space", v.Scope, "page", strconv.Itoa(page+1)) + "#events"
	}
}

// eventBar is an event as a row of the list and a bar of the picture.
type eventBar struct {
	// URL, the texts and the coordinates as strings are computed once
	// here: calls from a template go through reflection, which costs more
	// than the rest of the page on a space of thousands of events.
	URL, From, To, SessionList string
	XS, YS, WS, TextXS         string
	// Rect holds the bar's x, y and width attributes, built from numbers
	// only (one template action instead of three).
	Rect template.HTMLAttr
	// Tip is the bar's tooltip: title, turns and span.
	Tip string

	ID, Title  string
	Start, End time.Time
	Turns      int
	Sessions   []string
	X, Y, W    float64
	Dated      bool
	TextX      float64
	Label      string
	LabelFits  bool
	firstSeq   int64
}

// sessionBar is a session as a row and a bar.
type sessionBar struct {
	URL, From, To  string
	XS, WS, TextXS string

	ID         string
	Start, End time.Time
	Turns      int
	X, W       float64
	Dated      bool
	TextX      float64
	firstSeq   int64
}

type tick struct {
	XS    string
	X     float64
	Label string
}

type picture struct {
	HeightS, AxisYS, SessionYS, RowHS, AxisEndS string
	Height                                      float64
	AxisY                                       float64
	SessionY                                    float64
	RowH                                        float64
	AxisEnd                                     float64
	Ticks                                       []tick
	Lanes                                       int
	Events                                      []eventBar
	Sessions                                    []sessionBar
	From, To                                    time.Time
}

// buildTimeline lays out a space's events and sessions on a time axis.
func buildTimeline(sc api.Scope, st api.Stats, evs []api.EventView, turns []api.Turn) *timelineView {
	v := &timelineView{Scope: sc, Stats: st}
	seqOf := make(map[string]int64, len(turns))
	sess := map[string]*sessionBar{}
	var order []string
	for _, t := range turns {
		seqOf[t.ID] = t.Seq
		s := sess[t.SessionID]
		if s == nil {
			s = &sessionBar{ID: t.SessionID, firstSeq: t.Seq}
			sess[t.SessionID] = s
			order = append(order, t.SessionID)
		}
		s.Turns++
		s.firstSeq = min(s.firstSeq, t.Seq)
		if !t.OccurredAt.IsZero() {
			if s.Start.IsZero() || t.OccurredAt.Before(s.Start) {
				s.Start = t.OccurredAt
			}
			if t.OccurredAt.After(s.End) {
				s.End = t.OccurredAt
			}
			s.Dated = true
		}
	}
	for _, id := range order {
		v.Sessions = append(v.Sessions, *sess[id])
	}
	// turns may come in any order (from the events): sessions are in the
	// order they began.
	slices.SortStableFunc(v.Sessions, func(a, b sessionBar) int { return cmp.Compare(a.firstSeq, b.firstSeq) })
	for _, e := range evs {
		b := eventBar{ID: e.Event.ID, Title: e.Event.Title, Start: e.Event.Start, End: e.Event.End, Turns: len(e.Event.TurnIDs), Dated: !e.Event.Start.IsZero()}
		if b.End.Before(b.Start) {
			b.End = b.Start
		}
		b.firstSeq = -1
		for _, t := range e.Turns {
			if !slices.Contains(b.Sessions, t.SessionID) && t.SessionID != "" {
				b.Sessions = append(b.Sessions, t.SessionID)
			}
			if s, ok := seqOf[t.ID]; ok && (b.firstSeq < 0 || s < b.firstSeq) {
				b.firstSeq = s
			}
		}
		if !b.Dated {
			v.Undated++
		}
		v.Events = append(v.Events, b)
	}
	slices.SortStableFunc(v.Events, func(a, b eventBar) int {
		if a.Dated != b.Dated {
			if a.Dated {
				return -1
			}
			return 1
		}
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return cmp.Compare(a.firstSeq, b.firstSeq)
	})
	for i := range v.Events {
		e := &v.Events[i]
		e.URL = spaceURL("event", sc, "id", e.ID)
		e.From, e.To, e.SessionList = day(e.Start), day(e.End), strings.Join(e.Sessions, ", ")
	}
	for i := range v.Sessions {
		s := &v.Sessions[i]
		s.URL = spaceURL("turns", sc, "session", s.ID)
		s.From, s.To = when(s.Start), when(s.End)
	}
	v.Pic = layout(v.Events, v.Sessions) // copies the bars with their URLs
	p := &v.Pic
	p.HeightS, p.AxisYS, p.SessionYS, p.RowHS, p.AxisEndS = num(p.Height), num(p.AxisY), num(p.SessionY), num(p.RowH), num(p.AxisEnd)
	for i := range p.Events {
		e := &p.Events[i]
		e.XS, e.YS, e.WS, e.TextXS = num(e.X), num(e.Y), num(e.W), num(e.TextX)
		e.Rect = template.HTMLAttr(`x="` + e.XS + `" y="` + e.YS + `" width="` + e.WS + `"`)
		e.Tip = e.Title + " (" + strconv.Itoa(e.Turns) + " turns, " + e.From + " to " + e.To + ")"
	}
	for i := range p.Sessions {
		s := &p.Sessions[i]
		s.XS, s.WS, s.TextXS = num(s.X), num(s.W), num(s.TextX)
	}
	for i := range p.Ticks {
		p.Ticks[i].XS = num(p.Ticks[i].X)
	}
	return v
}

// num formats an SVG coordinate.
func num(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// layout places dated events on lanes and sessions on their row.
func layout(evs []eventBar, sess []sessionBar) picture {
	p := picture{AxisY: tlAxisY, SessionY: tlSessionY, RowH: tlRowH, AxisEnd: tlWidth - tlMargin}
	for _, e := range evs {
		if e.Dated {
			p.From, p.To = extend(p.From, p.To, e.Start, e.End)
		}
	}
	for _, s := range sess {
		if s.Dated {
			p.From, p.To = extend(p.From, p.To, s.Start, s.End)
		}
	}
	if p.From.IsZero() {
		p.Height = tlEventsY
		return p
	}
	if !p.To.After(p.From) {
		p.From, p.To = p.From.Add(-12*time.Hour), p.To.Add(12*time.Hour)
	}
	span := float64(p.To.Sub(p.From))
	inner := tlWidth - 2*tlMargin
	x := func(t time.Time) float64 { return tlMargin + inner*float64(t.Sub(p.From))/span }
	bar := func(a, b time.Time) (float64, float64) {
		x0, x1 := x(a), x(b)
		w := max(x1-x0, tlMinW)
		if x0+w > tlWidth-tlMargin {
			x0 = tlWidth - tlMargin - w
		}
		return x0, w
	}
	for _, s := range sess {
		if !s.Dated {
			continue
		}
		s.X, s.W = bar(s.Start, s.End)
		s.TextX = s.X + s.W/2
		p.Sessions = append(p.Sessions, s)
	}
	var laneEnd []float64
	for _, e := range evs {
		if !e.Dated {
			continue
		}
		e.X, e.W = bar(e.Start, e.End)
		lane := -1
		for i, end := range laneEnd {
			if end+2 <= e.X {
				lane = i
				break
			}
		}
		if lane < 0 && len(laneEnd) < tlMaxLanes {
			laneEnd = append(laneEnd, 0)
			lane = len(laneEnd) - 1
		}
		if lane < 0 { // every lane busy: the one that frees first
			lane = 0
			for i, end := range laneEnd {
				if end < laneEnd[lane] {
					lane = i
				}
			}
		}
		laneEnd[lane] = max(laneEnd[lane], e.X+e.W)
		e.Y = tlEventsY + float64(lane)*(tlRowH+tlRowGap)
		e.TextX = e.X + 3
		// A label inside the bar when it fits (about 6 units a letter).
		if e.W >= 60 {
			n := int((e.W - 6) / 6)
			r := []rune(e.Title)
			if len(r) > n {
				r = append(r[:max(n-1, 1)], '…')
			}
			e.Label, e.LabelFits = string(r), true
		}
		p.Events = append(p.Events, e)
	}
	p.Lanes = len(laneEnd)
	p.Height = tlEventsY + float64(p.Lanes)*(tlRowH+tlRowGap) + 4
	p.Ticks = ticks(p.From, p.To, x)
	return p
}

func extend(from, to, a, b time.Time) (time.Time, time.Time) {
	if from.IsZero() || a.Before(from) {
		from = a
	}
	if to.IsZero() || b.After(to) {
		to = b
	}
	return from, to
}

// ticks puts at most about eight labelled ticks on the axis, on day,
// week, month or year boundaries.
func ticks(from, to time.Time, x func(time.Time) float64) []tick {
	span := to.Sub(from)
	day := 24 * time.Hour
	type step struct {
		next   func(time.Time) time.Time
		start  func(time.Time) time.Time
		format string
		size   time.Duration
	}
	dayStart := func(t time.Time) time.Time { return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC) }
	monthStart := func(t time.Time) time.Time { return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC) }
	steps := []step{
		{func(t time.Time) time.Time { return t.Add(time.Hour) }, func(t time.Time) time.Time { return t.Truncate(time.Hour) }, "15:04", time.Hour},
		{func(t time.Time) time.Time { return t.Add(6 * time.Hour) }, func(t time.Time) time.Time { return t.Truncate(6 * time.Hour) }, "2 Jan 15:04", 6 * time.Hour},
		{func(t time.Time) time.Time { return t.AddDate(0, 0, 1) }, dayStart, "2 Jan", day},
		{func(t time.Time) time.Time { return t.AddDate(0, 0, 7) }, dayStart, "2 Jan", 7 * day},
		{func(t time.Time) time.Time { return t.AddDate(0, 1, 0) }, monthStart, "Jan 2006", 30 * day},
		{func(t time.Time) time.Time { return t.AddDate(0, 3, 0) }, monthStart, "Jan 2006", 91 * day},
		{func(t time.Time) time.Time { return t.AddDate(1, 0, 0) }, func(t time.Time) time.Time { return time.Date(t.Year(), 1, 1, 0, 0, 0, 0, time.UTC) }, "2006", 365 * day},
	}
	st := steps[len(steps)-1]
	for _, s := range steps {
		if span/s.size <= 8 {
			st = s
			break
		}
	}
	var out []tick
	for t := st.start(from.UTC()); !t.After(to) && len(out) < 60; t = st.next(t) {
		if t.Before(from) {
			continue
		}
		out = append(out, tick{X: x(t), Label: t.Format(st.format)})
	}
	return out
}
