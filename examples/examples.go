// Package examples ships the example conversation used by `higmem demo`
// and by tests: two friends talking over four sessions, with questions whose
// evidence turns are known. It was written for higmem; it is not LoCoMo data.
package examples

import _ "embed"

// Conversation is examples/conversation.json: {"turns": [...], "questions":
// [...]} in the simple ingest format documented in README.md.
//
//go:embed conversation.json
var Conversation []byte
