package prompt

import "testing"

func TestCapsOf(t *testing.T) {
	turns := func(n int) []Turn { return make([]Turn, n) }
	for _, c := range []struct {
		name string
		data any
		want Caps
	}{
		{"build batch", BuildBatchData{New: turns(3), Candidates: make([]Event, 2)}, Caps{Items: 3}},
		{"predict", PredictData{Turns: turns(5), Max: 2}, Caps{Items: 5, IDs: 2}},
		{"filter", FilterData{Turns: turns(4)}, Caps{Items: 4}},
		{"select", SelectData{Turns: turns(2), Events: []SelectEvent{{Turns: turns(3)}, {Turns: turns(1)}}, Max: 4}, Caps{Items: 6, IDs: 4}},
		{"pointer", &PredictData{Turns: turns(1), Max: 1}, Caps{Items: 1, IDs: 1}},
		{"none", QueryData{Question: "q"}, Caps{}},
		{"nil", nil, Caps{}},
	} {
		if got := CapsOf(c.data); got != c.want {
			t.Errorf("%s: CapsOf = %+v, want %+v", c.name, got, c.want)
		}
	}
}
