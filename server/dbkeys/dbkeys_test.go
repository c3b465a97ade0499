package dbkeys_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/internal/pgtest"
	"github.com/higmem/higmem/server"
	"github.com/higmem/higmem/server/dbkeys"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func openTable(t *testing.T) *dbkeys.Table {
	t.Helper()
	pool, err := pgxpool.New(t.Context(), pgtest.SchemaDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	tab, err := dbkeys.Open(t.Context(), pool)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func newKey(t *testing.T, name string, users ...string) (string, server.Key) {
	t.Helper()
	secret, k, err := server.NewKey(name, users)
	if err != nil {
		t.Fatal(err)
	}
	return secret, k
}

func TestTable(t *testing.T) {
	tab := openTable(t)
	_, alice := newKey(t, "alice-laptop", "alice")
	_, all := newKey(t, "ci", server.AllUsers)
	for _, k := range []server.Key{alice, all} {
		if err := tab.Add(t.Context(), k); err != nil {
			t.Fatal(err)
		}
	}
	dup := all
	dup.Users = []string{"bob"}
	if err := tab.Add(t.Context(), dup); !errors.Is(err, dbkeys.ErrExists) {
		t.Errorf("Add of a duplicate name = %v, want ErrExists", err)
	}
	bad := server.Key{Name: "bad", SHA256: "not a hash", Users: []string{"x"}}
	if err := tab.Add(t.Context(), bad); !errors.Is(err, server.ErrBadKeys) {
		t.Errorf("Add of a bad hash = %v, want ErrBadKeys", err)
	}
	es, err := tab.List(t.Context())
	if err != nil || len(es) != 2 || es[0].Name != "alice-laptop" || es[1].Name != "ci" || es[0].CreatedAt.IsZero() {
		t.Fatalf("List = %+v, %v", es, err)
	}
	if es[0].SHA256 != alice.SHA256 || len(es[0].Users) != 1 || es[0].Users[0] != "alice" {
		t.Errorf("stored key %+v, want %+v", es[0].Key, alice)
	}
	found, err := tab.Revoke(t.Context(), "ci")
	if err != nil || !found {
		t.Errorf("Revoke = %v, %v", found, err)
	}
	if found, _ := tab.Revoke(t.Context(), "ci"); found {
		t.Error("second Revoke found the key")
	}
	ks, err := tab.LoadKeys(t.Context())
	if err != nil || ks.Len() != 1 {
		t.Fatalf("LoadKeys = %d keys, %v; want 1", ks.Len(), err)
	}
}

// status sends GET /v1/stats for user with key and returns the status.
func status(t *testing.T, url, key, user string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", url+"/v1/stats?user_id="+user, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Two servers on one key table: a key added through one table handle
// works on both at once; a revoked one stops working on both after their
// next reload.
func TestServersShareKeys(t *testing.T) {
	tab := openTable(t)
	first, k1 := newKey(t, "first", "alice")
	if err := tab.Add(t.Context(), k1); err != nil {
		t.Fatal(err)
	}
	var urls []string
	var servers []*server.Server
	for range 2 {
		mem, err := higmem.Open(t.Context(), higmem.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = mem.Close() })
		keys, err := tab.LoadKeys(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		s := server.New(mem, server.Options{Keys: keys, KeySource: tab})
		ts := httptest.NewServer(s)
		t.Cleanup(func() {
			_ = s.Shutdown(context.Background())
			ts.Close()
		})
		urls = append(urls, ts.URL)
		servers = append(servers, s)
	}
	second, k2 := newKey(t, "second", "bob")
	if err := tab.Add(t.Context(), k2); err != nil {
		t.Fatal(err)
	}
	for i, url := range urls {
		if got := status(t, url, first, "alice"); got != http.StatusOK {
			t.Errorf("server %d: first key: status %d, want 200", i, got)
		}
		if got := status(t, url, first, "bob"); got != http.StatusForbidden {
			t.Errorf("server %d: first key on bob: status %d, want 403", i, got)
		}
		if got := status(t, url, second, "bob"); got != http.StatusOK {
			t.Errorf("server %d: key added after start: status %d, want 200", i, got)
		}
	}
	if _, err := tab.Revoke(t.Context(), "first"); err != nil {
		t.Fatal(err)
	}
	for i, s := range servers {
		if err := s.ReloadKeys(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := status(t, urls[i], first, "alice"); got != http.StatusUnauthorized {
			t.Errorf("server %d: revoked key: status %d, want 401", i, got)
		}
		if got := status(t, urls[i], second, "bob"); got != http.StatusOK {
			t.Errorf("server %d: remaining key: status %d, want 200", i, got)
		}
	}
}
