package llm

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// The environment variables ConfigFromEnv reads, named in every
// configuration error so an operator knows what to set.
const (
	EnvProvider = "OPSAGENT_LLM_PROVIDER"
	EnvBaseURL  = "OPSAGENT_LLM_BASE_URL"
	EnvAPIKey   = "OPSAGENT_LLM_API_KEY"
	EnvModel    = "OPSAGENT_LLM_MODEL"
)

// Provider names accepted in Config.Provider.
const (
	ProviderOpenAI    = "openai"    // OpenAI and any compatible server (Ollama, llama.cpp, vLLM)
	ProviderAnthropic = "anthropic" // Anthropic Messages API
)

// Config selects and reaches one provider.
type Config struct {
	Provider string // ProviderOpenAI or ProviderAnthropic
	// BaseURL is the API root. OpenAI-compatible servers include the version
	// segment ("http://localhost:11434/v1"); Anthropic's does not
	// ("https://api.anthropic.com"). Empty means the provider's public API.
	BaseURL string
	APIKey  string // may be empty for local OpenAI-compatible servers
	Model   string
	// Timeout bounds one attempt, streaming included. 0 means 5 minutes.
	Timeout time.Duration
	Retry   RetryPolicy
	// HTTPClient is optional; nil means a client without its own timeout
	// (Timeout and the caller's context govern).
	HTTPClient *http.Client
	Logger     *slog.Logger // nil discards
	// TextToolCalls recognises tool calls an open model wrote into its
	// answer (textcalls.go); nil means on for a local BaseURL, off otherwise.
	TextToolCalls *bool
}

// RetryPolicy bounds retries of transient failures (429, 5xx, timeouts,
// network errors). Zero fields take the defaults noted.
type RetryPolicy struct {
	MaxAttempts int           // total attempts including the first; default 4; 1 disables retries
	BaseDelay   time.Duration // first back-off; default 500ms; doubles each attempt
	MaxDelay    time.Duration // cap on one wait, Retry-After included; default 30s
	// GiveUpAfter, when set, returns a 429 or 503 at once when its
	// Retry-After is longer: a failover chain tries the next model instead.
	GiveUpAfter time.Duration
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 4
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = 500 * time.Millisecond
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 30 * time.Second
	}
	return p
}

// ConfigFromEnv reads the OPSAGENT_LLM_* variables through lookup (pass
// os.Getenv); it does not validate, New does.
func ConfigFromEnv(lookup func(string) string) Config {
	return Config{
		Provider: strings.ToLower(strings.TrimSpace(lookup(EnvProvider))),
		BaseURL:  strings.TrimSpace(lookup(EnvBaseURL)),
		APIKey:   strings.TrimSpace(lookup(EnvAPIKey)),
		Model:    strings.TrimSpace(lookup(EnvModel)),
	}
}

// Validate reports what is missing, naming the variables to set.
func (c Config) Validate() error {
	var missing []string
	switch c.Provider {
	case "":
		missing = append(missing, EnvProvider+` ("openai" or "anthropic")`)
	case ProviderOpenAI, ProviderAnthropic:
	default:
		return &Error{Class: ClassConfig, Message: fmt.Sprintf(
			"unknown LLM provider %q: set %s to \"openai\" (also Ollama, llama.cpp, vLLM) or \"anthropic\"",
			c.Provider, EnvProvider)}
	}
	if c.Model == "" {
		missing = append(missing, EnvModel)
	}
	// A key is optional only where a local server is plausible: an
	// OpenAI-compatible provider with its own base URL.
	if c.APIKey == "" && (c.Provider == ProviderAnthropic || (c.Provider == ProviderOpenAI && c.BaseURL == "")) {
		missing = append(missing, EnvAPIKey)
	}
	if len(missing) == 0 {
		return nil
	}
	return &Error{Class: ClassConfig, Message: fmt.Sprintf(
		"no LLM configured: set %s (and %s for a self-hosted or proxy endpoint); missing: %s",
		strings.Join([]string{EnvProvider, EnvAPIKey, EnvModel}, ", "), EnvBaseURL, strings.Join(missing, ", "))}
}

// New returns a Provider for cfg that retries transient failures. The
// error, when cfg is incomplete, is an *Error of class ClassConfig whose
// message names the OPSAGENT_LLM_* variables.
func New(cfg Config) (Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Minute
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var base attempter
	switch cfg.Provider {
	case ProviderOpenAI:
		base = newOpenAI(cfg)
	case ProviderAnthropic:
		base = newAnthropic(cfg)
	}
	return &retrying{
		name: cfg.Provider, model: cfg.Model, inner: base, timeout: cfg.Timeout,
		policy: cfg.Retry.withDefaults(), log: log,
	}, nil
}
