package envconfig

import (
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/higmem/higmem/llm"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestLoadEndpoints(t *testing.T) {
	tests := []struct {
		name                  string
		env                   map[string]string
		memory, answer, judge Endpoint
		configured            bool
	}{
		{
			name: "nothing: offline",
			env:  map[string]string{},
		},
		{
			name:       "OpenAI key only",
			env:        map[string]string{"OPENAI_API_KEY": "sk-1"},
			memory:     Endpoint{OpenAIBaseURL, "sk-1", "gpt-4o-mini"},
			answer:     Endpoint{OpenAIBaseURL, "sk-1", "gpt-4o-mini"},
			judge:      Endpoint{OpenAIBaseURL, "sk-1", "gpt-4o-mini"},
			configured: true,
		},
		{
			name:   "local URL without model is not configured",
			env:    map[string]string{"HIGMEM_LLM_BASE_URL": "http://localhost:11434/v1"},
			memory: Endpoint{BaseURL: "http://localhost:11434/v1"},
			answer: Endpoint{BaseURL: "http://localhost:11434/v1"},
			judge:  Endpoint{BaseURL: "http://localhost:11434/v1"},
		},
		{
			name:       "Ollama",
			env:        map[string]string{"HIGMEM_LLM_BASE_URL": "http://localhost:11434/v1", "HIGMEM_MEMORY_MODEL": "qwen2.5:7b"},
			memory:     Endpoint{"http://localhost:11434/v1", "", "qwen2.5:7b"},
			answer:     Endpoint{"http://localhost:11434/v1", "", "qwen2.5:7b"},
			judge:      Endpoint{"http://localhost:11434/v1", "", "qwen2.5:7b"},
			configured: true,
		},
		{
			name: "HIGMEM vars win over OPENAI ones",
			env: map[string]string{
				"OPENAI_BASE_URL": "http://openai-proxy/v1", "OPENAI_API_KEY": "sk-openai",
				"HIGMEM_LLM_BASE_URL": "http://vllm:8000/v1", "HIGMEM_LLM_API_KEY": "tok", "HIGMEM_MEMORY_MODEL": "m",
			},
			memory:     Endpoint{"http://vllm:8000/v1", "tok", "m"},
			answer:     Endpoint{"http://vllm:8000/v1", "tok", "m"},
			judge:      Endpoint{"http://vllm:8000/v1", "tok", "m"},
			configured: true,
		},
		{
			name: "cheap local memory, hosted answer, judge inherits answer",
			env: map[string]string{
				"HIGMEM_LLM_BASE_URL": "http://localhost:8000/v1", "HIGMEM_MEMORY_MODEL": "llama-3.1-8b",
				"HIGMEM_ANSWER_BASE_URL": "https://api.openai.com/v1", "HIGMEM_ANSWER_API_KEY": "sk-a", "HIGMEM_ANSWER_MODEL": "gpt-4o",
			},
			memory:     Endpoint{"http://localhost:8000/v1", "", "llama-3.1-8b"},
			answer:     Endpoint{"https://api.openai.com/v1", "sk-a", "gpt-4o"},
			judge:      Endpoint{"https://api.openai.com/v1", "sk-a", "gpt-4o"},
			configured: true,
		},
		{
			name: "a role on another host does not get the global key",
			env: map[string]string{
				"OPENAI_API_KEY": "sk-hosted", "HIGMEM_MEMORY_MODEL": "gpt-4o-mini",
				"HIGMEM_JUDGE_BASE_URL": "http://judge.local/v1", "HIGMEM_JUDGE_MODEL": "judge-model",
			},
			memory:     Endpoint{OpenAIBaseURL, "sk-hosted", "gpt-4o-mini"},
			answer:     Endpoint{OpenAIBaseURL, "sk-hosted", "gpt-4o-mini"},
			judge:      Endpoint{"http://judge.local/v1", "", "judge-model"},
			configured: true,
		},
		{
			name: "same model names, per-role keys",
			env: map[string]string{
				"HIGMEM_LLM_BASE_URL": "https://litellm/v1", "HIGMEM_LLM_API_KEY": "k0", "HIGMEM_MEMORY_MODEL": "small",
				"HIGMEM_ANSWER_MODEL": "big", "HIGMEM_JUDGE_API_KEY": "k2",
			},
			memory:     Endpoint{"https://litellm/v1", "k0", "small"},
			answer:     Endpoint{"https://litellm/v1", "k0", "big"},
			judge:      Endpoint{"https://litellm/v1", "k2", "big"},
			configured: true,
		},
		{
			name:   "whitespace is trimmed",
			env:    map[string]string{"HIGMEM_LLM_BASE_URL": "  http://h/v1 \n", "HIGMEM_MEMORY_MODEL": " m "},
			memory: Endpoint{"http://h/v1", "", "m"}, answer: Endpoint{"http://h/v1", "", "m"}, judge: Endpoint{"http://h/v1", "", "m"},
			configured: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Load(env(tt.env))
			if c.Memory != tt.memory || c.Answer != tt.answer || c.Judge != tt.judge {
				t.Errorf("endpoints =\n  %+v\n  %+v\n  %+v\nwant\n  %+v\n  %+v\n  %+v", c.Memory, c.Answer, c.Judge, tt.memory, tt.answer, tt.judge)
			}
			if c.LLMConfigured() != tt.configured {
				t.Errorf("LLMConfigured = %v", c.LLMConfigured())
			}
			if c.Role(llm.RoleMemory) != c.Memory || c.Role(llm.RoleAnswer) != c.Answer || c.Role(llm.RoleJudge) != c.Judge {
				t.Error("Role does not match the fields")
			}
			if len(c.Problems) != 0 {
				t.Errorf("problems: %v", c.Problems)
			}
		})
	}
}

func TestLoadDefaults(t *testing.T) {
	c := Load(env(map[string]string{"HOME": "/home/ann"}))
	if runtime.GOOS == "linux" {
		if c.DB != "/home/ann/.local/share/higmem/higmem.db" || c.ModelsDir != "/home/ann/.cache/higmem/models" {
			t.Errorf("paths = %s, %s", c.DB, c.ModelsDir)
		}
		x := Load(env(map[string]string{"HOME": "/home/ann", "XDG_DATA_HOME": "/data", "XDG_CACHE_HOME": "/cache"}))
		if x.DB != "/data/higmem/higmem.db" || x.ModelsDir != "/cache/higmem/models" {
			t.Errorf("XDG paths = %s, %s", x.DB, x.ModelsDir)
		}
	}
	if c.User != "default" || c.Agent != "" || c.Mode != "" || c.LogLevel != slog.LevelInfo ||
		c.LLMConcurrency != DefaultLLMConcurrency || c.LLMTimeout != DefaultLLMTimeout ||
		c.LLMStructured != "auto" || c.LLMMaxTokens != 0 || c.LLMStream {
		t.Errorf("defaults = %+v", c)
	}
	if c.Memory.String() != "not configured" {
		t.Errorf("Endpoint.String = %q", c.Memory.String())
	}
}

func TestLoadSettings(t *testing.T) {
	c := Load(env(map[string]string{
		"HIGMEM_DB": "/tmp/x.db", "HIGMEM_MODELS_DIR": "/models", "HIGMEM_USER": "ann", "HIGMEM_AGENT": "bot",
		"HIGMEM_MODE": "Paper", "HIGMEM_LOG_LEVEL": "debug", "HIGMEM_LLM_CONCURRENCY": "3", "HIGMEM_LLM_TIMEOUT": "45s",
		"HIGMEM_LLM_STRUCTURED": "JSON_OBJECT_SCHEMA", "HIGMEM_LLM_MAX_TOKENS": "-1", "HIGMEM_LLM_STREAM": "1",
	}))
	if c.DB != "/tmp/x.db" || c.ModelsDir != "/models" || c.User != "ann" || c.Agent != "bot" || c.Mode != "paper" ||
		c.LogLevel != slog.LevelDebug || c.LLMConcurrency != 3 || c.LLMTimeout != 45*time.Second || len(c.Problems) != 0 ||
		c.LLMStructured != "json_object_schema" || c.LLMMaxTokens != -1 || !c.LLMStream {
		t.Errorf("config = %+v", c)
	}
	if d := Load(env(map[string]string{"HIGMEM_LLM_TIMEOUT": "90"})).LLMTimeout; d != 90*time.Second {
		t.Errorf("bare seconds timeout = %v", d)
	}
	if l := Load(env(map[string]string{"HIGMEM_LOG_LEVEL": "WARN"})).LogLevel; l != slog.LevelWarn {
		t.Errorf("WARN = %v", l)
	}
}

func TestLoadProblems(t *testing.T) {
	c := Load(env(map[string]string{
		"HIGMEM_LOG_LEVEL": "loud", "HIGMEM_LLM_CONCURRENCY": "0", "HIGMEM_LLM_TIMEOUT": "soon",
		"HIGMEM_LLM_STRUCTURED": "xml", "HIGMEM_LLM_MAX_TOKENS": "many", "HIGMEM_LLM_STREAM": "maybe",
	}))
	if c.LogLevel != slog.LevelInfo || c.LLMConcurrency != DefaultLLMConcurrency || c.LLMTimeout != DefaultLLMTimeout ||
		c.LLMStructured != "auto" || c.LLMMaxTokens != 0 || c.LLMStream {
		t.Errorf("bad values not replaced by defaults: %+v", c)
	}
	if len(c.Problems) != 6 {
		t.Fatalf("problems = %v", c.Problems)
	}
	for i, name := range []string{"HIGMEM_LOG_LEVEL", "HIGMEM_LLM_CONCURRENCY", "HIGMEM_LLM_TIMEOUT",
		"HIGMEM_LLM_STRUCTURED", "HIGMEM_LLM_MAX_TOKENS", "HIGMEM_LLM_STREAM"} {
		if !strings.HasPrefix(c.Problems[i], name) {
			t.Errorf("problem %d = %q, want it to name %s", i, c.Problems[i], name)
		}
	}
}

// Every variable Load reads is documented in Vars, and every documented
// variable is read (platform directory variables aside).
func TestVarsMatchLoad(t *testing.T) {
	read := map[string]bool{}
	Load(func(k string) string { read[k] = true; return "" })
	Load(func(k string) string { read[k] = true; return "x" })
	platform := []string{"HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "LocalAppData", "APPDATA"}
	documented := map[string]bool{}
	for _, v := range Vars() {
		if v.Name == "" || v.Description == "" {
			t.Errorf("incomplete Var %+v", v)
		}
		if documented[v.Name] {
			t.Errorf("%s listed twice", v.Name)
		}
		documented[v.Name] = true
		if !read[v.Name] {
			t.Errorf("%s is documented but not read", v.Name)
		}
	}
	for k := range read {
		if !documented[k] && !slices.Contains(platform, k) {
			t.Errorf("%s is read but not documented", k)
		}
	}
}

func TestEndpointString(t *testing.T) {
	e := Endpoint{BaseURL: "http://h/v1", APIKey: "secret", Model: "m"}
	if s := e.String(); s != "m at http://h/v1" || strings.Contains(s, "secret") {
		t.Errorf("String = %q", s)
	}
}
