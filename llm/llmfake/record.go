//go:build llmfakerecord

package llmfake

import (
	"encoding/json"
	"os"
	"sync"

	"github.com/higmem/higmem/llm"
)

// RecordEnv names the environment variable that, in builds with the
// llmfakerecord tag, gives the file to which every request a Scripted
// model receives is appended as one JSON line {"kind", "messages"}:
//
//	HIGMEM_LLMFAKE_RECORD=/tmp/prompts.jsonl go test -tags llmfakerecord .
//
// The sameness tests (scripted_same_test.go) replay such a file through
// the old and the new implementation.
const RecordEnv = "HIGMEM_LLMFAKE_RECORD"

// recorded is one line of a record file.
type recorded struct {
	Kind     string        `json:"kind"`
	Messages []llm.Message `json:"messages"`
}

func init() {
	path := os.Getenv(RecordEnv)
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		panic("llmfake: " + RecordEnv + ": " + err.Error())
	}
	var mu sync.Mutex
	recordRequest = func(req llm.Request) {
		b, err := json.Marshal(recorded{Kind: req.SchemaName, Messages: req.Messages})
		if err != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		_, _ = f.Write(append(b, '\n'))
	}
}
