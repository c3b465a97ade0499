package ui_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/internal/cputime"
	"github.com/higmem/higmem/internal/synth"
	"github.com/higmem/higmem/server"
	"github.com/higmem/higmem/server/ui"
	"github.com/higmem/higmem/store/sqlite"
)

// BenchmarkTimeline measures the server time of the timeline page (and,
// for comparison, an event page and the turn list) of a 10,000-turn space
// built in offline mode on a SQLite file: the handler from request to the
// last byte, with the space already loaded (the first request, which
// loads it, is not timed; BenchmarkColdOpen in the root package measures
// loading).
func BenchmarkTimeline(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{1000, 10000} {
		conv := synth.Generate(synth.Options{Turns: n, Seed: 1})
		st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "m.db"), sqlite.Options{})
		if err != nil {
			b.Fatal(err)
		}
		m, err := higmem.Open(ctx, higmem.Options{Store: st, Embedder: hashing.New(0), Mode: higmem.ModeOffline})
		if err != nil {
			b.Fatal(err)
		}
		sp := higmem.Space{UserID: "bench"}
		for ts := conv.Turns; len(ts) > 0; {
			k := 1
			for k < len(ts) && ts[k].SessionID == ts[0].SessionID {
				k++
			}
			if _, err := m.Add(ctx, sp, ts[:k]); err != nil {
				b.Fatal(err)
			}
			ts = ts[k:]
		}
		evs, err := m.Events(ctx, sp)
		if err != nil {
			b.Fatal(err)
		}
		srv := server.New(m, server.Options{NoAuth: true})
		ui.Mount(srv, ui.Options{})
		for _, pg := range []struct{ name, path string }{
			{"timeline", "/ui/space?user=bench"},
			{"event", "/ui/event?user=bench&id=" + evs[len(evs)/2].Event.ID},
			{"turns", "/ui/turns?user=bench"},
		} {
			b.Run(pg.name+"/"+strconv.Itoa(n), func(b *testing.B) {
				get := func() int {
					req := httptest.NewRequest("GET", "http://127.0.0.1"+pg.path, nil)
					w := httptest.NewRecorder()
					srv.ServeHTTP(w, req)
					if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "</html>") {
						b.Fatalf("GET %s: %d\n%.500s", pg.path, w.Code, w.Body.String())
					}
					return w.Body.Len()
				}
				size := get() // loads the space
				cpu0 := cputime.Process()
				for b.Loop() {
					get()
				}
				// The machine is shared: CPU time per page says what
				// the page costs when wall time includes waiting for a
				// core.
				b.ReportMetric(float64(cputime.Process()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
				b.ReportMetric(float64(size), "bytes/page")
				b.ReportMetric(float64(len(evs)), "events")
			})
		}
		_ = srv.Shutdown(ctx)
		m.Close()
		st.Close()
	}
}
