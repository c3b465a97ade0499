package ui_test

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/higmem/higmem"
)

// Export downloads a space that the import form reads back into another
// space; the import needs the form's CSRF token.
func TestExportImport(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.client(t)
	c.login(e.keys["admin"])
	resp, exp := c.get(demoPath("export"))
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Disposition"), `filename="higmem-priya-demo.jsonl"`) {
		t.Fatalf("export: %s %q", resp.Status, resp.Header.Get("Content-Disposition"))
	}
	if n := strings.Count(exp, `"kind":"turn"`); n != 34 {
		t.Fatalf("export holds %d turns, want 34", n)
	}
	upload := func(tok string) (*http.Response, string) {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		for k, v := range map[string]string{"csrf": tok, "user": "priya", "agent": "copy"} {
			_ = mw.WriteField(k, v)
		}
		fw, _ := mw.CreateFormFile("file", "export.jsonl")
		_, _ = fw.Write([]byte(exp))
		mw.Close()
		req, _ := http.NewRequest("POST", e.ts.URL+"/ui/import", &body)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		r, err := c.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(r.Body)
		return r, b.String()
	}
	if r, _ := upload("bad"); r.StatusCode != http.StatusForbidden {
		t.Errorf("import with a bad token: %s, want 403", r.Status)
	}
	r, body := upload(c.csrf("/ui/"))
	if r.StatusCode != 200 || !strings.Contains(body, "Stored 34 turn(s)") {
		t.Fatalf("import: %s\n%s", r.Status, body)
	}
	st, err := e.mem.Stats(context.Background(), higmem.Space{UserID: "priya", AgentID: "copy"})
	if err != nil || st.Turns != 34 {
		t.Errorf("imported space: %+v %v", st, err)
	}
}
