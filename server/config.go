package server

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Config is everything the server reads from flags and OPSAGENT_* variables.
type Config struct {
	Addr            string
	DataDir         string
	BaseURL         string
	Signup          string // open, invite, closed; "" = open until the first user exists, then invite
	SMTPURL         string
	MailFrom        string
	LLMProvider     string
	LLMBaseURL      string
	LLMAPIKey       string
	LLMModel        string
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
}

type flagDef struct {
	name, env, usage string
	secret           bool
	bind             func(fs *flag.FlagSet, def string)
}

// Flags registers every flag on fs, each defaulting to its OPSAGENT_ twin, so
// a flag wins over the variable and `serve --help` lists both.
func (c *Config) Flags(fs *flag.FlagSet, getenv func(string) string) {
	str := func(p *string, name, def, usage string) {
		env := "OPSAGENT_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
		if v := getenv(env); v != "" {
			def = v
		}
		fs.StringVar(p, name, def, usage+" (env "+env+")")
	}
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
	str(&c.VaultPassphrase, "vault-passphrase", "", "wraps the vault identity with a passphrase (scrypt)")
	str(&c.LogLevel, "log-level", "info", "debug, info, warn or error")
	str(&c.LogFormat, "log-format", "text", "text or json")
	trust := getenv("OPSAGENT_TRUST_PROXY")
	fs.BoolVar(&c.TrustProxy, "trust-proxy", trust == "1" || strings.EqualFold(trust, "true"), "use X-Forwarded-For from a reverse proxy as the client address (env OPSAGENT_TRUST_PROXY)")
	noReset := getenv("OPSAGENT_DISABLE_PASSWORD_RESET")
	fs.BoolVar(&c.DisablePasswordReset, "disable-password-reset", noReset == "1" || strings.EqualFold(noReset, "true"), "turn off self-service password reset (env OPSAGENT_DISABLE_PASSWORD_RESET)")
	local := getenv("OPSAGENT_ALLOW_LOCAL_COMMANDS")
	fs.BoolVar(&c.AllowLocalCommands, "allow-local-commands", local == "1" || strings.EqualFold(local, "true"), "let the agent's run_command run on this host, in DATA_DIR/work (env OPSAGENT_ALLOW_LOCAL_COMMANDS)")
	maxBody := int64(1 << 20)
	if v, err := strconv.ParseInt(getenv("OPSAGENT_MAX_BODY_BYTES"), 10, 64); err == nil && v > 0 {
		maxBody = v
	}
	fs.Int64Var(&c.MaxBodyBytes, "max-body-bytes", maxBody, "default request body limit in bytes (env OPSAGENT_MAX_BODY_BYTES)")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", 15*time.Second, "how long SIGTERM waits for requests to drain")
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

// Print writes the effective config with secrets redacted.
func (c *Config) Print(w io.Writer) {
	red := func(s string) string {
		if s == "" {
			return ""
		}
		return "********"
	}
	smtp := c.SMTPURL
	if u, err := url.Parse(smtp); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
			smtp = u.String()
		}
	}
	fmt.Fprintf(w, "addr=%s\ndata_dir=%s\nbase_url=%s\nsignup=%s\nsmtp_url=%s\nllm_provider=%s\nllm_base_url=%s\nllm_api_key=%s\nllm_model=%s\nvault_passphrase=%s\n",
		c.Addr, c.DataDir, c.BaseURL, c.Signup, smtp, c.LLMProvider, c.LLMBaseURL, red(c.LLMAPIKey), c.LLMModel, red(c.VaultPassphrase))
}

// ensureDir creates dir with mode 0700.
func ensureDir(dir string) error { return os.MkdirAll(dir, 0o700) }
