// Package pgtest gives tests a PostgreSQL schema of their own on the server
// named by the environment variable HIGMEM_TEST_POSTGRES (a DSN, such as
// scripts/pg-test-server.sh prints). Without it, tests that need
// PostgreSQL skip; with it, they never skip: a server that cannot be
// reached fails them, so that CI cannot pass without running them.
//
// Only tests read the variable; library code never does.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvVar names the variable holding the test server's DSN.
const EnvVar = "HIGMEM_TEST_POSTGRES"

// Enabled reports whether EnvVar names a test server: PostgreSQL tests run.
func Enabled() bool { return os.Getenv(EnvVar) != "" }

// Main runs a test binary's tests (call it from TestMain). Without a
// server it prints one line saying the PostgreSQL tests skip and how to
// run them; with one, it fails at once when the server cannot be reached.
func Main(m *testing.M) {
	Check()
	os.Exit(m.Run())
}

// Check is Main's check of the server, for a package whose TestMain does
// more: it says once that PostgreSQL tests skip when EnvVar is not set, and
// exits when it is set but the server cannot be used.
func Check() {
	dsn := os.Getenv(EnvVar)
	if dsn == "" {
		fmt.Fprintf(os.Stderr, "pgtest: %s not set: PostgreSQL tests skip (start a server with scripts/pg-test-server.sh start)\n", EnvVar)
	} else if err := ping(dsn); err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: %s is set but the server cannot be used: %v\n", EnvVar, err)
		os.Exit(1)
	}
}

func ping(dsn string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return conn.Ping(ctx)
}

// DSN returns the test server's DSN, skipping t when there is none.
func DSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(EnvVar)
	if dsn == "" {
		t.Skipf("%s not set (PostgreSQL tests skip; see scripts/pg-test-server.sh)", EnvVar)
	}
	return dsn
}

var mu sync.Mutex

// Schema creates a new, empty schema on the test server and drops it
// (with everything in it) when t ends. It returns the server's DSN and
// the schema's name. It skips t when there is no server.
func Schema(t testing.TB) (dsn, schema string) {
	t.Helper()
	dsn = DSN(t)
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema = "test_" + hex.EncodeToString(b[:])
	if err := exec(dsn, `CREATE SCHEMA `+schema); err != nil {
		t.Fatalf("pgtest: creating schema: %v", err)
	}
	t.Cleanup(func() {
		if err := exec(dsn, `DROP SCHEMA `+schema+` CASCADE`); err != nil {
			t.Errorf("pgtest: dropping schema %s: %v", schema, err)
		}
	})
	return dsn, schema
}

// SchemaDSN is Schema, returning a DSN whose connections use the new
// schema (its search_path), for code that takes only a DSN, such as the
// CLI's --db.
func SchemaDSN(t testing.TB) string {
	t.Helper()
	dsn, schema := Schema(t)
	return WithSearchPath(t, dsn, schema)
}

// WithSearchPath returns dsn (a URL) with its search_path set to schema.
func WithSearchPath(t testing.TB, dsn, schema string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil || !strings.HasPrefix(u.Scheme, "postgres") {
		t.Fatalf("pgtest: %s must be a postgres:// URL", EnvVar)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

func exec(dsn, sql string) error {
	mu.Lock()
	defer mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}
