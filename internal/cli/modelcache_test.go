package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/higmem/higmem/embed/minilm"
)

func init() { loadMinilm = cachedMinilm }

// modelCache holds the models the tests loaded, by what was loaded: the
// model's directory (links resolved: realModelsRoot links the fetched
// models into directories of each test's), its name, the options and the
// name, size and time of each file in it, so that a model whose files
// changed or went is loaded again.
var modelCache struct {
	sync.Mutex
	m map[string]*cachedModel
}

type cachedModel struct {
	once sync.Once
	m    *minilm.Model
	err  error
}

// cachedMinilm is minilm.Load, loading each model once per test run.
// Errors are not kept: a missing model is quick to find missing.
func cachedMinilm(dir string, opts minilm.Options) (*minilm.Model, error) {
	key, ok := modelKey(dir, opts)
	if !ok {
		return minilm.Load(dir, opts)
	}
	modelCache.Lock()
	if modelCache.m == nil {
		modelCache.m = map[string]*cachedModel{}
	}
	c := modelCache.m[key]
	if c == nil {
		c = &cachedModel{}
		modelCache.m[key] = c
	}
	modelCache.Unlock()
	c.once.Do(func() { c.m, c.err = minilm.Load(dir, opts) })
	if c.err != nil {
		modelCache.Lock()
		if modelCache.m[key] == c {
			delete(modelCache.m, key)
		}
		modelCache.Unlock()
		return nil, c.err
	}
	return c.m, nil
}

// modelKey returns the cache key of loading dir with opts, or false when
// dir cannot be read (minilm.Load then says why).
func modelKey(dir string, opts minilm.Options) (string, bool) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", false
	}
	entries, err := os.ReadDir(real)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\x00%s\x00%+v", real, filepath.Base(filepath.Clean(dir)), opts)
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			return "", false
		}
		fmt.Fprintf(&b, "\x00%s %d %d %v", e.Name(), fi.Size(), fi.ModTime().UnixNano(), fi.Mode())
	}
	return b.String(), true
}
