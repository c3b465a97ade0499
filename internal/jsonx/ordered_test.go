package jsonx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
)

// Clone copies every object and array: writing the copy leaves the
// original as it was, and the copy marshals like the original.
func TestCloneIsDeep(t *testing.T) {
	doc := `{"type":"object","properties":{"ids":{"type":"array","items":{"type":"string","enum":["a","b"]}},"n":{"type":"integer","minimum":1.5}},"required":["ids"],"empty":[],"none":null}`
	v, err := DecodeOrdered([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	c := Clone(v).(*Object)
	before, _ := json.Marshal(v)
	if got, _ := json.Marshal(c); string(got) != string(before) {
		t.Fatalf("clone marshals to %s, want %s", got, before)
	}
	c.Set("extra", true)
	c.Get("required").([]any)[0] = "changed"
	items := c.Get("properties").(*Object).Get("ids").(*Object).Get("items").(*Object)
	items.Set("enum", []any{"z"})
	items.Get("type")
	c.Get("properties").(*Object).Set("more", NewObject())
	if after, _ := json.Marshal(v); string(after) != string(before) {
		t.Errorf("writing the clone changed the original:\n%s\nwas\n%s", after, before)
	}
}

// oldMarshal is Object.MarshalJSON as it was: json.Marshal of every key
// and value, the nested objects through their own MarshalJSON.
type oldMarshal struct{ o *Object }

func (m oldMarshal) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range m.o.Keys() {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := json.Marshal(old(m.o.vals[k]))
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// old wraps the objects in v for oldMarshal.
func old(v any) any {
	switch x := v.(type) {
	case *Object:
		if x == nil {
			return (*oldMarshal)(nil)
		}
		return oldMarshal{x}
	case []any:
		if x == nil {
			return x
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = old(e)
		}
		return out
	}
	return v
}

// randValue returns a random value of the kinds an Object holds.
func randValue(r *rand.Rand, depth int) any {
	strs := []string{"", "a", "D1:3", "<b>", "a<b", "x>", "&", "a&b", `q"uote`, `back\slash`, "tab\t", "\u2028", "é", "\xff", "\x7f", "new:1"}
	switch k := r.IntN(10); {
	case k < 2 && depth < 4:
		o := NewObject()
		if r.IntN(8) == 0 {
			return (*Object)(nil)
		}
		for range r.IntN(5) {
			o.Set(strs[r.IntN(len(strs))], randValue(r, depth+1))
		}
		return o
	case k < 4 && depth < 4:
		if r.IntN(8) == 0 {
			return []any(nil)
		}
		a := []any{}
		for range r.IntN(5) {
			a = append(a, randValue(r, depth+1))
		}
		return a
	case k < 7:
		return strs[r.IntN(len(strs))]
	case k == 7:
		return []any{json.Number("12"), json.Number("1.5e3"), json.Number("")}[r.IntN(3)]
	case k == 8:
		return r.IntN(2) == 0
	}
	return nil
}

// TestMarshalMatchesNested checks that MarshalJSON writes what marshalling
// every nested value with json.Marshal wrote, on random objects and on a
// schema, and fails where it failed (an invalid number).
func TestMarshalMatchesNested(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 5000 {
		o := NewObject()
		for range 1 + r.IntN(5) {
			o.Set(fmt.Sprint(r.IntN(9)), randValue(r, 0))
		}
		got, err := json.Marshal(o)
		want, werr := json.Marshal(oldMarshal{o})
		if string(got) != string(want) || (err == nil) != (werr == nil) {
			t.Fatalf("case %d: got %s (%v), want %s (%v)", i, got, err, want, werr)
		}
		// Called directly (json.Marshal compacts and escapes a
		// Marshaler's text again).
		got, err = o.MarshalJSON()
		// Called directly it writes what json.Marshal writes (prompt's
		// constrain relies on it).
		if viaMarshal, merr := json.Marshal(o); string(got) != string(viaMarshal) || (err == nil) != (merr == nil) {
			t.Fatalf("case %d: MarshalJSON wrote %s (%v), json.Marshal %s (%v)", i, got, err, viaMarshal, merr)
		}
		want, werr = oldMarshal{o}.MarshalJSON()
		if string(got) != string(want) || (err == nil) != (werr == nil) {
			t.Fatalf("case %d, MarshalJSON: got %s (%v), want %s (%v)", i, got, err, want, werr)
		}
	}
	o := NewObject()
	o.Set("n", json.Number("1x"))
	if _, err := json.Marshal(o); err == nil {
		t.Error("an invalid number marshalled")
	}
}
