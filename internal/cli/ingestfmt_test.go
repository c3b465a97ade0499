package cli

import (
	"os"
	"slices"
	"testing"

	"github.com/higmem/higmem/api"
)

// TestIngestFormats reads the same two turns written in every format the
// ingest command accepts, and the formats are told apart by the shape of
// the JSON (a turn whose text mentions "conversation" or "turns" is still a
// turn).
func TestIngestFormats(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, data string
		turns      int
		session    string
	}{
		{"one JSON line", `{"speaker": "Ann", "text": "our \"conversation\" about \"turns\"", "session_id": "s1"}` + "\n", 1, "s1"},
		{"one JSON line without newline", `{"speaker": "Ann", "text": "hi", "session_id": "s1"}`, 1, "s1"},
		{"JSON lines", "{\"speaker\": \"Ann\", \"text\": \"hi\", \"session_id\": \"s1\"}\n\n{\"speaker\": \"Bob\", \"text\": \"yo\"}\r\n", 2, "s1"},
		{"old spelling session", `{"speaker": "Ann", "text": "hi", "session": "s1"}`, 1, "s1"},
		{"both spellings agreeing", `{"speaker": "Ann", "text": "hi", "session": "s1", "session_id": "s1"}`, 1, "s1"},
		{"array", `[{"speaker": "Ann", "text": "hi", "session_id": "s1"}, {"speaker": "Bob", "text": "conversation"}]`, 2, "s1"},
		{"simple", `{"title": "t", "speakers": ["Ann"], "turns": [{"speaker": "Ann", "text": "hi", "session_id": "s1"}], "questions": [{"question": "q?"}]}`, 1, "s1"},
		{"simple, pretty", "{\n  \"turns\": [\n    {\"speaker\": \"Ann\", \"text\": \"hi\", \"session\": \"s1\"},\n    {\"speaker\": \"Bob\", \"text\": \"yo\"}\n  ]\n}\n", 2, "s1"},
	} {
		convs, err := parseConversations([]byte(tc.data), "f")
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if len(convs) != 1 || len(convs[0].Turns) != tc.turns || convs[0].Turns[0].SessionID != tc.session {
			t.Errorf("%s: %+v", tc.name, convs)
		}
	}
	// The example file (session_id) and LoCoMo (detected by its
	// "conversation") go through the same reader.
	b, err := os.ReadFile(exampleFile)
	if err != nil {
		t.Fatal(err)
	}
	convs, err := parseConversations(b, "example")
	if err != nil || len(convs[0].Turns) != 34 || convs[0].Turns[0].SessionID != "1" || convs[0].Title == "" || len(convs[0].Questions) == 0 {
		t.Fatalf("example: %v %+v", err, convs)
	}
	b, err = os.ReadFile(evalTestData)
	if err != nil {
		t.Fatal(err)
	}
	convs, err = parseConversations(b, "locomo")
	if err != nil || len(convs) == 0 || !slices.ContainsFunc(convs[0].Turns, func(tu api.TurnInput) bool { return tu.SessionID == "1" }) {
		t.Fatalf("locomo: %v %d", err, len(convs))
	}
}
