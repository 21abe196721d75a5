// Command opsagent is the whole product: the API server, the web console,
// the scheduler and the command-line client, in one binary.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/opsagent/opsagent/server/sandbox"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"

	"github.com/opsagent/opsagent/rag"
	"github.com/opsagent/opsagent/scheduler"
	"github.com/opsagent/opsagent/server"
	"github.com/opsagent/opsagent/server/backup"
	"github.com/opsagent/opsagent/server/cli"
	"github.com/opsagent/opsagent/server/cliclient"
	connagent "github.com/opsagent/opsagent/server/connector/agent"
	"github.com/opsagent/opsagent/server/doctor"
	"github.com/opsagent/opsagent/server/knowledge"
	"github.com/opsagent/opsagent/server/secrets"
	"github.com/opsagent/opsagent/store"
	"github.com/opsagent/opsagent/vault"
)

func main() {
	sandbox.Init() // the hidden sandbox-exec launcher: applies a profile and execs a command
	// Commands that catch Ctrl-C themselves (chat asks before cancelling a
	// turn) get a context that only SIGTERM cancels.
	sigs := []os.Signal{syscall.SIGTERM}
	if len(os.Args) < 2 || !cli.OwnsInterrupt(os.Args[1]) {
		sigs = append(sigs, os.Interrupt)
	}
	ctx, stop := signal.NotifyContext(context.Background(), sigs...)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "opsagent:", err)
		os.Exit(cli.ExitCode(err))
	}
}

// runFunc is a subcommand: its arguments and the outside world.
type runFunc func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error

// command is one line of the dispatch table.
type command struct {
	name, summary string
	run           runFunc
}

// commands is the dispatch table of the binary's subcommands, one line each
// (usage lists them in this order).
func commands() []command {
	return []command{
		{"serve", "run the server (opsagent serve --help lists flags)", serve},
		{"login", "sign this machine in through the browser (device code)", signIn("login")},
		{"logout", "revoke this machine's session and forget it", signIn("logout")},
		{"chat", "talk to the agent: one message, or a conversation", client("chat")},
		{"sessions", "list, show, resume and cancel agent sessions", client("sessions")},
		{"tasks", "list, show, preview, create, edit, enable, disable and trigger tasks; their runs", client("tasks")},
		{"approvals", "list, approve and deny risky actions", client("approvals")},
		{"incidents", "list and show incidents", client("incidents")},
		{"changes", "the project's change feed: deploys, releases, config changes, approved agent actions", client("changes")},
		{"postmortems", "list, show, draft and publish incidents' postmortems; the org's template", client("postmortems")},
		{"webhooks", "a task's received webhook events (--follow tails them); try a routing condition on one", client("webhooks")},
		{"rules", "list the agent's rules; what-if: preview a change, evaluate a call, shadow rules on trial", client("rules")},
		{"channels", "the project's chat channels (Slack, Telegram, WhatsApp): create, test, link accounts", client("channels")},
		{"heartbeats", "list, create and delete heartbeat checks of the current project", client("heartbeats")},
		{"maintenance", "list, create and delete maintenance windows of the current project", client("maintenance")},
		{"billing", "the organization's metered usage and monthly statements (--format csv|json)", client("billing")},
		{"projects", "list projects; choose the current one", client("projects")},
		{"whoami", "who and where you are signed in", client("whoami")},
		{"eval", "replay investigation scenarios against models and prompts, scored side by side; record an incident as one", client("eval")},
		{"completion", "print a bash, zsh or fish completion script", client("completion")},
		{"connector", "run a connector on this host: OPSAGENT_CONNECTOR_TOKEN=ocn_... opsagent connector --server URL --allow FILE (dials out, opens no port)", connectorCmd},
		{"backup", "archive a (running) server's data directory: --data-dir D --out FILE", backupCmd},
		{"restore", "restore an archive into a new, empty directory: --in FILE --data-dir NEW", backup.RestoreCommand},
		{"migrate-to-postgres", "move a stopped appliance's database into PostgreSQL and verify it: --data-dir D --database-url URL", migrateToPostgres},
		{"vault", "vault rotate: re-encrypt every vault ciphertext under a new key (safe while serving; on PostgreSQL: --stage, then --retire)", secrets.RotateCommand},
		{"doctor", "check config, data dir, disk, database, vault, LLM, SMTP, base URL and clock; exit 1 on a fault", doctor.Command},
		{"version", "print the version", version},
	}
}

func signIn(name string) runFunc {
	return func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
		return cliclient.Run(ctx, name, args, getenv, stdout, stderr)
	}
}

// client runs one of the command-line client's subcommands (server/cli).
func client(name string) runFunc {
	return func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
		var others [][2]string
		for _, c := range commands() {
			if !slices.Contains(cli.Names, c.name) {
				others = append(others, [2]string{c.name, c.summary})
			}
		}
		return cli.Run(ctx, cli.Invocation{Name: name, Args: args, Getenv: getenv, Stdout: stdout, Stderr: stderr, Others: others})
	}
}

func connectorCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	err := connagent.Command(ctx, args, getenv, server.Version, stdout, stderr)
	if u := (*connagent.UsageError)(nil); errors.As(err, &u) {
		return &cli.Error{Code: cli.ExitUsage, Err: err}
	}
	return err
}

func backupCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return backup.BackupCommand(ctx, args, getenv, server.Version, stdout, stderr)
}

func version(_ context.Context, _ []string, _ func(string) string, stdout, _ io.Writer) error {
	fmt.Fprintln(stdout, "opsagent", server.Version)
	return nil
}

func usage() string {
	var b strings.Builder
	b.WriteString("opsagent: a self-hosted AI agent for DevOps and SRE teams\n\nUsage: opsagent COMMAND [flags]   (opsagent COMMAND --help for each)\n\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "  %-11s %s\n", c.name, c.summary)
	}
	b.WriteString("\nThe client commands read OPSAGENT_SERVER and OPSAGENT_TOKEN (an opsk_ API key or an access token).\n" +
		"Exit codes: 0 ok, 1 error, 2 usage, 3 not found, 4 permission.\n")
	return b.String()
}

// run dispatches a subcommand. It takes everything from the outside world as
// arguments so tests can drive it.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage())
		return &cli.Error{Code: cli.ExitUsage, Err: errors.New("no command given")}
	}
	switch name := args[0]; {
	case name == "--version" || name == "-v":
		return version(ctx, nil, getenv, stdout, stderr)
	case name == "help" || name == "-h" || name == "--help":
		fmt.Fprint(stdout, usage())
		return nil
	case strings.HasPrefix(name, "__complete"):
		// Completion scripts call back into the binary for candidates.
		return client(name)(ctx, args[1:], getenv, stdout, stderr)
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], getenv, stdout, stderr)
		}
	}
	fmt.Fprint(stderr, usage())
	return &cli.Error{Code: cli.ExitUsage, Err: fmt.Errorf("unknown command %q", args[0])}
}

// serve opens store, scheduler and server in that order, and closes them in
// reverse. The "opsagent listening" log line carries the bound address (with
// --addr HOST:0 the port is chosen by the system; tests read it there).
func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg server.Config
	cfg.Flags(fs)
	if err := server.ApplyEnv(fs, getenv); err != nil {
		return err
	}
	// An action, not a setting: it has no environment twin.
	printConfig := fs.Bool("print-config", false, "print the effective configuration (secrets redacted) and exit")
	// The flag package prints every flag after any mistake; one line that
	// says what is wrong is read, 90 lines are not. --help is grouped.
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		server.PrintServeHelp(stderr, fs)
		return err
	} else if err != nil {
		return &cli.Error{Code: cli.ExitUsage, Err: fmt.Errorf("%w (opsagent serve --help lists the flags)", server.FlagError(fs, err))}
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := cfg.Abs(); err != nil {
		return err
	}
	if *printConfig {
		signup := "open"
		n, err := peekUserCount(ctx, cfg)
		if err != nil {
			// Said, not guessed: a wrong "open" here would mislead an operator.
			fmt.Fprintf(stderr, "print-config: cannot count accounts in the database: %v\n", err)
			signup = "unknown"
		} else if n > 0 {
			signup = "invite"
		}
		cfg.Print(stdout, fs, signup)
		return nil
	}
	logger := newLogger(stderr, cfg.LogLevel, cfg.LogFormat)
	// What can fail without changing anything comes first (the address, the
	// database's reachability), so a failed start leaves no half-made data
	// directory behind.
	ln, err := listen(cfg.Addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	if cfg.DatabaseURL != "" {
		if err := store.PingPostgres(ctx, cfg.DatabaseURL); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	unlock, err := lockDataDir(cfg.DataDir)
	if err != nil {
		return err
	}
	defer unlock()
	// The vault opens first: a wrong passphrase must stop the start before
	// anything (such as a schema migration) touches the data directory.
	keys, err := vault.Open(cfg.Path("vault"), cfg.VaultPassphrase, logger)
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	db, err := store.OpenURL(ctx, cfg.Path("opsagent.db"), cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer db.Close()
	// The knowledge index opens and reconciles with its files in the
	// background: a large one takes seconds, and the server listens first
	// (/readyz says not ready and routes that need the index answer 503
	// until it is loaded).
	// On PostgreSQL the documents are rows of the database and the index
	// is this server's cache of them, rebuilt here and then kept up to date
	// from the change feed (knowledge.Options).
	kb, err := rag.OpenInBackground(ctx, cfg.Path("rag"), knowledge.Options(db, rag.Options{Logger: logger}))
	if err != nil {
		return err
	}
	defer kb.Close()
	go func() {
		// Reading a large index leaves garbage the heap would keep resident
		// for minutes on an idle server: return it once loaded.
		<-kb.Loaded()
		debug.FreeOSMemory()
	}()
	jobs := scheduler.New(logger)
	srv, err := server.New(cfg, server.Deps{DB: db, Vault: keys, RAG: kb, Jobs: jobs, Logger: logger})
	if err != nil {
		return err
	}
	if f := getenv(testSchedulerClockEnv); f != "" {
		srv.TaskScheduler().SetClock(fileOffsetClock(f))
		logger.Warn("test-only: the scheduler's clock is shifted by the duration in a file", "env", testSchedulerClockEnv, "file", f)
	}
	jobs.Start()
	defer jobs.Stop()
	logger.Info("opsagent listening", "addr", ln.Addr().String(), "data_dir", cfg.DataDir, "version", server.Version)
	return srv.Serve(ctx, ln)
}

// listen binds the server's address, or says which setting to change.
func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s: %w; change --addr (or OPSAGENT_ADDR)", addr, err)
	}
	return ln, nil
}

// peekUserCount counts the accounts of the configured database (the SQLite
// file, or PostgreSQL with --database-url) without migrating it.
func peekUserCount(ctx context.Context, cfg server.Config) (int, error) {
	if cfg.DatabaseURL != "" {
		return store.PeekUserCountPostgres(ctx, cfg.DatabaseURL)
	}
	return store.PeekUserCount(ctx, cfg.Path("opsagent.db"))
}

func newLogger(w io.Writer, level, format string) *slog.Logger {
	var lv slog.Level
	_ = lv.UnmarshalText([]byte(strings.ToUpper(level)))
	return slog.New(server.NewLogHandler(w, lv, format == "json"))
}
