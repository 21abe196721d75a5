package server

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Config is everything the server reads from flags and OPSAGENT_* variables.
type Config struct {
	Addr        string
	DataDir     string
	BaseURL     string
	Signup      string // open, invite, closed; "" = open until the first user exists, then invite
	SMTPURL     string
	MailFrom    string
	LLMProvider string
	LLMBaseURL  string
	LLMAPIKey   string
	LLMModel    string
	// LLMPrices is a JSON object of model -> {input_per_mtok, output_per_mtok}
	// (USD per million tokens) merged over the built-in list prices.
	LLMPrices       string
	VaultPassphrase string
	LogLevel        string
	LogFormat       string
	TrustProxy      bool
	// DisablePasswordReset turns off self-service reset (forgot-password answers 403).
	DisablePasswordReset bool
	// AllowLocalCommands lets the agent's run_command run on the server host itself (off by default).
	AllowLocalCommands bool
	MaxBodyBytes       int64
	ShutdownTimeout    time.Duration
	// ConnectorHeartbeat is how often connectors ping; silent for 2.5 times it, one is lost.
	ConnectorHeartbeat time.Duration
}

// EnvName is the OPSAGENT_ twin of a flag: --data-dir is OPSAGENT_DATA_DIR.
func EnvName(flagName string) string {
	return "OPSAGENT_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// Flags registers every config flag on fs. Call ApplyEnv after it and before
// fs.Parse, so a variable sets the default and a flag given on the command line wins.
func (c *Config) Flags(fs *flag.FlagSet) {
	str := func(p *string, name, def, usage string) { fs.StringVar(p, name, def, usage) }
	str(&c.Addr, "addr", "127.0.0.1:8080", "listen address HOST:PORT")
	str(&c.DataDir, "data-dir", "./data", "directory holding everything the server keeps")
	str(&c.BaseURL, "base-url", "", "public URL, used in mail links, WebAuthn origin and cookie Secure flag")
	str(&c.Signup, "signup", "", "who may register: open, invite or closed (default: open until the first user, then invite)")
	str(&c.SMTPURL, "smtp-url", "", "smtp://user:pass@host:port or smtps://...; unset writes mail to DATA_DIR/outbox")
	str(&c.MailFrom, "mail-from", "opsagent <noreply@opsagent.local>", "sender address of outgoing mail")
	str(&c.LLMProvider, "llm-provider", "", "openai (any OpenAI-compatible server) or anthropic")
	str(&c.LLMBaseURL, "llm-base-url", "", "LLM API base URL (e.g. http://127.0.0.1:11434/v1 for Ollama)")
	str(&c.LLMAPIKey, "llm-api-key", "", "LLM API key")
	str(&c.LLMModel, "llm-model", "", "LLM model name")
	str(&c.LLMPrices, "llm-prices", "", `JSON prices per model in USD per million tokens, merged over the built-in list, e.g. {"llama3.1":{"input_per_mtok":0,"output_per_mtok":0}}`)
	str(&c.VaultPassphrase, "vault-passphrase", "", "wraps the vault identity with a passphrase (scrypt)")
	str(&c.LogLevel, "log-level", "info", "debug, info, warn or error")
	str(&c.LogFormat, "log-format", "text", "text or json")
	fs.BoolVar(&c.TrustProxy, "trust-proxy", false, "behind one reverse proxy: the last X-Forwarded-For hop (the one it appends) is the client address")
	fs.BoolVar(&c.DisablePasswordReset, "disable-password-reset", false, "turn off self-service password reset")
	fs.Int64Var(&c.MaxBodyBytes, "max-body-bytes", 1<<20, "default request body limit in bytes")
	fs.BoolVar(&c.AllowLocalCommands, "allow-local-commands", false, "let the agent's run_command run on this host, in DATA_DIR/work")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", 15*time.Second, "how long SIGTERM waits for requests to drain")
	fs.DurationVar(&c.ConnectorHeartbeat, "connector-heartbeat", 10*time.Second, "how often connectors ping; one silent for 2.5 times this is lost and its commands end")
	// Every flag names its twin in --help.
	fs.VisitAll(func(f *flag.Flag) { f.Usage += " (env " + EnvName(f.Name) + ")" })
}

// ApplyEnv sets each flag of fs whose OPSAGENT_ twin is set; a value that does
// not parse is an error naming the variable, not a silent default.
func ApplyEnv(fs *flag.FlagSet, getenv func(string) string) error {
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		env := EnvName(f.Name)
		if v := getenv(env); v != "" {
			if err := fs.Set(f.Name, v); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", env, err))
			}
		}
	})
	return errors.Join(errs...)
}

// Validate checks the config before anything is opened.
func (c *Config) Validate() error {
	var errs []error
	if c.Addr == "" {
		errs = append(errs, errors.New("addr must not be empty"))
	}
	if c.DataDir == "" {
		errs = append(errs, errors.New("data-dir must not be empty"))
	}
	switch c.Signup {
	case "", "open", "invite", "closed":
	default:
		errs = append(errs, fmt.Errorf("signup must be open, invite or closed, not %q", c.Signup))
	}
	if c.BaseURL != "" {
		u, err := url.Parse(c.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("base-url must be an absolute http(s) URL, not %q", c.BaseURL))
		}
	}
	if c.SMTPURL != "" {
		u, err := url.Parse(c.SMTPURL)
		if err != nil || (u.Scheme != "smtp" && u.Scheme != "smtps") || u.Host == "" {
			errs = append(errs, errors.New("smtp-url must look like smtp://user:pass@host:port or smtps://..."))
		}
	}
	switch c.LLMProvider {
	case "", "openai", "anthropic":
	default:
		errs = append(errs, fmt.Errorf("llm-provider must be openai or anthropic, not %q", c.LLMProvider))
	}
	switch strings.ToLower(c.LogLevel) {
	case "", "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("log-level must be debug, info, warn or error, not %q", c.LogLevel))
	}
	switch c.LogFormat {
	case "", "text", "json":
	default:
		errs = append(errs, fmt.Errorf("log-format must be text or json, not %q", c.LogFormat))
	}
	if c.ShutdownTimeout < 0 {
		errs = append(errs, errors.New("shutdown-timeout must not be negative"))
	}
	if _, err := ParseLLMPrices(c.LLMPrices); err != nil {
		errs = append(errs, err)
	}
	if c.MaxBodyBytes <= 0 {
		errs = append(errs, errors.New("max-body-bytes must be positive"))
	}
	return errors.Join(errs...)
}

// Abs resolves the data directory.
func (c *Config) Abs() error {
	d, err := filepath.Abs(c.DataDir)
	if err != nil {
		return err
	}
	c.DataDir = d
	return nil
}

// Path returns a path under the data directory.
func (c *Config) Path(parts ...string) string {
	return filepath.Join(append([]string{c.DataDir}, parts...)...)
}

// SecureCookies reports whether cookies carry the Secure flag.
func (c *Config) SecureCookies() bool { return strings.HasPrefix(c.BaseURL, "https://") }

// Print writes the effective config with secrets redacted (--print-config).
func (c *Config) Print(w io.Writer) {
	red := func(s string) string {
		if s == "" {
			return ""
		}
		return "[redacted]"
	}
	fmt.Fprintf(w, "addr=%s\ndata_dir=%s\nbase_url=%s\nsignup=%s\nsmtp_url=%s\nmail_from=%s\n", c.Addr, c.DataDir, c.BaseURL, c.Signup, redactURL(c.SMTPURL), c.MailFrom)
	fmt.Fprintf(w, "llm_provider=%s\nllm_base_url=%s\nllm_api_key=%s\nllm_model=%s\nvault_passphrase=%s\n", c.LLMProvider, redactURL(c.LLMBaseURL), red(c.LLMAPIKey), c.LLMModel, red(c.VaultPassphrase))
	fmt.Fprintf(w, "log_level=%s\nlog_format=%s\ntrust_proxy=%t\ndisable_password_reset=%t\nmax_body_bytes=%d\nshutdown_timeout=%s\n",
		c.LogLevel, c.LogFormat, c.TrustProxy, c.DisablePasswordReset, c.MaxBodyBytes, c.ShutdownTimeout)
}

// redactURL hides the password of a URL's user info (smtp://user:pass@host).
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if raw == "" {
			return ""
		}
		return "[redacted]"
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "redacted")
		}
	}
	return u.String()
}

// ensureDir creates dir with mode 0700.
func ensureDir(dir string) error { return os.MkdirAll(dir, 0o700) }
