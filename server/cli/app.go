package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/opsagent/opsagent/server/cliclient"
)

// app is the state one invocation shares between its commands.
type app struct {
	inv     Invocation
	getenv  func(string) string
	server  string
	profile string
	project string
	jsonOut bool
	quiet   bool
	noColor bool

	cfgPath string
	cfg     *Config
	c       *client
	out     *output
}

func newApp(inv Invocation) *app { return &app{inv: inv, getenv: inv.Getenv} }

func (a *app) globalFlags(root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringVar(&a.server, "server", a.getenv("OPSAGENT_SERVER"), "server base URL (env OPSAGENT_SERVER; default: the profile's, or the one you signed in to)")
	f.StringVar(&a.profile, "profile", a.getenv("OPSAGENT_PROFILE"), "named profile: its own server, sign-in and current project (env OPSAGENT_PROFILE)")
	f.StringVarP(&a.project, "project", "p", a.getenv("OPSAGENT_PROJECT"), "project name or id (env OPSAGENT_PROJECT; default: the one chosen with projects use)")
	f.BoolVar(&a.jsonOut, "json", false, "print the server's JSON (stable, for scripts and jq)")
	f.BoolVarP(&a.quiet, "quiet", "q", false, "print ids only")
	f.BoolVar(&a.noColor, "no-color", false, "never use colours (also NO_COLOR)")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if a.jsonOut && a.quiet {
			return usageErrorf(cmd, "--json and --quiet exclude each other")
		}
		if a.profile == "" {
			a.profile = "default"
		}
		if !profileName.MatchString(a.profile) {
			return usageErrorf(cmd, "invalid profile name %q", a.profile)
		}
		a.out = newOutput(a.inv.Stdout, a.inv.Stderr, a.jsonOut, a.quiet, a.noColor || a.getenv("NO_COLOR") != "")
		return nil
	}
}

// config loads the config file once.
func (a *app) config() (*Config, error) {
	if a.cfg != nil {
		return a.cfg, nil
	}
	p, err := configPath(a.getenv)
	if err != nil {
		return nil, err
	}
	cfg, err := loadConfig(p)
	if err != nil {
		return nil, err
	}
	a.cfgPath, a.cfg = p, cfg
	return cfg, nil
}

// client returns the signed-in client (no project).
func (a *app) client() (*client, error) {
	if a.c != nil {
		return a.c, nil
	}
	cfg, err := a.config()
	if err != nil {
		return nil, err
	}
	prof := cfg.Profiles[a.profile]
	cred := &credential{static: strings.TrimSpace(a.getenv("OPSAGENT_TOKEN"))}
	server := strings.TrimRight(a.server, "/")
	if server == "" {
		server = strings.TrimRight(prof.Server, "/")
	}
	if cred.static == "" {
		path, err := credentialsPath(a.getenv, a.profile)
		if err != nil {
			return nil, err
		}
		stored, err := cliclient.Load(path)
		if errors.Is(err, os.ErrNotExist) {
			return nil, &Error{Code: ExitPermission, Err: errors.New("not signed in: run `opsagent login --server URL`, or set OPSAGENT_TOKEN to an API key")}
		}
		if err != nil {
			return nil, err
		}
		if server == "" {
			server = strings.TrimRight(stored.Server, "/")
		}
		// A sign-in is only ever sent to the server that issued it.
		if strings.TrimRight(stored.Server, "/") != server {
			return nil, &Error{Code: ExitPermission, Err: fmt.Errorf("the stored sign-in is for %s, not %s: run `opsagent login --server %s` (or use --profile)", stored.Server, server, server)}
		}
		cred.path, cred.stored = path, stored
	}
	if server == "" {
		return nil, &Error{Code: ExitUsage, Err: errors.New("no server: pass --server URL or set OPSAGENT_SERVER")}
	}
	if u, err := url.Parse(server); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &Error{Code: ExitUsage, Err: fmt.Errorf("--server %q is not an http(s) URL", server)}
	}
	cred.base = server
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.ResponseHeaderTimeout = 60 * time.Second
	a.c = &client{base: server, auth: cred, hc: &http.Client{Transport: tr}}
	return a.c, nil
}

// projectClient returns the client with its project chosen: --project (a
// name, slug or id), else the profile's current project, else the caller's
// only project.
func (a *app) projectClient(ctx context.Context) (*client, error) {
	c, err := a.client()
	if err != nil {
		return nil, err
	}
	if c.project != "" {
		return c, nil
	}
	want := a.project
	if want == "" {
		want = a.cfg.Profiles[a.profile].Project
	}
	if want != "" && looksLikeID(want) {
		c.project = want
		return c, nil
	}
	projects, err := a.listProjects(ctx)
	if err != nil {
		return nil, err
	}
	if want == "" {
		if len(projects) == 1 {
			c.project = projects[0].ID
			return c, nil
		}
		return nil, &Error{Code: ExitUsage, Err: fmt.Errorf("no project chosen: run `opsagent projects use NAME` or pass --project (%d projects to choose from)", len(projects))}
	}
	p, err := findProject(projects, want)
	if err != nil {
		return nil, err
	}
	c.project = p.ID
	return c, nil
}

func looksLikeID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, r := range s {
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if r != '-' {
				return false
			}
		case !strings.ContainsRune("0123456789abcdefABCDEF", r):
			return false
		}
	}
	return true
}
