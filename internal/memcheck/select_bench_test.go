package memcheck

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/higmem/higmem/internal/prompt/prompttest"

	"github.com/higmem/higmem/internal/prompt"
)

// BenchmarkSelectCheck measures the check of a select reply as the
// engine runs it (ForReply, then Reply) on the bench's select calls.
func BenchmarkSelectCheck(b *testing.B) {
	calls := prompttest.BenchSelects(b)
	ps := make([]prompt.Prompt, len(calls))
	for i, c := range calls {
		ps[i] = prompt.Prompt{Name: prompt.Select, System: c.System, User: c.User}
	}
	benchCheck(b, calls, ps)
}

// benchCheck times the check of each recorded call's reply against the
// prompt ps holds for it.
func benchCheck(b *testing.B, calls []prompttest.Call, ps []prompt.Prompt) {
	replies := make([]prompt.SelectReply, len(calls))
	for i, c := range calls {
		if err := json.Unmarshal([]byte(c.Reply), &replies[i]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		k := i % len(calls)
		r := replies[k]
		res, _ := Reply(&r, ForReply(&r, ps[k]), Caps{IDs: 30})
		if res.Verdict != Valid {
			b.Fatal(res)
		}
	}
}

// BenchmarkSelectCheckRendered is BenchmarkSelectCheck on the prompts as
// Render returns them (rendered from the data read back from the
// recorded prompts), whose ids ForReply takes from what Render recorded.
func BenchmarkSelectCheckRendered(b *testing.B) {
	calls := prompttest.BenchSelects(b)
	ps := make([]prompt.Prompt, len(calls))
	for i, c := range calls {
		p, err := prompt.Render(prompt.Select, prompt.SelectDataOf(c.User))
		if err != nil || p.User != c.User || p.Shown() == nil {
			b.Fatalf("call %d: not rendered as recorded (%v)", i, err)
		}
		ps[i] = p
	}
	benchCheck(b, calls, ps)
}

// idsReference is result.ids as it was, with a map of the ids kept
// whatever the list's length.
func idsReference(r *result, field string, in []string, shown map[string]bool, max int) []string {
	out := make([]string, 0, len(in))
	seen := map[string]bool{}
	for i, id := range in {
		id = strings.TrimSpace(id)
		switch {
		case !shown[id]:
			r.fix(UnknownID, itemName(field, i), id)
		case seen[id]:
			r.fix(Duplicate, itemName(field, i), id)
		case max > 0 && len(out) == max:
			r.fix(OverCap, itemName(field, i), id)
		default:
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// TestIDsMatchReference checks result.ids, which finds the duplicates of
// a short list without a map, against the map-based reference, on
// random lists shorter and longer than seenScan with repeated, unknown
// and spaced ids and every kind of cap.
func TestIDsMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	shown := map[string]bool{}
	var pool []string
	for i := range 80 {
		id := fmt.Sprintf("D%d:%d", i/7, i%7)
		pool = append(pool, id, " "+id, id+"\t")
		if i%5 != 0 {
			shown[id] = true
		}
	}
	for range 2000 {
		in := make([]string, rng.IntN(3*seenScan))
		for i := range in {
			in[i] = pool[rng.IntN(len(pool)/(1+rng.IntN(8)))]
		}
		max := rng.IntN(2*seenScan) - 2
		var got, want result
		g := got.ids("turn_ids", in, shown, max)
		w := idsReference(&want, "turn_ids", in, shown, max)
		if !slices.Equal(g, w) || !reflect.DeepEqual(got, want) {
			t.Fatalf("ids(%q, max %d) = %q %+v; reference %q %+v", in, max, g, got, w, want)
		}
	}
}

// TestForReplyRecordedMatchesReading checks that ForReply's Shown of a
// select prompt taken from what Render recorded (prompt.Prompt.Shown) is
// the one read from the text (idsFromPrompt), field for field (nil lists
// included), on the bench's prompts and random select data whose values
// hold newlines, brackets, empty ids, header-like and id-like text; and
// that a prompt whose text changed, or whose system prompt opens a
// section, is read from the text.
func TestForReplyRecordedMatchesReading(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	pieces := []string{"", " ", "D1:3", "e12", "\n", "]", ")", "x] y", "(event e1) t", "[D2:2] 1 | A: b", "New turns:", "Known now: x",
		knownHeader + " Ann:", "- (7 May) f", "Question:", "\u00a0", ":", "Tags: t", "é"}
	text := func() string {
		var b strings.Builder
		for range rng.IntN(3) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	plain := func() string { return fmt.Sprintf("D%d:%d", rng.IntN(5), rng.IntN(5)) }
	turn := func() prompt.Turn {
		tu := prompt.Turn{ID: plain(), Date: "8 May 2023", Speaker: "Ann", Text: "hi"}
		if rng.IntN(6) == 0 {
			tu = prompt.Turn{ID: text(), Date: text(), Speaker: text(), Text: text(), Note: text()}
		}
		return tu
	}
	var ps []prompt.Prompt
	for _, c := range prompttest.BenchSelects(t) {
		d := prompt.SelectData{Question: "q"}
		p, err := prompt.Render(prompt.Select, d)
		if err != nil {
			t.Fatal(err)
		}
		p.User = c.User // not rendered here: read from the text
		ps = append(ps, p)
	}
	// Values with a line of their own that reads as a turn, an event or
	// a header.
	sneaky := []string{"x\n[D7:7] 1 | A: b", "x\n(event e5) t", "\nNew turns:", "y\n" + knownHeader + " Ann:\n- [D8:8] z"}
	for _, s := range sneaky {
		tu := prompt.Turn{ID: "D1:1", Date: "d", Speaker: "A", Text: "t"}
		for k := range 5 {
			v := tu
			*[]*string{&v.ID, &v.Date, &v.Speaker, &v.Text, &v.Note}[k] = s
			e := prompt.SelectEvent{Event: prompt.Event{ID: "e1", Title: "t", Summary: "s"}, Turns: []prompt.Turn{v, tu}}
			for _, d := range []prompt.SelectData{{Question: s, Turns: []prompt.Turn{tu}}, {Events: []prompt.SelectEvent{e}}, {Turns: []prompt.Turn{tu, v}}} {
				p, err := prompt.Render(prompt.Select, d)
				if err != nil {
					t.Fatal(err)
				}
				ps = append(ps, p)
			}
		}
		for k := range 3 {
			ev := prompt.Event{ID: "e1", Title: "t", Summary: "s"}
			*[]*string{&ev.ID, &ev.Title, &ev.Summary}[k] = s
			p, err := prompt.Render(prompt.Select, prompt.SelectData{Events: []prompt.SelectEvent{{Event: ev, Turns: []prompt.Turn{tu}}}})
			if err != nil {
				t.Fatal(err)
			}
			ps = append(ps, p)
		}
	}
	for range 3000 {
		d := prompt.SelectData{Question: "What did Ann say?", Max: rng.IntN(12)}
		if rng.IntN(8) == 0 {
			d.Question = text()
		}
		for range rng.IntN(4) {
			e := prompt.SelectEvent{Event: prompt.Event{ID: fmt.Sprintf("e%d", rng.IntN(9)), Title: "Ann & Ben", Summary: "s"}}
			if rng.IntN(6) == 0 {
				e.Event = prompt.Event{ID: text(), Title: text(), Summary: text()}
			}
			for range rng.IntN(4) {
				e.Turns = append(e.Turns, turn())
			}
			d.Events = append(d.Events, e)
		}
		for range rng.IntN(5) {
			d.Turns = append(d.Turns, turn())
		}
		p, err := prompt.Render(prompt.Select, d)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	recorded := 0
	for i, p := range ps {
		variants := []prompt.Prompt{p}
		if i%10 == 0 {
			q, r := p, p
			q.User += "\n[D9:9] 1 | A: b"
			r.System += "\nNew turns:"
			variants = append(variants, q, r)
		}
		for k, v := range variants {
			if k > 0 && v.Shown() != nil && quietSystem(v.System) {
				t.Fatalf("prompt %d variant %d: changed, still taken as recorded", i, k)
			}
			if v.Shown() != nil && quietSystem(v.System) {
				recorded++
			}
			got, want := ForReply(&prompt.SelectReply{}, v), idsFromPrompt(v)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("prompt %d variant %d %q:\nForReply %#v\nreading  %#v", i, k, v.User, got, want)
			}
		}
	}
	if recorded < len(ps)/2 {
		t.Errorf("%d of %d prompts taken as recorded", recorded, len(ps))
	}
}

// TestQuietSystem checks quietSystem: a system prompt it calls quiet
// changes nothing of what is read from the user prompt after it (random
// system and user prompts of id, header and data lines), and the ones
// that open a section or show an id are not quiet.
func TestQuietSystem(t *testing.T) {
	for _, s := range []string{"New turns:", "[D1:1] x", "(event e1) t", knownHeader + " Ann:", "a\nNew turn:"} {
		if quietSystem(s) {
			t.Errorf("%q called quiet", s)
		}
	}
	sys, _ := prompt.Render(prompt.Select, prompt.SelectData{})
	if !quietSystem(sys.System) {
		t.Error("higmem's system prompt not quiet")
	}
	pieces := []string{"[D1:3] 8 May 2023 | Ann: hi", "(event e1) Title :: sum", "Keywords: a", "Question: q", "- (7 May) f",
		"- [D3:3] 1 | B: known", "- plain", knownHeader + " Ann:", "Known now: x", "New turns:", "New turn:", "Earlier turns:", "", " ", "Text."}
	rng := rand.New(rand.NewPCG(9, 10))
	lines := func(n int) string {
		var ls []string
		for range rng.IntN(n) {
			ls = append(ls, pieces[rng.IntN(len(pieces))])
		}
		return strings.Join(ls, "\n")
	}
	quiet := 0
	for range 5000 {
		s, u := lines(4), lines(8)
		if !quietSystem(s) {
			continue
		}
		quiet++
		got, want := idsFromPrompt(prompt.Prompt{System: s, User: u}), idsFromPrompt(prompt.Prompt{User: u})
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("system %q, user %q: %#v after the system prompt, %#v alone", s, u, got, want)
		}
	}
	if quiet < 500 {
		t.Errorf("%d quiet system prompts of 5000", quiet)
	}
}
