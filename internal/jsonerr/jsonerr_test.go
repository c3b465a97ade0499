package jsonerr

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

type request struct {
	UserID string            `json:"user_id"`
	KTurn  int               `json:"k_turn"`
	Score  float64           `json:"score"`
	AsOf   time.Time         `json:"as_of"`
	Turns  []json.RawMessage `json:"turns"`
	Meta   map[string]string `json:"metadata"`
	Turn   *struct {
		Speaker string `json:"speaker"`
	} `json:"turn"`
}

func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
	}{
		{`{"k_turn": 1.5}`, `line 1, column 12: field "k_turn": want an integer, got 1.5`},
		{`{"k_turn": "t\"en"}`, `line 1, column 12: field "k_turn": want an integer, got a string`},
		{`{"k_turn": [1]}`, `line 1, column 12: field "k_turn": want an integer, got an array`},
		{`{"score": "x"}`, `field "score": want a number, got a string`},
		{`{"turns": 5}`, `field "turns": want an array, got a number`},
		{`{"metadata": {"n": 1}}`, `field "metadata": want a string, got a number`},
		{`{"turn": {"speaker": true}}`, `field "turn.speaker": want a string, got a boolean`},
		{`[]`, `want an object, got an array`},
		{`{"as_of": "yesterday"}`, `line 1, column 11: field "as_of": want an RFC 3339 time such as "2024-05-01T15:04:05Z", got "yesterday"`},
		{"{\n  \"user_id\": \"a\",\n  \"k_turn\": x\n}", `line 3, column 13: invalid character 'x' looking for beginning of value`},
		{`{"user_id": "a"`, `unexpected end of JSON`},
		{`{"usr": 1}`, `unknown field "usr"`},
	} {
		var v request
		dec := json.NewDecoder(strings.NewReader(tc.in))
		dec.DisallowUnknownFields()
		err := dec.Decode(&v)
		if err == nil {
			t.Fatalf("%s: no error", tc.in)
		}
		got := Describe(err, []byte(tc.in))
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.in, got, tc.want)
		}
		for _, leak := range []string{"Go struct", "json.RawMessage", "2006-01-02", "main.", "jsonerr."} {
			if strings.Contains(got, leak) {
				t.Errorf("%s: message %q leaks %q", tc.in, got, leak)
			}
		}
	}
}

func TestPosition(t *testing.T) {
	data := []byte("ab\ncd\n\nef")
	for off, want := range map[int64]string{0: "line 1, column 1", 2: "line 1, column 3", 3: "line 2, column 1", 7: "line 4, column 1", 99: "line 4, column 3"} {
		if got := Position(data, off); got != want {
			t.Errorf("Position(%d) = %q, want %q", off, got, want)
		}
	}
	if Line(data, 4) != 2 {
		t.Errorf("Line(4) = %d", Line(data, 4))
	}
}
