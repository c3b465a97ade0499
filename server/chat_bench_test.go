package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/api"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/internal/bench"
	"github.com/higmem/higmem/internal/synth"
	"github.com/higmem/higmem/store/sqlite"
)

// chatBenchSizes are the space sizes of BenchmarkChatProxy:
// HIGMEM_BENCH_TURNS (comma-separated), else 1,000.
func chatBenchSizes(b *testing.B) []int {
	sizes, err := bench.ParseSizes(os.Getenv("HIGMEM_BENCH_TURNS"), []int{1000})
	if err != nil {
		b.Fatalf("HIGMEM_BENCH_TURNS: %v", err)
	}
	return sizes
}

// BenchmarkChatProxy measures the latency the chat endpoint adds to a
// request (offline retrieval, the system message, the relay), excluding the
// upstream model: each iteration sends the same request straight to an
// instant upstream and through higmem, and the difference is the added
// latency. The asynchronous store after the reply is timed apart (it is
// not in the client's latency); the next iteration starts after it. Then
// the engine's retrieval alone is timed on the same space, unchanged and
// right after an add, to tell the proxy's own cost from the engine's.
func BenchmarkChatProxy(b *testing.B) {
	reply := []byte(`{"id":"chatcmpl-b","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Sounds great."},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":3,"total_tokens":13}}`)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(reply)
	}))
	defer up.Close()
	ctx := context.Background()
	for _, n := range chatBenchSizes(b) {
		b.Run(fmt.Sprintf("turns=%d", n), func(b *testing.B) {
			conv := synth.Generate(synth.Options{Turns: n, Seed: 1})
			st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "m.db"), sqlite.Options{})
			if err != nil {
				b.Fatal(err)
			}
			mem, err := higmem.Open(ctx, higmem.Options{Store: st, Embedder: hashing.New(0)})
			if err != nil {
				b.Fatal(err)
			}
			defer mem.Close()
			sp := higmem.Space{UserID: "bench"}
			for turns := conv.Turns; len(turns) > 0; {
				k := min(len(turns), 2000)
				if _, err := mem.Add(ctx, sp, turns[:k]); err != nil {
					b.Fatal(err)
				}
				turns = turns[k:]
			}
			s := New(mem, Options{NoAuth: true, Chat: ChatOptions{UpstreamURL: up.URL + "/v1"}})
			ts := httptest.NewServer(s)
			defer ts.Close()
			client := ts.Client()
			post := func(url, convID string, body []byte) (time.Duration, http.Header) {
				req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				if convID != "" {
					req.Header.Set(api.HeaderConversation, convID)
				}
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				el := time.Since(t0)
				if resp.StatusCode != 200 {
					b.Fatalf("status %d", resp.StatusCode)
				}
				return el, resp.Header
			}
			var added, stores []time.Duration
			evidence := 0
			b.ResetTimer()
			for i := range b.N {
				q := conv.Questions[i%len(conv.Questions)].Text
				body, _ := json.Marshal(map[string]any{"model": "m", "user": "bench",
					"messages": []any{map[string]string{"role": "system", "content": "You are helpful."}, map[string]string{"role": "user", "content": q}}})
				direct, _ := post(up.URL+"/v1/chat/completions", "", body)
				proxied, h := post(ts.URL+"/v1/chat/completions", fmt.Sprintf("bench-%d", i), body)
				if h.Get(api.HeaderWarning) != "" {
					b.Fatal(h.Get(api.HeaderWarning))
				}
				ev, _ := strconv.Atoi(h.Get(api.HeaderEvidence))
				evidence += ev
				added = append(added, proxied-direct)
				t0 := time.Now()
				s.chat.stores.Wait()
				stores = append(stores, time.Since(t0))
			}
			b.StopTimer()
			pct := func(ds []time.Duration, p float64) float64 {
				ds = slices.Clone(ds)
				slices.Sort(ds)
				return float64(ds[min(len(ds)-1, int(p*float64(len(ds))))]) / 1e6
			}
			if evidence == 0 {
				b.Fatal("no evidence was ever added: the benchmark measures nothing")
			}
			// The engine alone on the same space: retrieval on an unchanged
			// space, and right after an add of two turns (what the chat
			// endpoint does between two messages).
			var still, afterAdd []time.Duration
			for i := range 100 {
				q := conv.Questions[i%len(conv.Questions)].Text
				t0 := time.Now()
				if _, err := mem.Retrieve(ctx, sp, q, higmem.RetrieveOptions{EvidenceTokens: DefaultChatEvidenceTokens}); err != nil {
					b.Fatal(err)
				}
				still = append(still, time.Since(t0))
			}
			for i := range 100 {
				q := conv.Questions[i%len(conv.Questions)].Text
				if _, err := mem.Add(ctx, sp, []higmem.TurnInput{{SessionID: fmt.Sprintf("w%d", i), Speaker: "bench", Text: q},
					{SessionID: fmt.Sprintf("w%d", i), Speaker: "assistant", Text: "Sounds great."}}); err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				if _, err := mem.Retrieve(ctx, sp, q, higmem.RetrieveOptions{EvidenceTokens: DefaultChatEvidenceTokens}); err != nil {
					b.Fatal(err)
				}
				afterAdd = append(afterAdd, time.Since(t0))
			}
			b.ReportMetric(pct(still, 0.50), "retrieve-p50-ms")
			b.ReportMetric(pct(still, 0.95), "retrieve-p95-ms")
			b.ReportMetric(pct(afterAdd, 0.50), "retrieve-after-add-p50-ms")
			b.ReportMetric(pct(afterAdd, 0.95), "retrieve-after-add-p95-ms")
			b.ReportMetric(pct(added, 0.50), "added-p50-ms")
			b.ReportMetric(pct(added, 0.95), "added-p95-ms")
			b.ReportMetric(pct(stores, 0.50), "store-wait-p50-ms")
			b.ReportMetric(float64(evidence)/float64(b.N), "evidence/req")
			b.ReportMetric(0, "ns/op")
			_ = s.Shutdown(ctx)
		})
	}
}
