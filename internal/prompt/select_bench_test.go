package prompt

import (
	"testing"

	"github.com/higmem/higmem/internal/prompt/prompttest"
)

// benchSelects reads the recorded select calls (prompttest) and the data
// each was rendered from (read back from its prompt by SelectDataOf).
func benchSelects(tb testing.TB) ([]prompttest.Call, []SelectData) {
	tb.Helper()
	calls := prompttest.BenchSelects(tb)
	data := make([]SelectData, len(calls))
	for i, c := range calls {
		data[i] = SelectDataOf(c.User)
	}
	return calls, data
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
