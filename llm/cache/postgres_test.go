package cache_test

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/higmem/higmem/internal/pgtest"
	"github.com/higmem/higmem/llm/cache"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// openPool connects to a new schema of the test server.
func openPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(t.Context(), pgtest.SchemaDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func TestPostgresBackend(t *testing.T) {
	pool := openPool(t)
	b, err := cache.OpenPostgres(t.Context(), pool)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cache.OpenPostgres(t.Context(), pool); err != nil {
		t.Fatalf("second open: %v", err)
	}
	if _, ok, err := b.Get(t.Context(), "k"); ok || err != nil {
		t.Fatalf("empty get: %v %v", ok, err)
	}
	for _, v := range []string{"v1", "v2"} {
		if err := b.Put(t.Context(), "k", []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	v, ok, err := b.Get(t.Context(), "k")
	if !ok || err != nil || string(v) != "v2" {
		t.Fatalf("get = %q %v %v", v, ok, err)
	}
	if n, _ := b.Len(t.Context()); n != 1 {
		t.Errorf("Len = %d", n)
	}
	if err := b.Clear(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n, _ := b.Len(t.Context()); n != 0 {
		t.Errorf("Len after Clear = %d", n)
	}
	if _, err := cache.OpenPostgres(t.Context(), nil); err == nil {
		t.Error("nil connection accepted")
	}
	pool.Close()
	if _, _, err := b.Get(t.Context(), "k"); err == nil {
		t.Error("get on a closed pool succeeded")
	}
}

// A second process (a new pool on the same schema) answers from the cache
// without calling the model.
func TestPostgresRerunMakesNoCalls(t *testing.T) {
	dsn := pgtest.SchemaDSN(t)
	run := func() (*counting, []string) {
		pool, err := pgxpool.New(t.Context(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		b, err := cache.OpenPostgres(t.Context(), pool)
		if err != nil {
			t.Fatal(err)
		}
		inner := &counting{}
		c := cache.New(inner, b, cache.Options{Model: "m"})
		var out []string
		for _, req := range requests() {
			resp, err := c.Complete(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, resp.Content)
		}
		return inner, out
	}
	first, want := run()
	if n := first.calls.Load(); n != int64(len(want)) {
		t.Fatalf("first run made %d calls, want %d", n, len(want))
	}
	second, got := run()
	if n := second.calls.Load(); n != 0 {
		t.Errorf("rerun made %d calls to the model", n)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("rerun reply %d = %q, want %q", i, got[i], want[i])
		}
	}
}

func TestPostgresForget(t *testing.T) {
	b, err := cache.OpenPostgres(t.Context(), openPool(t))
	if err != nil {
		t.Fatal(err)
	}
	testForget(t, b)
}
