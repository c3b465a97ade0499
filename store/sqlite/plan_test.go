package sqlite

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// fullScan matches a query-plan line that reads a whole table of the
// store, or a temporary sort.
var fullScan = regexp.MustCompile(`^SCAN (turns|annotations|events|links|vectors|history|profile_records|t|a)\b|USE TEMP B-TREE`)

// param matches a query parameter.
var param = regexp.MustCompile(`\?\d*`)

// TestQueryPlans checks that every query the store runs finds its rows
// through an index: no full scan of a store table and no sort outside an
// index, except a sort of the rows of an id list or of the rows the
// journal found changed. (Spaces scans the small
// spaces table by design.)
func TestQueryPlans(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "plan.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, q := range writeQueries() {
		if strings.HasPrefix(q, "INSERT") {
			continue // single-row writes by primary key
		}
		// Count the parameters: each bare ?, plus each distinct ?N.
		n := 0
		numbered := map[string]bool{}
		for _, m := range param.FindAllString(q, -1) {
			if m == "?" {
				n++
			} else if !numbered[m] {
				numbered[m] = true
				n++
			}
		}
		args := make([]any, n)
		for i := range args {
			args[i] = "x"
		}
		plan := queryPlan(ctx, t, s, q, args)
		for _, line := range plan {
			if strings.HasPrefix(line, "USE TEMP B-TREE FOR ORDER BY") && strings.Contains(q, "json_each") && !strings.Contains(q, "LIMIT") {
				continue // sorts only the rows of the ids given
			}
			if strings.HasPrefix(line, "USE TEMP B-TREE FOR ORDER BY") && (strings.Contains(q, "written > ?") || strings.Contains(q, "version > ?")) {
				continue // sorts only the rows the journal found changed
			}
			if fullScan.MatchString(line) {
				t.Errorf("query does not use an index:\n%s\nplan:\n  %s", q, strings.Join(plan, "\n  "))
				break
			}
		}
	}
}

// TestVectorSetsPlan checks that the query of VectorSetsInto's one pass
// reads the vectors table in its own order: no index, no sort (the rows
// come in the order they were first written, see VectorSetsInto).
func TestVectorSetsPlan(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "plan.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for n := 1; n <= maxVectorSets; n++ {
		args := make([]any, 3*n+2)
		for i := range args {
			args[i] = "x"
		}
		plan := queryPlan(ctx, t, s, qVectorSets(n), args)
		if len(plan) == 0 || plan[0] != "SCAN vectors" || strings.Contains(strings.Join(plan, "\n"), "TEMP B-TREE") {
			t.Errorf("%d sets: plan:\n  %s\nwant a scan of vectors, in rowid order", n, strings.Join(plan, "\n  "))
		}
	}
}

// queryPlan returns the lines of SQLite's query plan of q with args.
func queryPlan(ctx context.Context, t *testing.T, s *Store, q string, args []any) []string {
	t.Helper()
	rows, err := s.DB().QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatalf("EXPLAIN %s: %v", q, err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan
}
