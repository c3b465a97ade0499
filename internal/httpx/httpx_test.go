package httpx

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{"2", 2 * time.Second, true},
		{" 1.5 ", 1500 * time.Millisecond, true},
		{"-3", 0, false},
		{"NaN", 0, false},
		{"soon", 0, false},
		{"99999999", MaxRetryAfter, true},
		{now.Add(7 * time.Second).Format(http.TimeFormat), 7 * time.Second, true},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0, true},
	}
	for _, tc := range tests {
		got, ok := RetryAfter(tc.in, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("RetryAfter(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestBackoffGrowsWithJitterAndCap(t *testing.T) {
	base, limit := 100*time.Millisecond, time.Second
	for n := 0; n < 40; n++ {
		full := min(base<<min(n, 30), limit)
		for range 20 {
			if d := Backoff(n, base, limit); d < full/2 || d > full {
				t.Fatalf("retry %d: backoff %v outside [%v, %v]", n, d, full/2, full)
			}
		}
	}
	if d := Backoff(3, 0, time.Second); d != 0 {
		t.Errorf("zero base gave %v", d)
	}
}

func TestErrorMessage(t *testing.T) {
	tests := map[string]string{
		`{"error":{"message":"m1","type":"x"}}`: "m1",
		`{"error":"m2"}`:                        "m2",
		`{"message":"m3"}`:                      "m3",
		`{"detail":"m4"}`:                       "m4",
		`{"detail":{"loc":["x"]}}`:              `{"loc":["x"]}`,
		"plain\n  text\n":                       "plain text",
		strings.Repeat("é", 400):                strings.Repeat("é", 300) + "…",
	}
	for in, want := range tests {
		if got := ErrorMessage([]byte(in)); got != want {
			t.Errorf("ErrorMessage(%q) = %q, want %q", in, got, want)
		}
	}
}

// MaxCallTime is the total deadline the docs state: with the default
// retries and backoff a 2-minute request timeout ends a call that only
// ever times out after 10m7.5s (README, "Configuring an LLM").
func TestMaxCallTime(t *testing.T) {
	if got := MaxCallTime(2*time.Minute, DefaultMaxRetries, DefaultMinBackoff, DefaultMaxBackoff); got != 10*time.Minute+7500*time.Millisecond {
		t.Errorf("MaxCallTime(2m, defaults) = %v, want 10m7.5s", got)
	}
	if got := MaxCallTime(0, 4, time.Second, time.Minute); got != 0 {
		t.Errorf("no request timeout: %v, want 0 (unbounded)", got)
	}
	// Backoff is capped: 10 retries of 1s at most 4s apart.
	if got := MaxCallTime(time.Second, 10, time.Second, 4*time.Second); got != 11*time.Second+(1+2+4*8)*time.Second {
		t.Errorf("capped backoff: %v", got)
	}
}
