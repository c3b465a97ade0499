package minilm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrBadConfig is returned when a model's config.json describes something
// this package cannot run.
var ErrBadConfig = errors.New("minilm: unsupported model config")

// bertConfig holds the fields of a Hugging Face BERT config.json that the
// forward pass needs.
type bertConfig struct {
	HiddenSize            int     `json:"hidden_size"`
	NumHiddenLayers       int     `json:"num_hidden_layers"`
	NumAttentionHeads     int     `json:"num_attention_heads"`
	IntermediateSize      int     `json:"intermediate_size"`
	MaxPositionEmbeddings int     `json:"max_position_embeddings"`
	LayerNormEps          float64 `json:"layer_norm_eps"`
	VocabSize             int     `json:"vocab_size"`
	TypeVocabSize         int     `json:"type_vocab_size"`
	HiddenAct             string  `json:"hidden_act"`
	PositionEmbeddingType string  `json:"position_embedding_type"`
	ModelType             string  `json:"model_type"`
}

func (c *bertConfig) validate() error {
	switch {
	case c.HiddenSize <= 0 || c.NumHiddenLayers <= 0 || c.NumAttentionHeads <= 0 ||
		c.IntermediateSize <= 0 || c.MaxPositionEmbeddings <= 0 || c.VocabSize <= 0:
		return fmt.Errorf("%w: missing or non-positive sizes in config.json", ErrBadConfig)
	case c.HiddenSize%c.NumAttentionHeads != 0:
		return fmt.Errorf("%w: hidden_size %d not divisible by %d heads", ErrBadConfig, c.HiddenSize, c.NumAttentionHeads)
	case c.HiddenAct != "" && c.HiddenAct != "gelu":
		return fmt.Errorf("%w: hidden_act %q (only \"gelu\")", ErrBadConfig, c.HiddenAct)
	case c.PositionEmbeddingType != "" && c.PositionEmbeddingType != "absolute":
		return fmt.Errorf("%w: position_embedding_type %q (only \"absolute\")", ErrBadConfig, c.PositionEmbeddingType)
	case c.ModelType != "" && c.ModelType != "bert":
		return fmt.Errorf("%w: model_type %q (only \"bert\")", ErrBadConfig, c.ModelType)
	}
	if c.LayerNormEps == 0 {
		c.LayerNormEps = 1e-12
	}
	return nil
}

// stConfig gathers the sentence-transformers side of a model directory:
// sentence_bert_config.json, tokenizer_config.json and 1_Pooling/config.json.
// Every file is optional.
type stConfig struct {
	MaxSeqLength   int  // 0 when unknown
	LowerInput     bool // sentence-transformers lower-cases the text itself
	TokenizerLower bool // the tokenizer's do_lower_case (default true)
	CLSPooling     bool
	// QueryPrompt and DocumentPrompt are config_sentence_transformers.json's
	// prompts named "query" and "document" (or "passage"): the text put
	// before a question and before a text it is matched against, for
	// models trained that way (e5's "query: " and "passage: ").
	QueryPrompt, DocumentPrompt string
}

func readSTConfig(dir string) (stConfig, error) {
	c := stConfig{TokenizerLower: true}
	var sb struct {
		MaxSeqLength int  `json:"max_seq_length"`
		DoLowerCase  bool `json:"do_lower_case"`
	}
	if ok, err := readOptionalJSON(filepath.Join(dir, "sentence_bert_config.json"), &sb); err != nil {
		return c, err
	} else if ok {
		c.MaxSeqLength, c.LowerInput = sb.MaxSeqLength, sb.DoLowerCase
	}
	var tc struct {
		DoLowerCase *bool `json:"do_lower_case"`
	}
	var cst struct {
		Prompts map[string]string `json:"prompts"`
	}
	if ok, err := readOptionalJSON(filepath.Join(dir, "config_sentence_transformers.json"), &cst); err != nil {
		return c, err
	} else if ok {
		c.QueryPrompt = cst.Prompts["query"]
		c.DocumentPrompt = cst.Prompts["document"]
		if c.DocumentPrompt == "" {
			c.DocumentPrompt = cst.Prompts["passage"]
		}
	}
	if ok, err := readOptionalJSON(filepath.Join(dir, "tokenizer_config.json"), &tc); err != nil {
		return c, err
	} else if ok && tc.DoLowerCase != nil {
		c.TokenizerLower = *tc.DoLowerCase
	}
	var pc struct {
		CLS  bool `json:"pooling_mode_cls_token"`
		Mean bool `json:"pooling_mode_mean_tokens"`
	}
	if ok, err := readOptionalJSON(filepath.Join(dir, "1_Pooling", "config.json"), &pc); err != nil {
		return c, err
	} else if ok {
		c.CLSPooling = pc.CLS && !pc.Mean
	}
	return c, nil
}

// readOptionalJSON decodes path into v, reporting false when the file does
// not exist.
func readOptionalJSON(path string, v any) (bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("minilm: reading %s: %w", path, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("minilm: parsing %s: %w", path, err)
	}
	return true, nil
}
