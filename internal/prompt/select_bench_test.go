package prompt

import (
	"strconv"
	"strings"
	"testing"

	"github.com/higmem/higmem/internal/prompt/prompttest"
)

// benchSelects reads the recorded select calls (prompttest) and the data
// each was rendered from (read back from its prompt by selectDataOf).
func benchSelects(tb testing.TB) ([]prompttest.Call, []SelectData) {
	tb.Helper()
	calls := prompttest.BenchSelects(tb)
	data := make([]SelectData, len(calls))
	for i, c := range calls {
		data[i] = selectDataOf(tb, c.User)
	}
	return calls, data
}

// selectDataOf reads back the data of a select prompt (the recorded ones
// have no notes, and no " :: " in a title).
func selectDataOf(tb testing.TB, user string) SelectData {
	tb.Helper()
	var d SelectData
	var turns *[]Turn
	for _, l := range strings.Split(user, "\n") {
		switch {
		case strings.HasPrefix(l, "Question: "):
			d.Question = strings.TrimPrefix(l, "Question: ")
		case strings.HasPrefix(l, "(event "):
			id, rest, _ := strings.Cut(strings.TrimPrefix(l, "(event "), ") ")
			title, summary, _ := strings.Cut(rest, " :: ")
			d.Events = append(d.Events, SelectEvent{Event: Event{ID: id, Title: title, Summary: summary}})
		case l == "Its turns:":
			turns = &d.Events[len(d.Events)-1].Turns
		case l == "Turns found by search:":
			turns = &d.Turns
		case strings.HasPrefix(l, "[") && turns != nil:
			id, rest, _ := strings.Cut(l[1:], "] ")
			date, rest, _ := strings.Cut(rest, " | ")
			speaker, text, _ := strings.Cut(rest, ": ")
			if date == "unknown date" {
				date = ""
			}
			*turns = append(*turns, Turn{ID: id, Date: date, Speaker: speaker, Text: text})
		case strings.HasPrefix(l, "Return \"turn_ids\""):
			_, rest, _ := strings.Cut(l, "at most ")
			n, _, _ := strings.Cut(rest, ",")
			d.Max, _ = strconv.Atoi(n)
		}
	}
	return d
}

// TestSelectBenchData checks that the data read back from the recorded
// select prompts renders them exactly (so that the benchmarks below
// render what the bench rendered).
func TestSelectBenchData(t *testing.T) {
	calls, data := benchSelects(t)
	for i, c := range calls {
		p, err := Render(Select, data[i])
		if err != nil {
			t.Fatal(err)
		}
		if p.System != c.System || p.User != c.User {
			t.Errorf("call %d: rendered prompt differs from the recorded one", i)
		}
	}
}

// BenchmarkRenderSelect measures Render on the bench's select prompts.
func BenchmarkRenderSelect(b *testing.B) {
	_, data := benchSelects(b)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := Render(Select, data[i%len(data)]); err != nil {
			b.Fatal(err)
		}
	}
}
