package higmem_test

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The import rules of docs/ARCHITECTURE.md ("Who may import whom"), over
// package paths relative to the module ("" is the root package). They
// apply to production code: test files may import what their tests need.

// helpers are the internal packages the library is built from; they import
// only each other.
var helpers = []string{
	"internal/bm25", "internal/httpx", "internal/jsonx", "internal/memcheck", "internal/offline", "internal/parallel", "internal/passage", "internal/profile",
	"internal/prompt", "internal/rank", "internal/temporal", "internal/textnorm", "internal/vec",
}

// parts are internal packages the library is built from that read the
// store's records: they import internal helpers and store, never the root.
var parts = []string{"internal/exportfmt", "internal/heapsize", "internal/history", "internal/passindex", "internal/profilerec", "internal/redact", "internal/rules", "internal/storevec"}

// interfaces are the small packages backends implement.
var interfaces = []string{"llm", "embed", "store"}

// layer names the layer of a package.
func layer(p string) string {
	switch {
	case p == "":
		return "root"
	case slices.Contains(interfaces, p):
		return "interface"
	case slices.Contains(interfaces, strings.SplitN(p, "/", 2)[0]):
		return "implementation"
	case slices.Contains(helpers, p):
		return "helper"
	case slices.Contains(parts, p):
		return "part"
	}
	return "application" // api, server, internal/cli, internal/bench, eval, cmd, ...
}

// library reports whether p is part of the library: what a Go program
// importing higmem links.
func library(p string) bool { return layer(p) != "application" }

// testSupport reports whether p holds test helpers (its name ends in
// "test": llm/llmtest, store/storetest, internal/pgtest, ...): tests import
// it, production code never does.
func testSupport(p string) bool { return strings.HasSuffix(path.Base(p), "test") }

// testingPackage reports whether the standard package imp is test code.
func testingPackage(imp string) bool {
	return imp == "testing" || strings.HasPrefix(imp, "testing/") || imp == "net/http/httptest"
}

// importRule reports why package p may not import q (both module-relative),
// or "" when it may.
func importRule(p, q string) string {
	lp, lq := layer(p), layer(q)
	switch {
	case testSupport(q) && !testSupport(p):
		return "production code never imports a test helper package (*test); fakes it runs live in llm/llmfake and the like"
	case research(q) && !research(p):
		return "research code (internal/research) is imported by no production package"
	case p == "internal/offline" && (lq == "root" || lq == "application"):
		return "internal/offline imports neither the root package nor programs: the root hands it plain inputs"
	case lp == "helper" && lq != "helper":
		return "internal helpers import only other internal helpers"
	case lp == "part" && lq != "helper" && lq != "part" && q != "store":
		return "engine parts (internal/rules, internal/redact, ...) import only internal helpers, each other and store, never the root"
	case lp == "interface" && lq != "helper":
		return "interface packages import only internal helpers"
	case lp == "implementation":
		own := strings.SplitN(p, "/", 2)[0]
		sibling := testSupport(p) && strings.HasPrefix(q, own+"/") // llm/llmtest serves llm/llmfake
		if q != own && lq != "helper" && !sibling {
			return "implementations import only their interface package (" + own + ") and internal helpers"
		}
	case lp == "root" && lq == "implementation" && q != "store/memstore":
		return "the root package imports no implementation (only store/memstore, the store of the zero Options)"
	case lp == "root" && lq == "application":
		return "the library never imports the CLI, the server, the API client, the evaluation or the benchmarks"
	case p == "server" && (strings.HasPrefix(q, "internal/cli") || strings.HasPrefix(q, "eval")):
		return "the server never imports the CLI or the evaluation"
	case p == "api" && (q == "server" || strings.HasPrefix(q, "internal/")):
		return "the API client imports neither the server nor internal packages"
	case strings.HasPrefix(p, "cmd/") && q != "internal/cli":
		return "commands only call internal/cli"
	}
	if q == "internal/envconfig" && p != "internal/cli" && p != "server" && p != "internal/envconfig" {
		return "only the CLI and the server read the environment (internal/envconfig)"
	}
	return ""
}

// research reports whether p is research code: experiments, fits and
// sweeps (internal/research).
func research(p string) bool {
	return p == "internal/research" || strings.HasPrefix(p, "internal/research/")
}

// pkgInfo is what the rules read of one package.
type pkgInfo struct {
	path    string   // module-relative
	imports []string // module-relative, production files only
	// testing lists the standard test packages (testing, httptest) the
	// production files import.
	testing []string
	// env lists the production files that read the environment.
	env []string
}

// modulePackages lists the packages below root, whose module path is mod.
func modulePackages(t *testing.T, root, mod string) []pkgInfo {
	t.Helper()
	var out []pkgInfo
	err := filepath.WalkDir(root, func(dir string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); dir != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		if dir != root {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
		}
		bp, err := build.Default.ImportDir(dir, 0)
		if _, none := err.(*build.NoGoError); none {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
		rel, _ := filepath.Rel(root, dir)
		p := pkgInfo{path: filepath.ToSlash(rel)}
		if p.path == "." {
			p.path = ""
		}
		for _, imp := range bp.Imports {
			if imp == mod || strings.HasPrefix(imp, mod+"/") {
				p.imports = append(p.imports, strings.TrimPrefix(strings.TrimPrefix(imp, mod), "/"))
			} else if testingPackage(imp) {
				p.testing = append(p.testing, imp)
			}
		}
		for _, f := range bp.GoFiles {
			if readsEnv(t, filepath.Join(dir, f)) {
				p.env = append(p.env, path.Join(p.path, f))
			}
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// readsEnv reports whether a Go file calls os.Getenv, os.LookupEnv or
// os.Environ.
func readsEnv(t *testing.T, file string) bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		if s, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := s.X.(*ast.Ident); ok && x.Name == "os" && (s.Sel.Name == "Getenv" || s.Sel.Name == "LookupEnv" || s.Sel.Name == "Environ") {
				found = true
			}
		}
		return !found
	})
	return found
}

// violations returns every broken rule among pkgs.
func violations(pkgs []pkgInfo) []string {
	var out []string
	for _, p := range pkgs {
		for _, q := range p.imports {
			if why := importRule(p.path, q); why != "" {
				out = append(out, fmt.Sprintf("%q imports %q: %s", p.path, q, why))
			}
		}
		if !testSupport(p.path) {
			for _, imp := range p.testing {
				out = append(out, fmt.Sprintf("%q imports %q: production code never imports test code", p.path, imp))
			}
		}
		if library(p.path) {
			for _, f := range p.env {
				out = append(out, fmt.Sprintf("%s reads the environment: library code never does (internal/envconfig does, for the CLI and the server)", f))
			}
		}
	}
	return out
}

// TestImportRules checks the module against the rules of
// docs/ARCHITECTURE.md.
func TestImportRules(t *testing.T) {
	data, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	mod, _, _ := strings.Cut(strings.TrimPrefix(strings.SplitN(string(data), "\n", 2)[0], "module "), " ")
	pkgs := modulePackages(t, ".", strings.TrimSpace(mod))
	seen := map[string]bool{}
	for _, p := range pkgs {
		seen[p.path] = true
	}
	for _, want := range slices.Concat([]string{"", "server", "internal/cli", "store/sqlite"}, helpers, parts, interfaces) {
		if !seen[want] {
			t.Fatalf("package %q not found: the walk missed the module (found %d packages)", want, len(pkgs))
		}
	}
	for _, v := range violations(pkgs) {
		t.Error(v)
	}
}

// TestRootTestsReadNoEnvironment checks that the root package's tests read
// no environment: their knobs are test flags (flags_test.go), and research
// measurements live in internal/research.
func TestRootTestsReadNoEnvironment(t *testing.T) {
	files, err := filepath.Glob("*_test.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test files found (%v)", err)
	}
	for _, f := range files {
		if readsEnv(t, f) {
			t.Errorf("%s reads the environment", f)
		}
	}
	if !readsEnv(t, "internal/pgtest/pgtest.go") {
		t.Error("readsEnv misses os.Getenv in internal/pgtest/pgtest.go")
	}
}

// TestImportRulesCatchViolations feeds the rules packages that break each
// of them, so that a rule that cannot fail shows here.
func TestImportRulesCatchViolations(t *testing.T) {
	bad := []pkgInfo{
		{path: "", imports: []string{"store/sqlite"}},
		{path: "", imports: []string{"internal/cli"}},
		{path: "", imports: []string{"server"}},
		{path: "store", imports: []string{"llm"}},
		{path: "store/sqlite", imports: []string{""}},
		{path: "store/sqlite", imports: []string{"llm"}},
		{path: "llm/openai", imports: []string{"embed/openai"}},
		{path: "internal/rank", imports: []string{"store"}},
		{path: "server", imports: []string{"internal/cli"}},
		{path: "api", imports: []string{"server"}},
		{path: "cmd/higmem", imports: []string{"server"}},
		{path: "eval/locomo", imports: []string{"internal/envconfig"}},
		{path: "embed/minilm", env: []string{"embed/minilm/load.go"}},
		{path: "internal/cli", imports: []string{"llm/llmtest"}},
		{path: "eval/locomo/harness", imports: []string{"eval/amem/amemtest"}},
		{path: "internal/bench", testing: []string{"testing"}},
		{path: "eval/locomo/harness", testing: []string{"net/http/httptest"}},
		{path: "llm/llmfake", imports: []string{"llm/openai"}},
		{path: "internal/offline", imports: []string{""}},
		{path: "internal/offline", imports: []string{"internal/cli"}},
		{path: "", imports: []string{"internal/research"}},
		{path: "internal/cli", imports: []string{"internal/research/cmd/fitstage"}},
		{path: "internal/rules", imports: []string{""}},
		{path: "internal/rules", imports: []string{"llm"}},
		{path: "internal/rules", imports: []string{"store/sqlite"}},
		{path: "internal/offline", imports: []string{"internal/rules"}},
		{path: "internal/passindex", imports: []string{""}},
		{path: "internal/passindex", imports: []string{"embed"}},
	}
	for _, p := range bad {
		if v := violations([]pkgInfo{p}); len(v) != 1 {
			t.Errorf("%+v: %d violations %q, want 1", p, len(v), v)
		}
	}
	good := []pkgInfo{
		{path: "", imports: []string{"store", "store/memstore", "internal/rank", "llm", "embed"}},
		{path: "store/sqlite", imports: []string{"store"}},
		{path: "llm/openai", imports: []string{"llm", "internal/httpx"}},
		{path: "internal/rank", imports: []string{"internal/vec"}},
		{path: "server", imports: []string{"", "api", "store"}},
		{path: "internal/cli", imports: []string{"server", "internal/envconfig", "store/sqlite"}, env: []string{"internal/cli/root.go"}},
		{path: "internal/cli", imports: []string{"llm/llmfake"}},
		{path: "llm/llmtest", imports: []string{"llm", "llm/llmfake"}, testing: []string{"testing", "net/http/httptest"}},
		{path: "internal/pgtest", testing: []string{"testing"}},
		{path: "", imports: []string{"internal/offline"}},
		{path: "internal/offline", imports: []string{"internal/rank", "internal/vec"}},
		{path: "internal/research/cmd/fitstage", imports: []string{"internal/research", "internal/offline", ""}},
		{path: "", imports: []string{"internal/rules"}},
		{path: "internal/rules", imports: []string{"store", "internal/offline", "internal/textnorm"}},
		{path: "internal/passindex", imports: []string{"store", "internal/bm25", "internal/passage", "internal/rules"}},
	}
	for _, p := range good {
		if v := violations([]pkgInfo{p}); len(v) != 0 {
			t.Errorf("%+v: violations %q, want none", p, v)
		}
	}
}
