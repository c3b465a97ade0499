package jsonx

import (
	"encoding/json"
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
