package ui

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/higmem/higmem/api"
)

// The picture keeps every bar inside the axis, never overlaps two bars of
// one lane (until the lanes run out), and puts its ticks in order inside
// the axis.
func TestLayout(t *testing.T) {
	base := time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		n      int
		spread time.Duration
		length time.Duration
	}{
		{"one instant", 1, 0, 0},
		{"hours", 30, 10 * time.Hour, 20 * time.Minute},
		{"months", 200, 120 * 24 * time.Hour, 3 * 24 * time.Hour},
		{"crowded", 2000, 30 * 24 * time.Hour, 5 * 24 * time.Hour},
		{"years", 50, 3 * 365 * 24 * time.Hour, 30 * 24 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			var evs []api.EventView
			var turns []api.Turn
			for i := range tc.n {
				start := base.Add(time.Duration(r.Int64N(int64(tc.spread) + 1)))
				end := start.Add(time.Duration(r.Int64N(int64(tc.length) + 1)))
				id := fmt.Sprint("t", i)
				turns = append(turns, api.Turn{ID: id, Seq: int64(i + 1), SessionID: fmt.Sprint(i / 10), OccurredAt: start})
				evs = append(evs, api.EventView{Event: api.Event{ID: fmt.Sprint("e", i), Title: "event", TurnIDs: []string{id}, Start: start, End: end},
					Turns: []api.Turn{turns[i]}})
			}
			evs = append(evs, api.EventView{Event: api.Event{ID: "undated", TurnIDs: []string{"u"}}})
			// Turns may come in any order (the page takes them from the
			// events): sessions are still in the order they began.
			r.Shuffle(len(turns), func(i, j int) { turns[i], turns[j] = turns[j], turns[i] })
			v := buildTimeline(api.Scope{UserID: "u"}, api.Stats{Turns: len(turns)}, evs, turns)
			p := v.Pic
			if len(p.Events) != tc.n || v.Undated != 1 || len(v.Events) != tc.n+1 || v.Events[tc.n].ID != "undated" {
				t.Fatalf("%d bars, %d undated, %d rows (last %q); want %d, 1, %d, undated last", len(p.Events), v.Undated, len(v.Events), v.Events[len(v.Events)-1].ID, tc.n, tc.n+1)
			}
			if p.Lanes > tlMaxLanes {
				t.Errorf("%d lanes, at most %d", p.Lanes, tlMaxLanes)
			}
			for i, a := range p.Events {
				if a.X < tlMargin-1e-9 || a.X+a.W > tlWidth-tlMargin+1e-9 || a.W < tlMinW {
					t.Fatalf("bar %d at x %.1f width %.1f: outside the axis or too thin", i, a.X, a.W)
				}
				if a.Y+tlRowH > p.Height {
					t.Fatalf("bar %d below the picture", i)
				}
				if p.Lanes == tlMaxLanes {
					continue // lanes ran out: overlaps are allowed
				}
				for _, b := range p.Events[:i] {
					if a.Y == b.Y && a.X < b.X+b.W && b.X < a.X+a.W {
						t.Fatalf("bars %s and %s overlap on one lane", a.ID, b.ID)
					}
				}
			}
			for i := 1; i < len(v.Sessions); i++ {
				if v.Sessions[i].firstSeq <= v.Sessions[i-1].firstSeq {
					t.Fatalf("session %s (first turn %d) listed after %s (%d)", v.Sessions[i].ID, v.Sessions[i].firstSeq, v.Sessions[i-1].ID, v.Sessions[i-1].firstSeq)
				}
			}
			if want := (tc.n + 9) / 10; len(v.Sessions) != want {
				t.Errorf("%d sessions, want %d", len(v.Sessions), want)
			}
			for i, tk := range p.Ticks {
				if tk.X < tlMargin-1e-9 || tk.X > tlWidth-tlMargin+1e-9 || (i > 0 && tk.X <= p.Ticks[i-1].X) {
					t.Fatalf("tick %d (%s) at %.1f: outside the axis or out of order", i, tk.Label, tk.X)
				}
			}
			if tc.spread > 24*time.Hour && len(p.Ticks) < 2 {
				t.Errorf("%d ticks over %s", len(p.Ticks), tc.spread)
			}
			if len(p.Ticks) > 9 {
				t.Errorf("%d ticks, at most about eight", len(p.Ticks))
			}
		})
	}
}

// The events table lists eventRowsPerPage events a page, with links to
// the others; the picture draws them all.
func TestTimelinePages(t *testing.T) {
	var evs []api.EventView
	for i := range 2*eventRowsPerPage + 7 {
		evs = append(evs, api.EventView{Event: api.Event{ID: fmt.Sprint("e", i), TurnIDs: []string{"x"},
			Start: time.Date(2024, 1, 1, 0, i, 0, 0, time.UTC), End: time.Date(2024, 1, 1, 0, i, 0, 0, time.UTC)}})
	}
	for _, tc := range []struct {
		page, first, last int
		prev, next        bool
	}{{0, 1, 500, false, true}, {1, 1, 500, false, true}, {2, 501, 1000, true, true}, {3, 1001, 1007, true, false}, {9, 1001, 1007, true, false}} {
		v := buildTimeline(api.Scope{UserID: "u"}, api.Stats{}, evs, nil)
		v.paginate(tc.page)
		if v.First != tc.first || v.Last != tc.last || len(v.Rows) != tc.last-tc.first+1 || (v.PrevURL != "") != tc.prev || (v.NextURL != "") != tc.next {
			t.Errorf("page %d: rows %d–%d (%d), prev %q next %q; want %d–%d", tc.page, v.First, v.Last, len(v.Rows), v.PrevURL, v.NextURL, tc.first, tc.last)
		}
		if len(v.Pic.Events) != len(evs) {
			t.Errorf("page %d: the picture draws %d events, want all %d", tc.page, len(v.Pic.Events), len(evs))
		}
		if v.Rows[0].ID != fmt.Sprint("e", tc.first-1) {
			t.Errorf("page %d starts with %s", tc.page, v.Rows[0].ID)
		}
	}
}
