package server

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
	"github.com/higmem/higmem/store"
)

// fill sets every exported field of v (a pointer) to a non-zero value,
// recursively, so that a translation that drops a field shows in its JSON.
func fill(v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fill(v.Elem(), depth)
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Date(2024, 5, 8, 13, 56, 0, 0, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	case reflect.String:
		v.SetString("s")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(7)
	case reflect.Float64, reflect.Float32:
		v.SetFloat(0.5)
	case reflect.Slice:
		if v.Type() == reflect.TypeOf(json.RawMessage(nil)) {
			v.Set(reflect.ValueOf(json.RawMessage(`{"a":1}`)))
			return
		}
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k := reflect.New(v.Type().Key()).Elem()
		fill(k, depth+1)
		e := reflect.New(v.Type().Elem()).Elem()
		fill(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	}
}

func filled[T any]() T {
	var v T
	fill(reflect.ValueOf(&v), 0)
	return v
}

func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWireCarriesEveryField checks that every translation from an engine
// record to its wire struct keeps every field, with the engine's JSON
// spelling: the JSON of both sides is identical for fully filled records.
func TestWireCarriesEveryField(t *testing.T) {
	add := filled[higmem.AddResult]()
	res := filled[higmem.Result]()
	ans := filled[higmem.Answer]()
	ev := filled[higmem.EventView]()
	ch := filled[higmem.Change]()
	st := filled[store.Stats]()
	imp := filled[higmem.ImportResult]()
	tu := filled[higmem.Turn]()
	for _, tc := range []struct {
		name         string
		engine, wire any
	}{
		{"AddResult", add, apiAddResponse(&add)},
		{"Result", res, apiSearchResponse(&res)},
		{"Answer", ans, apiAskResponse(&ans)},
		{"EventView", ev, apiEventView(ev)},
		{"Change", ch, apiChanges([]higmem.Change{ch})[0]},
		{"Stats", st, apiStats(st)},
		{"ImportResult", imp, apiImportResponse(&imp)},
		{"Turn", tu, apiTurn(tu)},
	} {
		if diff := cmp.Diff(asJSON(t, tc.engine), asJSON(t, tc.wire)); diff != "" {
			t.Errorf("%s: engine and wire JSON differ (-engine +wire):\n%s", tc.name, diff)
		}
	}
	// And turns to add, the other way.
	in := filled[higmem.TurnInput]()
	back := engineTurnInputs(apiTurnInputs([]higmem.TurnInput{in}))[0]
	if diff := cmp.Diff(in, back); diff != "" {
		t.Errorf("TurnInput round trip (-in +out):\n%s", diff)
	}
	if diff := cmp.Diff(asJSON(t, in), asJSON(t, apiTurnInputs([]higmem.TurnInput{in})[0])); diff != "" {
		t.Errorf("TurnInput: engine and wire JSON differ (-engine +wire):\n%s", diff)
	}
}

// apiTurnInputs translates turns to add the other way (only tests need
// it).
func apiTurnInputs(in []higmem.TurnInput) []api.TurnInput {
	out := make([]api.TurnInput, len(in))
	for i, t := range in {
		out[i] = api.TurnInput{
			ID: t.ID, SessionID: t.SessionID, Speaker: t.Speaker, Text: t.Text, Time: t.Time,
			OccurredAt: t.OccurredAt, Attachments: apiAttachments(t.Attachments), Metadata: t.Metadata,
		}
	}
	return out
}
