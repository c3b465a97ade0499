package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/higmem/higmem/embed"
	"github.com/higmem/higmem/embed/hashing"
	"github.com/higmem/higmem/embed/minilm"
	"github.com/higmem/higmem/store"
)

// localModel is an embedding model that higmem fetches and runs itself
// (embed/minilm), one that --embedder auto may choose.
type localModel struct {
	// name is the model's directory under the models root, the --model
	// of `higmem models fetch`, and the name in its vectors' embedder IDs.
	name string
	// flag is the --embedder value that names it.
	flag string
	// int8 runs the model's linear layers in int8 (minilm.PrecisionInt8)
	// from the same float file; its embedder IDs end in ":int8s".
	int8 bool
}

var (
	// modelE5 is the default embedder of a new database: it beats MiniLM
	// on every dev file (BENCHMARKS.md, issue 15).
	modelE5 = localModel{name: minilm.E5ModelName, flag: "e5"}
	// modelE5Int8 is e5-small-v2 with int8 linear layers: the same files,
	// about 1.8 times as many texts per CPU second (BENCHMARKS.md, issue
	// 34), and vectors of an ID of their own.
	modelE5Int8 = localModel{name: minilm.E5ModelName, flag: "e5-int8", int8: true}
	modelMiniLM = localModel{name: minilm.ModelName, flag: "minilm"}
	// localModels are the models auto knows, the preferred first.
	localModels = []localModel{modelE5, modelE5Int8, modelMiniLM}
)

// dir is the model's directory under the models root.
func (lm localModel) dir(root string) string {
	if lm.name == minilm.ModelName {
		return minilm.ModelDir(root)
	}
	return minilm.E5ModelDir(root)
}

// String names the model as messages do: its name, with " in int8" for
// the int8 one.
func (lm localModel) String() string {
	if lm.int8 {
		return lm.name + " in int8"
	}
	return lm.name
}

// options are the minilm.Options that load the model.
func (lm localModel) options() minilm.Options {
	if lm.int8 {
		return minilm.Options{Precision: minilm.PrecisionInt8}
	}
	return minilm.Options{}
}

// made reports whether a vector stored under embedder id was made by this
// model: minilm.Model's IDs are "minilm:" + name + ":" + settings, ending
// in ":int8s" when a float file runs in int8 (":int8" before its layers
// were smoothed: the int8 model claims those vectors too, and re-embeds
// them under its own ID). The float and the int8 model never claim each
// other's vectors.
func (lm localModel) made(id string) bool {
	int8 := strings.HasSuffix(id, ":int8s") || strings.HasSuffix(id, ":int8")
	return strings.HasPrefix(id, "minilm:"+lm.name+":") && int8 == lm.int8
}

// modelOf returns the local model that made vectors stored under embedder
// id, or false.
func modelOf(id string) (localModel, bool) {
	for _, lm := range localModels {
		if lm.made(id) {
			return lm, true
		}
	}
	return localModel{}, false
}

// openEmbedder returns the embedder the --embedder flag names (nil: BM25
// only). st is the database the memory keeps its vectors in, which "auto"
// reads to keep the embedder they were made with; nil when the memories
// start empty elsewhere (eval builds its memories in memory).
func (a *app) openEmbedder(ctx context.Context, st store.Store) (embed.Embedder, error) {
	switch a.embedder {
	case "none":
		return nil, nil
	case "hashing":
		return hashing.New(0), nil
	case "auto":
		return a.autoEmbedder(ctx, st)
	}
	for _, lm := range localModels {
		if a.embedder == lm.flag {
			m, err := a.loadModel(ctx, lm, false)
			if errors.Is(err, embed.ErrNoModel) {
				return nil, fmt.Errorf("%s is not in %s: run `higmem models fetch --model %s` (%w)", lm.name, a.modelsDir, lm.name, embed.ErrNoModel)
			} else if err != nil {
				return nil, err
			}
			return m, nil
		}
	}
	return nil, fmt.Errorf("unknown --embedder %q (want auto, e5, e5-int8, minilm, hashing or none)", a.embedder)
}

// loadModel loads a local model from the models directory, fetching it
// first when it is missing and fetch is set (the demo does). A failed fetch
// is an error wrapping embed.ErrNoModel.
func (a *app) loadModel(ctx context.Context, lm localModel, fetch bool) (*minilm.Model, error) {
	m, err := loadMinilm(lm.dir(a.modelsDir), lm.options())
	if err == nil || !errors.Is(err, embed.ErrNoModel) || !fetch {
		return m, err
	}
	if err := a.fetchLocal(ctx, lm); err != nil {
		return nil, fmt.Errorf("could not fetch %s: %v (%w)", lm.name, err, embed.ErrNoModel)
	}
	return loadMinilm(lm.dir(a.modelsDir), lm.options())
}

// loadMinilm loads a local model for loadModel. The package's tests put a
// cache of the models they loaded in its place: each command of a test
// loads its model again, which takes seconds under the race detector.
var loadMinilm = minilm.Load

// autoEmbedder is --embedder auto. A database that holds turn vectors
// keeps the model that made them (storeEmbedder): changing it would
// re-embed every stored turn, so a missing model is an error that says what
// to fetch, never a silent switch. A database without vectors (new,
// BM25-only so far, or filled by import) gets e5-small-v2, else
// all-MiniLM-L6-v2 (saying that e5-small-v2 is the default), else runs on
// BM25 only, saying so. docs/EMBEDDERS.md tells users the same.
func (a *app) autoEmbedder(ctx context.Context, st store.Store) (embed.Embedder, error) {
	if st != nil {
		made, err := turnEmbedders(ctx, st)
		if err != nil {
			return nil, fmt.Errorf("--embedder auto: reading which embedder made the database's vectors: %w", err)
		}
		if len(made) > 0 {
			return a.storeEmbedder(ctx, made)
		}
	}
	m, err := a.loadModel(ctx, modelE5, a.fetchModels)
	if err == nil {
		return m, nil
	} else if !errors.Is(err, embed.ErrNoModel) {
		return nil, err
	}
	why := fmt.Sprintf("%s, the default embedder, is not in %s", modelE5.name, a.modelsDir)
	if a.fetchModels {
		why = err.Error()
	}
	if m, err = a.loadModel(ctx, modelMiniLM, false); err == nil {
		keeps := ""
		if st != nil {
			keeps = ", which this database then keeps"
		}
		a.warnOnce("embed", "%s: using %s%s (run `higmem models fetch` for %s)", why, modelMiniLM.name, keeps, modelE5.name)
		return m, nil
	} else if !errors.Is(err, embed.ErrNoModel) {
		return nil, err
	}
	if a.fetchModels {
		a.warnOnce("embed", "%s; running on BM25 only", why)
	} else {
		a.warnOnce("embed", "embedding model not found in %s (run `higmem models fetch`); retrieval runs on BM25 only", a.modelsDir)
	}
	return nil, nil
}

// storeEmbedder chooses, for auto, among the embedders that made a
// database's turn vectors (made, the first having made the most): that
// one, when it is a local model.
func (a *app) storeEmbedder(ctx context.Context, made []madeBy) (embed.Embedder, error) {
	top := made[0]
	lm, ok := modelOf(top.id)
	if !ok {
		keep := ""
		if strings.HasPrefix(top.id, "hashing:") {
			keep = "hashing to keep them, or "
		}
		return nil, fmt.Errorf("this database's turn vectors were made by embedder %q, which --embedder auto does not choose: "+
			"pass --embedder %se5, e5-int8 or minilm, which re-embed every stored turn, or none (BM25 only)", top.id, keep)
	}
	if len(made) > 1 {
		var others []string
		for _, o := range made[1:] {
			others = append(others, o.String())
		}
		a.warnOnce("embed-mixed", "this database holds turn vectors of several embedders: %s, and %s; --embedder auto uses %s, "+
			"which made the most, and re-embeds the other spaces when they are next used (pass --embedder to choose)",
			top, strings.Join(others, ", "), lm)
	}
	m, err := a.loadModel(ctx, lm, a.fetchModels)
	if errors.Is(err, embed.ErrNoModel) {
		fetched := ""
		if a.fetchModels {
			fetched = ", and " + err.Error()
		}
		return nil, fmt.Errorf("this database's vectors were made by %s, which is not in %s%s: run `higmem models fetch --model %s` "+
			"(another --embedder re-embeds every stored turn; none runs on BM25 only) (%w)", lm, a.modelsDir, fetched, lm.name, embed.ErrNoModel)
	}
	if err != nil {
		return nil, err
	}
	if m.ID() != top.id {
		a.warnOnce("embed-settings", "this database's vectors were made by %s, with other settings than %s: they are re-embedded when next used",
			top.id, m.ID())
	}
	return m, nil
}

// madeBy is one embedder of a database's turn vectors.
type madeBy struct {
	id     string
	spaces int // spaces holding turn vectors it made
	// turns counts the turns of those spaces; only when the database
	// names more than one embedder (a space holding vectors of two counts
	// for both).
	turns int
}

func (m madeBy) String() string {
	if m.turns == 0 {
		return fmt.Sprintf("%s (%d spaces)", m.id, m.spaces)
	}
	return fmt.Sprintf("%s (%d spaces, %d turns)", m.id, m.spaces, m.turns)
}

// turnEmbedders lists the embedders that made the turn vectors of st's
// spaces, the one whose spaces hold the most turns first; on a tie, a local
// model before another embedder, e5-small-v2 before MiniLM. None when st
// holds no turn vector.
func turnEmbedders(ctx context.Context, st store.Store) ([]madeBy, error) {
	el, ok := st.(store.EmbedderLister)
	if !ok {
		return nil, errors.New("the store cannot list the embedders of its vectors (store.EmbedderLister): pass --embedder")
	}
	sps, err := st.Spaces(ctx)
	if err != nil {
		return nil, err
	}
	byID := map[string]*madeBy{}
	spaceIDs := make([][]string, len(sps))
	for i, sp := range sps {
		ids, err := el.Embedders(ctx, sp, store.VectorTurn)
		if err != nil {
			return nil, err
		}
		spaceIDs[i] = ids
		for _, id := range ids {
			if byID[id] == nil {
				byID[id] = &madeBy{id: id}
			}
			byID[id].spaces++
		}
	}
	if len(byID) > 1 {
		// Several: counting turns tells which one re-embeds the least.
		for i, sp := range sps {
			if len(spaceIDs[i]) == 0 {
				continue
			}
			s, err := st.Stats(ctx, sp)
			if err != nil {
				return nil, err
			}
			for _, id := range spaceIDs[i] {
				byID[id].turns += s.Turns
			}
		}
	}
	out := make([]madeBy, 0, len(byID))
	for _, m := range byID {
		out = append(out, *m)
	}
	rank := func(id string) int {
		for i, lm := range localModels {
			if lm.made(id) {
				return i
			}
		}
		return len(localModels)
	}
	slices.SortFunc(out, func(x, y madeBy) int {
		return cmp.Or(cmp.Compare(y.turns, x.turns), cmp.Compare(rank(x.id), rank(y.id)), cmp.Compare(y.spaces, x.spaces), strings.Compare(x.id, y.id))
	})
	return out, nil
}
