package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
)

type badCase struct {
	name   string
	method string
	path   string // with query
	key    string // "" → admin; "-" → none
	header map[string]string
	body   string
	status int
	code   string
	msg    string // substring of the message
}

func badCases() []badCase {
	turn := func(extra string) string {
		return `{"user_id":"alice","turn":{"speaker":"a","text":"hello"` + extra + `}}`
	}
	many := make([]string, 51)
	for i := range many {
		many[i] = `{"speaker":"a","text":"t"}`
	}
	big := strings.Repeat("x", 5000)
	return []badCase{
		// Malformed JSON.
		{name: "truncated JSON", method: "POST", path: "/v1/turns", body: `{"user_id":"alice",`, status: 400, code: api.CodeInvalidJSON, msg: "unexpected end"},
		{name: "syntax error", method: "POST", path: "/v1/turns", body: `{"user_id": alice}`, status: 400, code: api.CodeInvalidJSON, msg: "line 1, column 13: invalid character 'a'"},
		{name: "empty body", method: "POST", path: "/v1/search", body: ``, status: 400, code: api.CodeInvalidJSON, msg: "empty body"},
		{name: "trailing data", method: "POST", path: "/v1/search", body: `{"user_id":"alice","question":"x"} {}`, status: 400, code: api.CodeInvalidJSON, msg: "trailing"},
		{name: "array body", method: "POST", path: "/v1/ask", body: `[]`, status: 400, code: api.CodeInvalidRequest, msg: "want an object, got an array"},
		{name: "string body", method: "POST", path: "/v1/ask", body: `"hi"`, status: 400, code: api.CodeInvalidRequest, msg: "want an object, got a string"},
		// Wrong types.
		{name: "user_id number", method: "POST", path: "/v1/search", body: `{"user_id":7,"question":"x"}`, status: 400, code: api.CodeInvalidRequest, msg: `"user_id": want a string`},
		{name: "k_turn string", method: "POST", path: "/v1/search", body: `{"user_id":"alice","question":"x","k_turn":"ten"}`, status: 400, code: api.CodeInvalidRequest, msg: `"k_turn": want an integer, got a string`},
		{name: "k_turn fraction", method: "POST", path: "/v1/search", body: `{"user_id":"alice","question":"x","k_turn":1.5}`, status: 400, code: api.CodeInvalidRequest, msg: `field "k_turn": want an integer, got 1.5`},
		{name: "multi-line body names the line", method: "POST", path: "/v1/search", body: "{\n \"user_id\": \"alice\",\n \"question\": \"x\",\n \"k_event\": true\n}", status: 400, code: api.CodeInvalidRequest, msg: `line 4, column 13: field "k_event": want an integer, got a boolean`},
		{name: "turns object", method: "POST", path: "/v1/turns", body: `{"user_id":"alice","turns":{"text":"x"}}`, status: 400, code: api.CodeInvalidRequest, msg: `"turns": want an array`},
		{name: "metadata number", method: "POST", path: "/v1/turns", body: turn(`,"metadata":{"n":1}`), status: 400, code: api.CodeInvalidRequest, msg: "metadata"},
		{name: "as_of not a time", method: "POST", path: "/v1/search", body: `{"user_id":"alice","question":"x","as_of":"yesterday"}`, status: 400, code: api.CodeInvalidRequest, msg: `field "as_of": want an RFC 3339 time such as "2024-05-01T15:04:05Z", got "yesterday"`},
		{name: "filter value number", method: "POST", path: "/v1/search", body: `{"user_id":"alice","question":"x","filters":{"a":5}}`, status: 400, code: api.CodeInvalidRequest, msg: "condition"},
		// Unknown fields.
		{name: "unknown top field", method: "POST", path: "/v1/turns", body: `{"usr_id":"alice","turn":{"speaker":"a","text":"x"}}`, status: 400, code: api.CodeInvalidRequest, msg: `unknown field "usr_id"`},
		{name: "unknown turn field", method: "POST", path: "/v1/turns", body: `{"user_id":"alice","turn":{"speaker":"a","txt":"x"}}`, status: 400, code: api.CodeInvalidRequest, msg: `unknown field "txt"`},
		{name: "unknown search field", method: "POST", path: "/v1/search", body: `{"user_id":"alice","question":"x","filter":{}}`, status: 400, code: api.CodeInvalidRequest, msg: `unknown field "filter"`},
		{name: "filters on ask", method: "POST", path: "/v1/ask", body: `{"user_id":"alice","question":"x","filters":{}}`, status: 400, code: api.CodeInvalidRequest, msg: `unknown field "filters"`},
		{name: "unknown filter operator", method: "POST", path: "/v1/search", body: `{"user_id":"alice","question":"x","filters":{"a":{"gt":"1"}}}`, status: 400, code: api.CodeInvalidRequest, msg: `unknown operator "gt"`},
		{name: "filter in not array", method: "POST", path: "/v1/search", body: `{"user_id":"alice","question":"x","filters":{"a":{"in":"b"}}}`, status: 400, code: api.CodeInvalidRequest, msg: "array of strings"},
		{name: "unknown query parameter", method: "GET", path: "/v1/turns?user_id=alice&userid=bob", status: 400, code: api.CodeInvalidRequest, msg: `unknown query parameter "userid"`},
		{name: "query on body route", method: "POST", path: "/v1/search?user=alice", body: `{"user_id":"alice","question":"x"}`, status: 400, code: api.CodeInvalidRequest, msg: `"user"`},
		// Missing or bad scope.
		{name: "add without scope", method: "POST", path: "/v1/turns", body: `{"turn":{"speaker":"a","text":"x"}}`, status: 400, code: api.CodeMissingScope, msg: "user_id is required"},
		{name: "list without scope", method: "GET", path: "/v1/turns", status: 400, code: api.CodeMissingScope, msg: "user_id"},
		{name: "search without scope", method: "POST", path: "/v1/search", body: `{"question":"x"}`, status: 400, code: api.CodeMissingScope, msg: "user_id"},
		{name: "export without scope", method: "GET", path: "/v1/export?agent_id=x", status: 400, code: api.CodeMissingScope, msg: "user_id"},
		{name: "blank user", method: "GET", path: "/v1/stats?user_id=%20%20", status: 400, code: api.CodeMissingScope, msg: "user_id"},
		{name: "scope in query of add", method: "POST", path: "/v1/turns?async=false&user_id=bob", body: turn(""), status: 400, code: api.CodeInvalidRequest, msg: `unknown query parameter "user_id" (allowed: async)`},
		{name: "scope in query of search", method: "POST", path: "/v1/search?user_id=bob", body: `{"user_id":"alice","question":"x"}`, status: 400, code: api.CodeInvalidRequest, msg: `unknown query parameter "user_id" (this route takes none)`},
		{name: "repeated user_id", method: "GET", path: "/v1/stats?user_id=alice&user_id=bob", status: 400, code: api.CodeInvalidRequest, msg: "2 times"},
		{name: "user_id too long", method: "GET", path: "/v1/stats?user_id=" + strings.Repeat("u", 300), status: 400, code: api.CodeInvalidRequest, msg: "longer than"},
		{name: "user_id control char", method: "GET", path: "/v1/stats?user_id=al%00ice", status: 400, code: api.CodeInvalidRequest, msg: "control"},
		{name: "malformed query", method: "GET", path: "/v1/stats?user_id=%zz", status: 400, code: api.CodeInvalidRequest, msg: "malformed query"},
		// Bad parameters and content.
		{name: "no turns", method: "POST", path: "/v1/turns", body: `{"user_id":"alice","turns":[]}`, status: 400, code: api.CodeInvalidRequest, msg: "no turns"},
		{name: "turn and turns", method: "POST", path: "/v1/turns", body: `{"user_id":"alice","turn":{"speaker":"a","text":"x"},"turns":[{"speaker":"a","text":"y"}]}`, status: 400, code: api.CodeInvalidRequest, msg: "not both"},
		{name: "empty text", method: "POST", path: "/v1/turns", body: `{"user_id":"alice","turns":[{"speaker":"a","text":"ok"},{"speaker":"a","text":"  "}]}`, status: 400, code: api.CodeInvalidInput, msg: "turn 2: empty text"},
		{name: "empty text async", method: "POST", path: "/v1/turns?async=true", body: `{"user_id":"alice","turn":{"speaker":"a","text":""}}`, status: 400, code: api.CodeInvalidInput, msg: "empty text"},
		{name: "turn id too long", method: "POST", path: "/v1/turns", body: turn(`,"id":"` + strings.Repeat("i", 300) + `"`), status: 400, code: api.CodeInvalidRequest, msg: "longer than"},
		{name: "batch too large", method: "POST", path: "/v1/turns", body: `{"user_id":"alice","turns":[` + strings.Join(many, ",") + `]}`, status: 413, code: api.CodeTooLarge, msg: "over the limit of 50"},
		{name: "bad async", method: "POST", path: "/v1/turns?async=maybe", body: turn(""), status: 400, code: api.CodeInvalidRequest, msg: `"async"`},
		{name: "bad limit", method: "GET", path: "/v1/turns?user_id=alice&limit=abc", status: 400, code: api.CodeInvalidRequest, msg: `"limit"`},
		{name: "limit too big", method: "GET", path: "/v1/turns?user_id=alice&limit=5000", status: 400, code: api.CodeInvalidRequest, msg: `limit: want 0 (the default, 100) to 1000, got 5000`},
		{name: "negative after_seq", method: "GET", path: "/v1/turns?user_id=alice&after_seq=-1", status: 400, code: api.CodeInvalidRequest, msg: `after_seq: want 0 or more`},
		{name: "bad filters JSON", method: "GET", path: "/v1/turns?user_id=alice&filters=" + url.QueryEscape(`{"a":`), status: 400, code: api.CodeInvalidRequest, msg: "filters"},
		{name: "filters empty condition", method: "GET", path: "/v1/turns?user_id=alice&filters=" + url.QueryEscape(`{"a":{}}`), status: 400, code: api.CodeInvalidRequest, msg: "empty condition"},
		{name: "bad history kind", method: "GET", path: "/v1/history?user_id=alice&kind=turns", status: 400, code: api.CodeInvalidRequest, msg: `kind: want event, annotation, link, turn or profile, got "turns"`},
		{name: "negative k_turn", method: "POST", path: "/v1/search", body: `{"user_id":"alice","question":"x","k_turn":-1}`, status: 400, code: api.CodeInvalidRequest, msg: "k_turn"},
		{name: "huge max_evidence", method: "POST", path: "/v1/ask", body: `{"user_id":"alice","question":"x","max_evidence":100000}`, status: 413, code: api.CodeTooLarge, msg: "max_evidence"},
		{name: "empty question", method: "POST", path: "/v1/search", body: `{"user_id":"alice","question":"  "}`, status: 400, code: api.CodeInvalidInput, msg: "question"},
		{name: "question too long", method: "POST", path: "/v1/ask", body: `{"user_id":"alice","question":"` + strings.Repeat("q", 9000) + `"}`, status: 413, code: api.CodeBodyTooLarge, msg: "exceeds"},
		// Sizes and media types.
		{name: "oversize search body", method: "POST", path: "/v1/search", body: `{"user_id":"alice","question":"` + big + big + `"}`, status: 413, code: api.CodeBodyTooLarge, msg: "exceeds 8192"},
		{name: "oversize add body", method: "POST", path: "/v1/turns", body: `{"user_id":"alice","turn":{"speaker":"a","text":"` + strings.Repeat(big, 14) + `"}}`, status: 413, code: api.CodeBodyTooLarge, msg: "exceeds 65536"},
		{name: "oversize import", method: "POST", path: "/v1/import?user_id=alice", body: strings.Repeat(big, 14), status: 413, code: api.CodeBodyTooLarge, msg: "exceeds"},
		{name: "oversize async import", method: "POST", path: "/v1/import?user_id=alice&async=1", body: strings.Repeat(big, 14), status: 413, code: api.CodeBodyTooLarge, msg: "exceeds"},
		{name: "form content type", method: "POST", path: "/v1/search", header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, body: `{"user_id":"alice","question":"x"}`, status: 415, code: api.CodeUnsupportedMediaType, msg: "application/json"},
		{name: "import as image", method: "POST", path: "/v1/import?user_id=alice", header: map[string]string{"Content-Type": "image/png"}, body: "x", status: 415, code: api.CodeUnsupportedMediaType, msg: "image/png"},
		{name: "import garbage", method: "POST", path: "/v1/import?user_id=alice", body: "not json\n", status: 400, code: api.CodeInvalidInput, msg: "line 1"},
		{name: "import empty", method: "POST", path: "/v1/import?user_id=alice", body: "", status: 400, code: api.CodeInvalidRequest, msg: "empty body"},
		{name: "import async empty", method: "POST", path: "/v1/import?user_id=alice&async=true", body: " \n", status: 400, code: api.CodeInvalidRequest, msg: "empty body"},
		{name: "import bad second line", method: "POST", path: "/v1/import?user_id=alice", body: `{"kind":"header","version":1}` + "\n" + `{"kind":"turn","turn":{"id":"z"}}` + "\n", status: 400, code: api.CodeInvalidInput, msg: "line 2"},
		{name: "question without words", method: "POST", path: "/v1/search", body: `{"user_id":"alice","question":"???"}`, status: 400, code: api.CodeInvalidInput, msg: `question "???" has no words to search for`},
		{name: "import event of missing turn", method: "POST", path: "/v1/import?user_id=alice", body: `{"kind":"header","version":1}` + "\n" + `{"kind":"turn","turn":{"id":"z1","speaker":"a","text":"x"}}` + "\n" + `{"kind":"event","event":{"id":"e9","turn_ids":["z1","ghost"]}}` + "\n", status: 400, code: api.CodeInvalidInput, msg: `line 3: event "e9" names turn "ghost", which is neither in the import nor stored`},
		{name: "import turn over the turn cap", method: "POST", path: "/v1/import?user_id=alice", body: `{"kind":"header","version":1}` + "\n" + `{"kind":"turn","turn":{"id":"z2","speaker":"a","text":"` + strings.Repeat("w", 3000) + `"}}` + "\n", status: 413, code: api.CodeTooLarge, msg: `import line 2: turn "z2": text is 3000 bytes, over the limit of 2000 bytes per turn`},
		{name: "turn over the turn cap", method: "POST", path: "/v1/turns", body: `{"user_id":"alice","turns":[{"speaker":"a","text":"ok"},{"speaker":"a","text":"` + strings.Repeat("w", 3000) + `"}]}`, status: 413, code: api.CodeTooLarge, msg: "turn 2: text is 3000 bytes, over the limit of 2000 bytes per turn"},
		{name: "import annotation of missing turn", method: "POST", path: "/v1/import?user_id=alice", body: `{"kind":"header","version":1}` + "\n" + `{"kind":"annotation","annotation":{"turn_id":"ghost"}}` + "\n", status: 400, code: api.CodeInvalidInput, msg: "ghost"},
		// Keys.
		{name: "no key", method: "GET", path: "/v1/stats?user_id=alice", key: "-", status: 401, code: api.CodeUnauthorized, msg: "missing API key"},
		{name: "version needs a key", method: "GET", path: "/v1/version", key: "-", status: 401, code: api.CodeUnauthorized, msg: "missing API key"},
		{name: "not bearer", method: "GET", path: "/v1/stats?user_id=alice", header: map[string]string{"Authorization": "Token abc"}, key: "-", status: 401, code: api.CodeUnauthorized, msg: "Bearer"},
		{name: "unknown key", method: "GET", path: "/v1/stats?user_id=alice", key: "hgm_not-a-key", status: 401, code: api.CodeUnauthorized, msg: "unknown API key"},
		{name: "hash used as key", method: "GET", path: "/v1/stats?user_id=alice", key: "use-hash", status: 401, code: api.CodeUnauthorized, msg: "unknown API key"},
		{name: "mcp unknown key", method: "POST", path: "/mcp", key: "hgm_not-a-key", body: `{}`, status: 401, code: api.CodeUnauthorized, msg: "unknown API key"},
		{name: "mcp without Accept", method: "POST", path: "/mcp", header: map[string]string{"Content-Type": "application/json"}, body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, status: 400, code: api.CodeInvalidRequest, msg: "MCP: Accept must contain"},
		{name: "mcp malformed payload", method: "POST", path: "/mcp", header: map[string]string{"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}, body: `{bad}`, status: 400, code: api.CodeInvalidJSON, msg: "MCP: malformed payload"},
		{name: "mcp text body", method: "POST", path: "/mcp", header: map[string]string{"Accept": "application/json, text/event-stream", "Content-Type": "text/plain"}, body: `{}`, status: 415, code: api.CodeUnsupportedMediaType, msg: "application/json"},
		{name: "mcp unknown session", method: "POST", path: "/mcp", header: map[string]string{"Accept": "application/json, text/event-stream", "Mcp-Session-Id": "nope", "Content-Type": "application/json"}, body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, status: 404, code: api.CodeNotFound, msg: "session not found"},
		{name: "mcp wrong method", method: "PUT", path: "/mcp", body: ``, status: 405, code: api.CodeMethodNotAllowed, msg: "Method Not Allowed"},
		{name: "other user's space", method: "GET", path: "/v1/turns?user_id=bob", key: aliceKey, status: 403, code: api.CodeForbidden, msg: `"alice-key" may not use user_id "bob"`},
		{name: "other user's search", method: "POST", path: "/v1/search", key: aliceKey, body: `{"user_id":"bob","question":"x"}`, status: 403, code: api.CodeForbidden, msg: "bob"},
		{name: "other user's add", method: "POST", path: "/v1/turns", key: aliceKey, body: `{"user_id":"bob","turn":{"speaker":"a","text":"x"}}`, status: 403, code: api.CodeForbidden, msg: "bob"},
		{name: "other user's space delete", method: "DELETE", path: "/v1/space?user_id=bob", key: aliceKey, status: 403, code: api.CodeForbidden, msg: "bob"},
		{name: "cross-site browser write", method: "POST", path: "/v1/turns", header: map[string]string{"Sec-Fetch-Site": "cross-site"}, body: turn(""), status: 403, code: api.CodeForbidden, msg: "cross-origin"},
		{name: "foreign origin write", method: "DELETE", path: "/v1/space?user_id=alice", header: map[string]string{"Origin": "https://evil.example"}, status: 403, code: api.CodeForbidden, msg: "cross-origin"},
		// Routes, methods, missing records, conflicts.
		{name: "unknown route", method: "GET", path: "/v1/memories", status: 404, code: api.CodeNotFound, msg: "no route"},
		{name: "wrong method", method: "PUT", path: "/v1/turns", body: `{}`, status: 405, code: api.CodeMethodNotAllowed, msg: "allowed: POST, GET"},
		{name: "missing turn", method: "GET", path: "/v1/turns/nope?user_id=alice", status: 404, code: api.CodeNotFound, msg: `turn "nope" not found in space user "alice"`},
		{name: "missing event", method: "GET", path: "/v1/events/e999?user_id=alice&agent_id=bot", status: 404, code: api.CodeNotFound, msg: `event "e999" not found in space user "alice", agent "bot"`},
		{name: "missing profile", method: "GET", path: "/v1/profiles/Nobody?user_id=alice", status: 404, code: api.CodeNotFound, msg: `profile "Nobody" not found in space user "alice"`},
		{name: "bad as_of", method: "GET", path: "/v1/profiles?user_id=alice&as_of=yesterday", status: 400, code: api.CodeInvalidRequest, msg: `as_of: want an RFC 3339 time`},
		{name: "other user's profiles", method: "GET", path: "/v1/profiles?user_id=bob", key: aliceKey, status: 403, code: api.CodeForbidden, msg: "bob"},
		{name: "missing job", method: "GET", path: "/v1/jobs/job_x?user_id=alice", status: 404, code: api.CodeNotFound, msg: "job_x"},
		{name: "delete missing turn", method: "DELETE", path: "/v1/turns/nope?user_id=alice", status: 404, code: api.CodeNotFound, msg: "nope"},
		{name: "conflicting turn id", method: "POST", path: "/v1/turns", body: `{"user_id":"alice","turn":{"id":"a1","speaker":"a","text":"different"}}`, status: 409, code: api.CodeConflict, msg: "a1"},
	}
}

// TestBadRequests sends malformed, oversize, unscoped, unauthorised and
// conflicting requests: each gets its 4xx with a JSON error naming the
// problem, and nothing is written.
func TestBadRequests(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t, higmem.Options{MaxTurnBytes: 2000})
	if _, err := mem.Add(ctx, higmem.Space{UserID: "alice"}, []higmem.TurnInput{{ID: "a1", Speaker: "a", Text: "original"}}); err != nil {
		t.Fatal(err)
	}
	histBefore, err := mem.History(ctx, higmem.Space{UserID: "alice"}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	_, ts, _ := start(t, mem, Options{MaxBodyBytes: 8192, MaxUploadBytes: 65536, MaxBatchTurns: 50})
	cases := badCases()
	if len(cases) < 40 {
		t.Fatalf("only %d bad requests", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, ts.URL+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			switch tc.key {
			case "":
				req.Header.Set("Authorization", "Bearer "+adminKey)
			case "-":
			case "use-hash":
				req.Header.Set("Authorization", "Bearer "+HashKey(adminKey))
			default:
				req.Header.Set("Authorization", "Bearer "+tc.key)
			}
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			resp, err := ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			var eb api.ErrorBody
			if err := json.Unmarshal(body, &eb); err != nil {
				t.Fatalf("status %d, body not a JSON error: %q", resp.StatusCode, body)
			}
			if resp.StatusCode != tc.status || eb.Error.Code != tc.code || !strings.Contains(eb.Error.Message, tc.msg) {
				t.Fatalf("got %d %s %q, want %d %s containing %q", resp.StatusCode, eb.Error.Code, eb.Error.Message, tc.status, tc.code, tc.msg)
			}
			for _, leak := range []string{"sqlite", "store:", "Go struct", "2006-01-02", "json.RawMessage", "higmem: higmem:"} {
				if strings.Contains(eb.Error.Message, leak) {
					t.Fatalf("message %q leaks %q", eb.Error.Message, leak)
				}
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type %q", ct)
			}
			if tc.status == 405 && resp.Header.Get("Allow") == "" {
				t.Fatal("405 without Allow")
			}
			if tc.status == 401 && resp.Header.Get("WWW-Authenticate") == "" {
				t.Fatal("401 without WWW-Authenticate")
			}
		})
	}
	// Nothing was written by any of them.
	for _, sp := range []higmem.Space{{UserID: "alice"}, {UserID: "bob"}} {
		ts, err := mem.List(ctx, sp, higmem.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		if sp.UserID == "alice" {
			want = 1
		}
		if len(ts) != want || (want == 1 && ts[0].Text != "original") {
			t.Fatalf("space %s holds %d turns after bad requests: %v", sp, len(ts), fmt.Sprint(ts))
		}
	}
	st, err := mem.Stats(ctx, higmem.Space{UserID: "alice"})
	if err != nil || st.Turns != 1 {
		t.Fatalf("alice stats %+v %v", st, err)
	}
	if hs, _ := mem.History(ctx, higmem.Space{UserID: "alice"}, "", ""); len(hs) != len(histBefore) {
		t.Fatalf("history grew from %d to %d entries", len(histBefore), len(hs))
	}
	if sps, _ := mem.Spaces(ctx); len(sps) != 1 {
		t.Fatalf("spaces after bad requests: %v", sps)
	}
}

// TestNoAuthServesLoopbackHostsOnly checks that a keyless server refuses
// requests addressed to a non-loopback host name (DNS rebinding).
func TestNoAuthServesLoopbackHostsOnly(t *testing.T) {
	s := New(newMem(t, higmem.Options{}), Options{NoAuth: true})
	for host, want := range map[string]int{"127.0.0.1:8420": 200, "localhost:8420": 200, "[::1]:8420": 200, "localhost": 200,
		"evil.example:8420": 403, "evil.example": 403, "10.0.0.1:8420": 403, "127.0.0.1.evil.example": 403} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/v1/stats?user_id=alice", nil)
		req.Host = host
		s.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Host %q: %d %s", host, rec.Code, rec.Body)
		}
	}
}
