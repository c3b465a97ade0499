package higmem_test

import "flag"

// Knobs of the tests and benchmarks that need them; the root package's tests
// read no environment (research measurements are in internal/research).
var (
	benchTurns      = flag.String("bench-turns", "", "retrieval and cold-open benchmarks: space sizes, comma-separated (default 1000,10000)")
	benchDB         = flag.String("bench-db", "", "BenchmarkRetrieveStored: a SQLite file higmem bench built and kept")
	benchEmbedderID = flag.String("bench-embedder-id", "", "BenchmarkRetrieveStored: the id the hashing embedder takes (another model's paths)")
	benchNoStage    = flag.Bool("bench-no-stage", false, "BenchmarkRetrieveStored: set Ablations.NoStage")
	benchWarm       = flag.Bool("bench-warm", false, "BenchmarkRetrieveStored: retrieve every question once before timing (the lazy loads done first)")
	benchMode       = flag.String("bench-mode", "offline", "BenchmarkRetrieveStored: the mode (offline, or default / paper with the scripted LLM answering at once)")
	dataDir         = flag.String("data-dir", "", "the dev data directory (locomo_dev.json; default: ../shared/data, then ../../shared/data)")
	// recordURL are the servers TestRealServerReplay records from, by
	// replays' server: without one, the cassette is replayed.
	recordURL = map[string]*string{
		"llamacpp": flag.String("record-llamacpp", "", "TestRealServerReplay: record the llama.cpp cases from this server (http://127.0.0.1:8089/v1)"),
		"ollama":   flag.String("record-ollama", "", "TestRealServerReplay: record the Ollama cases from this server (http://127.0.0.1:11434/v1)"),
	}
)
