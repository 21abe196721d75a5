// Command opsagent is the whole product: the API server, the web console,
// the scheduler and the command-line client, in one binary.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/opsagent/opsagent/rag"
	"github.com/opsagent/opsagent/scheduler"
	"github.com/opsagent/opsagent/server"
	"github.com/opsagent/opsagent/server/backup"
	"github.com/opsagent/opsagent/server/cliclient"
	"github.com/opsagent/opsagent/server/secrets"
	"github.com/opsagent/opsagent/store"
	"github.com/opsagent/opsagent/vault"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "opsagent:", err)
		os.Exit(1)
	}
}

const usage = `opsagent: a self-hosted AI agent for DevOps and SRE teams

Usage:
  opsagent serve [flags]     run the server (opsagent serve --help lists flags)
  opsagent login [--server URL]   sign this machine in through the browser (device code)
  opsagent logout            revoke this machine's session and forget it
  opsagent backup --data-dir D --out FILE    archive a (running) server's data directory
  opsagent restore --in FILE --data-dir NEW  restore an archive into a new, empty directory
  opsagent vault rotate      re-encrypt every vault ciphertext under a new key (safe while serving)
  opsagent doctor [flags]    check config, data dir, disk, database, vault, LLM, SMTP, base URL, clock
  opsagent version           print the version
`

// run dispatches a subcommand. It takes everything from the outside world as
// arguments so tests can drive it.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command given")
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], getenv, stdout, stderr)
	case "login", "logout":
		return cliclient.Run(ctx, args[0], args[1:], getenv, stdout, stderr)
	case "backup":
		return backup.BackupCommand(ctx, args[1:], getenv, server.Version, stdout, stderr)
	case "restore":
		return backup.RestoreCommand(ctx, args[1:], getenv, stdout, stderr)
	case "vault":
		return secrets.RotateCommand(ctx, args[1:], getenv, stdout, stderr)
	case "doctor":
		return doctor(ctx, args[1:], getenv, stdout, stderr)
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, "opsagent", server.Version)
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
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
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := cfg.Abs(); err != nil {
		return err
	}
	if *printConfig {
		signup := "open"
		if n, err := store.PeekUserCount(ctx, cfg.Path("opsagent.db")); err == nil && n > 0 {
			signup = "invite"
		}
		cfg.Print(stdout, fs, signup)
		return nil
	}
	logger := newLogger(stderr, cfg.LogLevel, cfg.LogFormat)
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	// The vault opens first: a wrong passphrase must stop the start before
	// anything (such as a schema migration) touches the data directory.
	keys, err := vault.Open(cfg.Path("vault"), cfg.VaultPassphrase, logger)
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	db, err := store.Open(ctx, cfg.Path("opsagent.db"))
	if err != nil {
		return err
	}
	defer db.Close()
	// The RAG store reconciles its index with the files before it returns.
	kb, err := rag.Open(ctx, cfg.Path("rag"), rag.Options{Logger: logger})
	if err != nil {
		return err
	}
	defer kb.Close()
	jobs := scheduler.New(logger)
	srv, err := server.New(cfg, server.Deps{DB: db, Vault: keys, RAG: kb, Jobs: jobs, Logger: logger})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	jobs.Start()
	defer jobs.Stop()
	logger.Info("opsagent listening", "addr", ln.Addr().String(), "data_dir", cfg.DataDir, "version", server.Version)
	return srv.Serve(ctx, ln)
}

func newLogger(w io.Writer, level, format string) *slog.Logger {
	var lv slog.Level
	_ = lv.UnmarshalText([]byte(strings.ToUpper(level)))
	opts := &slog.HandlerOptions{Level: lv}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
