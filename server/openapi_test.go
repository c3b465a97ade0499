package server

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/higmem/higmem"
)

// localRequest is a request addressed to a loopback host, as a keyless
// server requires.
func localRequest(method, target string) *http.Request {
	r := httptest.NewRequest(method, target, nil)
	r.Host = "127.0.0.1:8420"
	return r
}

var update = flag.Bool("update", false, "rewrite testdata/openapi.json")

func servedDoc(t *testing.T) map[string]any {
	t.Helper()
	s := New(newMem(t, higmem.Options{}), Options{NoAuth: true, Version: "golden"})
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, localRequest("GET", "/openapi.json"))
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("GET /openapi.json: %d", rec.Code)
	}
	var doc map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestOpenAPIMatchesRoutes proves that every registered route is in the
// document with the same query parameters and auth, that every documented
// operation is served by exactly that mux pattern, and vice versa.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	doc := servedDoc(t)
	type opKey struct{ method, path string }
	documented := map[opKey]map[string]any{}
	for path, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			documented[opKey{strings.ToUpper(method), path}] = op.(map[string]any)
		}
	}
	mem := newMem(t, higmem.Options{})
	s := New(mem, Options{NoAuth: true})
	routes := s.restRoutes()
	if len(routes) != len(documented) {
		t.Errorf("%d routes, %d documented operations", len(routes), len(documented))
	}
	for _, rt := range routes {
		op, ok := documented[opKey{rt.method, rt.path}]
		if !ok {
			t.Errorf("route %s %s is not in the OpenAPI document", rt.method, rt.path)
			continue
		}
		var query []string
		params, _ := op["parameters"].([]any)
		for _, p := range params {
			p := p.(map[string]any)
			if p["in"] == "query" {
				query = append(query, p["name"].(string))
			}
		}
		slices.Sort(query)
		want := slices.Sorted(slices.Values(rt.query))
		if !slices.Equal(query, want) {
			t.Errorf("%s %s: documented query %v, served %v", rt.method, rt.path, query, want)
		}
		sec, hasSec := op["security"].([]any)
		if public := hasSec && len(sec) == 0; public != rt.public {
			t.Errorf("%s %s: documented public=%v, served public=%v", rt.method, rt.path, public, rt.public)
		}
	}
	// Every documented operation is served by its own pattern.
	pats := &patterns{}
	h := pats.wrap(s)
	for k := range documented {
		path := pathParamRE.ReplaceAllString(k.path, "x")
		pats.seen = nil
		h.ServeHTTP(httptest.NewRecorder(), localRequest(k.method, path+"?user_id=u"))
		if pats.seen[k.method+" "+k.path] != 1 {
			t.Errorf("documented %s %s is served by %v", k.method, k.path, pats.seen)
		}
	}
	// And an undocumented method on a documented path is a JSON 405.
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, localRequest("PATCH", "/v1/turns"))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("PATCH /v1/turns: %d", rec.Code)
	}
}

// TestOpenAPIRefsResolve checks every $ref points at a component, and that
// request schemas, like the decoder, refuse unknown fields.
func TestOpenAPIRefsResolve(t *testing.T) {
	doc := servedDoc(t)
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	var walk func(v any)
	refs := 0
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if r, ok := v["$ref"].(string); ok {
				refs++
				name := strings.TrimPrefix(r, "#/components/schemas/")
				if _, ok := schemas[name]; !ok {
					t.Errorf("dangling $ref %s", r)
				}
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
	if refs < 20 {
		t.Fatalf("only %d refs", refs)
	}
	for _, name := range []string{"AddRequest", "SearchRequest", "AskRequest", "TurnInput", "Turn", "SearchResponse", "AskResponse", "Job", "ErrorBody", "Condition"} {
		s, ok := schemas[name].(map[string]any)
		if !ok {
			t.Errorf("no schema %s", name)
			continue
		}
		if s["additionalProperties"] != false {
			t.Errorf("schema %s allows unknown fields", name)
		}
	}
	// Embedded structs are flattened: AskResponse has SearchResponse's
	// fields.
	props := schemas["AskResponse"].(map[string]any)["properties"].(map[string]any)
	for _, f := range []string{"answer", "evidence", "trace", "question"} {
		if _, ok := props[f]; !ok {
			t.Errorf("AskResponse schema lacks %q", f)
		}
	}
}

// TestOpenAPIGolden compares the document with testdata/openapi.json; run
// with -update to accept a change.
func TestOpenAPIGolden(t *testing.T) {
	got, err := buildOpenAPI("golden")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "openapi.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run OpenAPIGolden -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("OpenAPI document changed; review and run go test ./server -run OpenAPIGolden -update")
	}
}
