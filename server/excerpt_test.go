package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
)

// TestEvidenceExcerptOnTheWire checks that a long turn's evidence reaches
// REST and MCP as an excerpt: the matching passage as its text, with the
// passages it shows.
func TestEvidenceExcerptOnTheWire(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t, higmem.Options{})
	var paras []string
	for p := range 5 {
		var b strings.Builder
		for s := range 5 {
			fmt.Fprintf(&b, "Paragraph %d sentence %d talks about gardening, cooking and running in some detail. ", p, s)
		}
		if p == 2 {
			b.WriteString("Your sister Marguerite lives in Valparaiso.")
		}
		paras = append(paras, b.String())
	}
	sp := higmem.Space{UserID: "alice"}
	if _, err := mem.Add(ctx, sp, []higmem.TurnInput{
		{ID: "u1", Speaker: "user", Text: "Tell me about my family."},
		{ID: "a1", Speaker: "assistant", Text: strings.Join(paras, "\n\n")},
	}); err != nil {
		t.Fatal(err)
	}
	s := New(mem, Options{NoAuth: true})
	body, _ := json.Marshal(api.SearchRequest{UserID: "alice", Question: "Where does my sister Marguerite live?"})
	r := localRequest("POST", "/v1/search")
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, r)
	if rec.Code != 200 {
		t.Fatalf("POST /v1/search: %d %s", rec.Code, rec.Body)
	}
	var res api.SearchResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	var got *api.Evidence
	for i, e := range res.Evidence {
		if e.Turn.ID == "a1" {
			got = &res.Evidence[i]
		}
	}
	if got == nil || got.Excerpt == nil || len(got.Excerpt.Passages) == 0 || got.Excerpt.Of < 2 ||
		!strings.Contains(got.Turn.Text, "Valparaiso") || got.Turn.Speaker != "assistant" {
		t.Fatalf("REST evidence of a1 is not an excerpt with the fact: %+v", got)
	}
	for _, e := range compactEvidence(res.Evidence) {
		if e.ID == "a1" && (e.Excerpt == nil || !strings.Contains(e.Text, "Valparaiso")) {
			t.Fatalf("MCP evidence of a1 is not the excerpt: %+v", e)
		}
	}
	if !strings.Contains(res.Context, "excerpt of a longer message") {
		t.Errorf("the context does not mark the excerpt:\n%s", res.Context)
	}
}
