// Package agent is the host side of the connector: `opsagent connector`
// dials the server (it opens no port), registers, heartbeats, runs the
// commands the server sends within the host's own allow-list, streams
// their output back, and reconnects with jittered back-off whenever either
// side goes away.
package agent

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/opsagent/opsagent/server/connector"
	"github.com/opsagent/opsagent/server/sandbox"
)

// Config is one connector's settings.
type Config struct {
	Server    string // base URL of the opsagent server
	Token     string // ocn_ enrollment token
	Name      string // optional: the name the host expects to have (checked, not imposed)
	Labels    map[string]string
	Allow     *connector.AllowList // the host's own allow-list; nil allows everything the server sends
	AllowPath string
	WorkDir   string
	Client    *http.Client
	Version   string
	Logger    *slog.Logger
	// Handler serves runs instead of the shell (--kubernetes).
	Handler Handler
	// HostSandbox narrows every command's sandbox profile (--sandbox-profile).
	HostSandbox *sandbox.Profile
	// NoLandlock behaves as on a kernel without Landlock (--sandbox-no-landlock).
	NoLandlock bool
	// MaxBackoff bounds the wait between reconnection attempts (default 30 s).
	MaxBackoff time.Duration
}

const usage = `Usage: opsagent connector --server URL --token ocn_... [flags]

Runs on a host and connects out to the opsagent server (it opens no port).
The token may come from OPSAGENT_CONNECTOR_TOKEN instead of --token, which
keeps it out of the process list.

`

// UsageError is a mistake in the command line (exit code 2).
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Command is `opsagent connector`.
func Command(ctx context.Context, args []string, getenv func(string) string, version string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("connector", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage); fs.PrintDefaults() }
	server := fs.String("server", getenv("OPSAGENT_SERVER"), "opsagent server URL, e.g. https://ops.example.com (env OPSAGENT_SERVER)")
	token := fs.String("token", "", "enrollment token (ocn_...); env OPSAGENT_CONNECTOR_TOKEN")
	name := fs.String("name", "", "the connector name this host expects (a mismatch is logged)")
	labels := fs.String("labels", "", "labels this host reports, k=v,k=v (labels set on the server win)")
	allow := fs.String("allow", "", "host allow-list file: only matching commands run here, whatever the server approved")
	caFile := fs.String("ca-file", "", "PEM file of CA certificates to trust for the server (in addition to the system's)")
	insecure := fs.Bool("insecure", false, "do not verify the server's TLS certificate (DANGEROUS: anyone on the path can run commands here)")
	workDir := fs.String("work-dir", "", "working directory of commands (default: the current directory)")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	kubeOpt := kubeFlags(fs, getenv)
	sandboxFile := fs.String("sandbox-profile", "", "JSON sandbox profile that narrows every command's (e.g. {\"read_only\":true}); the host has the last word")
	noLandlock := fs.Bool("sandbox-no-landlock", getenv("OPSAGENT_SANDBOX_NO_LANDLOCK") == "1", "behave as on a kernel without Landlock (testing the fallback: read-only commands then ask a person)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &UsageError{Err: err}
	}
	var lv slog.Level
	_ = lv.UnmarshalText([]byte(strings.ToUpper(*logLevel)))
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lv}))
	cfg := Config{Server: strings.TrimSuffix(*server, "/"), Token: *token, Name: *name, WorkDir: *workDir, Version: version, Logger: logger}
	cfg.NoLandlock = *noLandlock
	if *sandboxFile != "" {
		hp, err := loadHostSandbox(*sandboxFile)
		if err != nil {
			return &UsageError{Err: fmt.Errorf("--sandbox-profile: %v", err)}
		}
		cfg.HostSandbox = hp
	}
	if cfg.Token == "" {
		cfg.Token = getenv("OPSAGENT_CONNECTOR_TOKEN")
	}
	if err := cfg.check(); err != nil {
		fs.Usage()
		return &UsageError{Err: err}
	}
	var err error
	if cfg.Labels, err = ParseLabels(*labels); err != nil {
		return &UsageError{Err: err}
	}
	if *kubeOpt.enabled {
		if cfg.Handler, err = kubeOpt.handler(logger); err != nil {
			return fmt.Errorf("--kubernetes: %w", err)
		}
	} else if *allow != "" {
		if cfg.Allow, err = connector.ReadAllowFile(*allow); err != nil {
			return fmt.Errorf("allow-list: %w", err)
		}
		cfg.AllowPath = *allow
		logger.Info("host allow-list in force", "file", *allow, "patterns", cfg.Allow.Len())
	} else {
		logger.Warn("no host allow-list (--allow): every command the server sends and approves runs on this host")
	}
	if cfg.Client, err = httpClient(*caFile, *insecure); err != nil {
		return err
	}
	if *insecure {
		for range 3 {
			logger.Error("TLS VERIFICATION IS OFF (--insecure): anyone between this host and the server can impersonate " +
				"the server and run commands here. Use --ca-file with the server's CA instead.")
		}
	}
	return Run(ctx, cfg)
}

func (c *Config) check() error {
	u, err := url.Parse(c.Server)
	switch {
	case c.Server == "":
		return errors.New("--server is required")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("--server must be an http(s) URL, got %q", c.Server)
	case c.Token == "":
		return errors.New("--token (or OPSAGENT_CONNECTOR_TOKEN) is required")
	case !strings.HasPrefix(c.Token, "ocn_"):
		return errors.New("the token must be a connector token (ocn_...)")
	}
	return nil
}

// ParseLabels reads "k=v,k=v".
func ParseLabels(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok || k == "" || len(k) > 63 || len(v) > 63 {
			return nil, fmt.Errorf("label %q: want key=value (each at most 63 characters)", part)
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out, nil
}

func httpClient(caFile string, insecure bool) (*http.Client, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("--ca-file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--ca-file %s: no PEM certificates in it", caFile)
		}
		tc.RootCAs = pool
	}
	tc.InsecureSkipVerify = insecure
	tr := &http.Transport{TLSClientConfig: tc, Proxy: http.ProxyFromEnvironment, TLSHandshakeTimeout: 15 * time.Second}
	return &http.Client{Transport: tr}, nil
}

func hello(cfg Config) *connector.Hello {
	host, _ := os.Hostname()
	return &connector.Hello{Version: cfg.Version, Hostname: host, OS: runtime.GOOS, Arch: runtime.GOARCH,
		Labels: cfg.Labels, HostAllowList: !cfg.Allow.Empty(), Sandbox: hostKernel(cfg),
		HostProfile: cfg.HostSandbox}
}
