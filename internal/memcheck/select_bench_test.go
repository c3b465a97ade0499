package memcheck

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/higmem/higmem/internal/prompt"
)

// benchCall is one select call recorded from the bench (the scripted
// model on the 100k space, internal/prompt's testdata): its prompts and
// the scripted model's reply.
type benchCall struct {
	System string `json:"system"`
	User   string `json:"user"`
	Reply  string `json:"reply"`
}

// benchSelects reads the recorded select calls.
func benchSelects(tb testing.TB) []benchCall {
	tb.Helper()
	f, err := os.Open("../prompt/testdata/select_bench.jsonl")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []benchCall
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c benchCall
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			tb.Fatal(err)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil || len(out) == 0 {
		tb.Fatalf("%d recorded select calls, %v", len(out), err)
	}
	return out
}

// BenchmarkSelectCheck measures the check of a select reply as the
// engine runs it (ForReply, then Reply) on the bench's select calls.
func BenchmarkSelectCheck(b *testing.B) {
	calls := benchSelects(b)
	ps := make([]prompt.Prompt, len(calls))
	replies := make([]prompt.SelectReply, len(calls))
	for i, c := range calls {
		ps[i] = prompt.Prompt{Name: prompt.Select, System: c.System, User: c.User}
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
