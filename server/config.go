package server

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
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
	// SandboxNoLandlock makes the server behave as on a kernel without
	// Landlock (testing the fallback: read-only commands ask a person).
	SandboxNoLandlock bool
	MaxBodyBytes      int64
	// WebhookMaxBodyBytes caps an inbound webhook delivery (413 above); it is
	// its own setting because provider payloads and API bodies differ in size.
	WebhookMaxBodyBytes int64
	// AgentTurnsPerMinute bounds chat turns and resumes per caller (0: the default, 20).
	AgentTurnsPerMinute int
	// EvidenceSourceTimeout is each evidence source's own time budget (0: 3 s).
	EvidenceSourceTimeout time.Duration
	ShutdownTimeout       time.Duration
	// ShutdownGrace: how long SIGTERM lets agent turns reach their next
	// checkpoint (they resume after the restart); RunResumeLimit: how many
	// times one turn is resumed before it is stopped.
	ShutdownGrace  time.Duration
	RunResumeLimit int
	// DiskMinFree is the free space in the data directory below which /readyz fails.
	DiskMinFree ByteSize
	// Retention defaults in days (0 keeps forever); orgs may override the
	// first three (PUT /api/organizations/{org_id}/retention).
	RetentionTranscriptsDays int
	RetentionSessionsDays    int
	RetentionAuditDays       int
	RetentionOutboxDays      int
	// DisableHTTPMetrics stops recording per-route request counters and
	// latency histograms (the engines' metrics stay).
	DisableHTTPMetrics bool
	// MetricsToken, when set, is the bearer token /metrics requires (then it
	// answers any address); unset, /metrics answers loopback only.
	MetricsToken string
	// ConnectorHeartbeat is how often connectors ping; silent for 2.5 times it, one is lost.
	ConnectorHeartbeat time.Duration
	// DatabaseURL, when set (postgres://...), keeps the state on PostgreSQL
	// instead of DATA_DIR/opsagent.db, so several servers can share it.
	DatabaseURL string
	// Billing is off, showback or stripe (billing_config.go).
	Billing             string
	BillingPlans        string
	BillingDefaultPlan  string
	BillingGrace        time.Duration
	StripeAPIKey        string
	StripeWebhookSecret string
	StripeAPIBase       string
	// Chat channels: the platforms' API base URLs (tests and proxies point
	// them elsewhere) and the least time between two edits of a streaming answer.
	SlackAPIURL, TelegramAPIURL, WhatsAppAPIURL string
	ChannelUpdateInterval                       time.Duration
	// PprofAddr, when set (loopback only), serves Go profiles (pprof.go).
	PprofAddr string
}

// DefaultWebhookMaxBody is the webhook delivery limit when none is set.
const DefaultWebhookMaxBody = 1 << 20

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
	str(&c.DatabaseURL, "database-url", "", "postgres://user:pass@host/db: keep the state on PostgreSQL (several servers may share it) instead of DATA_DIR/opsagent.db")
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
	fs.Int64Var(&c.MaxBodyBytes, "max-body-bytes", 1<<20, "request body limit in bytes of API routes that set none of their own (webhook deliveries: --webhook-max-body-bytes)")
	fs.Int64Var(&c.WebhookMaxBodyBytes, "webhook-max-body-bytes", DefaultWebhookMaxBody, "largest inbound webhook delivery in bytes (413 above)")
	fs.DurationVar(&c.EvidenceSourceTimeout, "evidence-source-timeout", 3*time.Second, "each evidence source's time budget when an investigation gathers its pack")
	fs.IntVar(&c.AgentTurnsPerMinute, "agent-turns-per-minute", DefaultAgentTurnsPerMinute, "chat turns and session resumes a person or API key may start per minute (429 above)")
	fs.BoolVar(&c.AllowLocalCommands, "allow-local-commands", false, "let the agent's run_command run on this host, in DATA_DIR/work/<project> (wiped after an idle hour)")
	fs.BoolVar(&c.SandboxNoLandlock, "sandbox-no-landlock", false, "behave as on a kernel without Landlock (tests the fallback: read-only commands then ask a person)")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", 15*time.Second, "how long SIGTERM waits for requests to drain")
	fs.DurationVar(&c.ShutdownGrace, "shutdown-grace", 20*time.Second, "how long SIGTERM lets running agent turns reach their next step boundary, where they are checkpointed to resume after the restart")
	fs.IntVar(&c.RunResumeLimit, "run-resume-limit", 3, "how many times one agent turn is resumed after interruptions before it is stopped")
	c.DiskMinFree = 512 << 20
	fs.Var(&c.DiskMinFree, "disk-min-free", "free space in the data directory below which /readyz fails (e.g. 512MiB, 2GB)")
	fs.IntVar(&c.RetentionTranscriptsDays, "retention-transcripts-days", 90, "default days a finished session keeps its transcript (0: forever; orgs may override)")
	fs.IntVar(&c.RetentionSessionsDays, "retention-sessions-days", 365, "default days a finished session is kept (0: forever; orgs may override)")
	fs.IntVar(&c.RetentionAuditDays, "retention-audit-days", 365, "default days audit events stay in the database before moving to DATA_DIR/audit-archive (0: forever; orgs may override)")
	fs.IntVar(&c.RetentionOutboxDays, "retention-outbox-days", 30, "days mail files stay in DATA_DIR/outbox (0: forever)")
	fs.BoolVar(&c.DisableHTTPMetrics, "disable-http-metrics", false, "do not record per-route request counts and latency histograms (the engines' metrics stay)")
	str(&c.MetricsToken, "metrics-token", "", "bearer token /metrics requires; unset serves /metrics to loopback only")
	fs.DurationVar(&c.ConnectorHeartbeat, "connector-heartbeat", 10*time.Second, "how often connectors ping; one silent for 2.5 times this is lost and its commands end")
	c.billingFlags(fs)
	c.pprofFlags(fs)
	str(&c.SlackAPIURL, "slack-api-url", "https://slack.com/api/", "Slack Web API base URL (chat channels)")
	str(&c.TelegramAPIURL, "telegram-api-url", "https://api.telegram.org", "Telegram Bot API base URL (chat channels)")
	str(&c.WhatsAppAPIURL, "whatsapp-api-url", "https://graph.facebook.com/v21.0", "WhatsApp Cloud API base URL, with the Graph API version (chat channels)")
	fs.DurationVar(&c.ChannelUpdateInterval, "channel-update-interval", time.Second, "least time between two edits of an answer streaming into a chat")
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
				errs = append(errs, valueError(env, v, f, err))
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
	if _, port, err := net.SplitHostPort(c.Addr); c.Addr != "" && (err != nil || port == "") {
		errs = append(errs, fmt.Errorf("addr must be HOST:PORT (e.g. 127.0.0.1:8080, or :8080 for every interface), not %q: change --addr (or OPSAGENT_ADDR)", c.Addr))
	}
	if c.DatabaseURL != "" && !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://") {
		errs = append(errs, errors.New("database-url must start with postgres:// (postgres://user:pass@host:5432/db): only PostgreSQL is supported; leave it unset for SQLite in the data dir"))
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
	if c.ShutdownGrace < 0 || c.RunResumeLimit < 0 {
		errs = append(errs, errors.New("shutdown-grace and run-resume-limit must not be negative"))
	}
	if c.ShutdownTimeout < 0 {
		errs = append(errs, errors.New("shutdown-timeout must not be negative"))
	}
	if _, err := ParseLLMPrices(c.LLMPrices); err != nil {
		errs = append(errs, err)
	}
	for name, v := range map[string]int{"retention-transcripts-days": c.RetentionTranscriptsDays, "retention-sessions-days": c.RetentionSessionsDays,
		"retention-audit-days": c.RetentionAuditDays, "retention-outbox-days": c.RetentionOutboxDays} {
		if v < 0 {
			errs = append(errs, fmt.Errorf("%s must be 0 (forever) or a number of days", name))
		}
	}
	if c.MaxBodyBytes <= 0 {
		errs = append(errs, errors.New("max-body-bytes must be positive"))
	}
	if c.AgentTurnsPerMinute < 0 {
		errs = append(errs, errors.New("agent-turns-per-minute must be positive"))
	}
	if c.WebhookMaxBodyBytes < 0 {
		errs = append(errs, errors.New("webhook-max-body-bytes must be positive"))
	}
	errs = append(errs, c.validateBilling()...)
	errs = append(errs, c.validatePprof()...)
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

// Print writes every flag's effective value (flag, variable or default),
// one name=value line each, in the flag set's order; secrets are redacted
// and URLs lose their passwords. signupNow is the sign-up policy in force
// when --signup is unset (open until the first account, then invite).
func (c *Config) Print(w io.Writer, fs *flag.FlagSet, signupNow string) {
	fs.VisitAll(func(f *flag.Flag) {
		name := strings.ReplaceAll(f.Name, "-", "_")
		v := f.Value.String()
		switch {
		case f.Name == "print-config":
			return
		case isSecretFlag(f.Name):
			if v != "" {
				v = "[redacted]"
			}
		case strings.Contains(v, "://"):
			v = redactURL(v)
		}
		if f.Name == "base-url" && v == "" {
			fmt.Fprintf(w, "# base_url is not set: mail links and webhook URLs are relative paths; set --base-url to the public URL\n")
		}
		if f.Name == "signup" && v == "" {
			fmt.Fprintf(w, "# signup is not set: open until the first account exists, then invite\n")
			v = signupNow
		}
		fmt.Fprintf(w, "%s=%s\n", name, v)
	})
}

// isSecretFlag: flags whose value is a credential and is never printed.
func isSecretFlag(name string) bool {
	for _, part := range []string{"key", "token", "passphrase", "password", "secret"} {
		if strings.Contains(name, part) && !strings.HasPrefix(name, "disable-") {
			return true
		}
	}
	return false
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
