// Package httpx holds the small HTTP helpers shared by higmem's clients of
// OpenAI-compatible servers (llm/openai, embed/openai): reading Retry-After,
// exponential backoff with jitter, and extracting the message of an error
// body.
package httpx

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxRetryAfter caps a Retry-After value: a day.
const MaxRetryAfter = 24 * time.Hour

// Retry defaults shared by higmem's clients of OpenAI-compatible servers
// (llm/openai, embed/openai): one home, so both retry alike.
const (
	// DefaultMaxRetries is how many times a failed request is retried:
	// rate limits, 5xx replies, connection failures and timeouts alike.
	DefaultMaxRetries = 4
	// DefaultMinBackoff and DefaultMaxBackoff bound the exponential
	// backoff between retries.
	DefaultMinBackoff = 500 * time.Millisecond
	DefaultMaxBackoff = 30 * time.Second
	// DefaultMaxRetryAfter caps how long a server's Retry-After is
	// honoured.
	DefaultMaxRetryAfter = 2 * time.Minute
	// DefaultMaxConcurrency caps the requests in flight to one server.
	DefaultMaxConcurrency = 8
)

// MaxCallTime is the longest a call can take when every one of its
// 1+retries requests runs out of its timeout (perRequest, 0 for none) and
// every wait between them is the longest backoff can draw (Backoff's
// upper bound, not counting Retry-After, which a server that replies
// does not send with a timeout). It is 0, unbounded, when perRequest is
// 0: only the caller's context bounds the call then.
func MaxCallTime(perRequest time.Duration, retries int, minBackoff, maxBackoff time.Duration) time.Duration {
	if perRequest <= 0 {
		return 0
	}
	retries = max(retries, 0)
	total := time.Duration(retries+1) * perRequest
	for n := range retries {
		d := minBackoff
		for i := 0; i < n && d < maxBackoff; i++ {
			d *= 2
		}
		total += min(d, maxBackoff)
	}
	return total
}

// RetryAfter parses a Retry-After header value, delay-seconds or an
// HTTP-date, relative to now. ok is false when v is empty, negative or
// unreadable. A date in the past gives 0; values are capped at
// MaxRetryAfter.
func RetryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s < 0 || math.IsNaN(s) || math.IsInf(s, 0) {
			return 0, false
		}
		if s > MaxRetryAfter.Seconds() {
			return MaxRetryAfter, true
		}
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(t.Sub(now), 0), MaxRetryAfter), true
	}
	return 0, false
}

// Backoff returns the wait before retry n (0-based): base·2ⁿ capped at
// limit, with jitter drawn uniformly from [d/2, d].
func Backoff(n int, base, limit time.Duration) time.Duration {
	d := base
	for i := 0; i < n && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	if d <= 0 {
		return 0
	}
	half := d / 2
	return half + time.Duration(rand.Int64N(int64(d-half)+1))
}

// ErrorMessage extracts a readable message from an error response body:
// OpenAI's {"error":{"message":...}}, the {"error":"..."} of Ollama and
// others, {"message":...} or {"detail":...} (llama.cpp, older vLLM), else
// the body itself; shortened with Snippet.
func ErrorMessage(body []byte) string {
	var e struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  any             `json:"detail"`
	}
	if json.Unmarshal(body, &e) == nil {
		var o struct {
			Message string `json:"message"`
		}
		if len(e.Error) > 0 && json.Unmarshal(e.Error, &o) == nil && o.Message != "" {
			return Snippet(o.Message)
		}
		var s string
		if len(e.Error) > 0 && json.Unmarshal(e.Error, &s) == nil && s != "" {
			return Snippet(s)
		}
		if e.Message != "" {
			return Snippet(e.Message)
		}
		if e.Detail != nil {
			if s, ok := e.Detail.(string); ok {
				return Snippet(s)
			}
			b, _ := json.Marshal(e.Detail)
			return Snippet(string(b))
		}
	}
	return Snippet(string(body))
}

// Snippet folds white space and shortens s to 300 characters.
func Snippet(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > 300 {
		s = string([]rune(s)[:300]) + "…"
	}
	return s
}
