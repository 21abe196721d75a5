// Package cli is the command-line client of the one binary: chat, sessions,
// tasks, approvals, incidents, postmortems, webhooks, rules, channels,
// heartbeats, maintenance, billing, projects, whoami and completion.
// It talks to a server over its public HTTP API only, with the credential
// `opsagent login` stored (refreshed as needed) or OPSAGENT_TOKEN.
//
// Flags and subcommands are spf13/cobra (it also writes the completion
// scripts); terminal detection is mattn/go-isatty; tables are the standard
// library's text/tabwriter.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// Exit codes scripts can rely on (CONVENTIONS.md).
const (
	ExitOK         = 0
	ExitError      = 1
	ExitUsage      = 2
	ExitNotFound   = 3
	ExitPermission = 4
)

// Invocation is one run of a client subcommand, as main dispatches it.
type Invocation struct {
	Name   string   // the subcommand, e.g. "chat"
	Args   []string // what follows it
	Getenv func(string) string
	Stdin  io.Reader // nil means os.Stdin
	Stdout io.Writer
	Stderr io.Writer
	// Others are the binary's other subcommands (name and one-line summary),
	// so completion scripts offer them too.
	Others [][2]string
}

// Names are the subcommands this package serves.
var Names = []string{"chat", "sessions", "tasks", "approvals", "incidents", "changes", "postmortems", "webhooks", "rules", "channels",
	"heartbeats", "maintenance", "billing", "projects", "whoami", "eval", "completion"}

// Run executes one client subcommand. The error it returns carries the exit
// code (see ExitCode); help output returns nil.
func Run(ctx context.Context, inv Invocation) error {
	if inv.Stdin == nil {
		inv.Stdin = os.Stdin
	}
	if inv.Getenv == nil {
		inv.Getenv = os.Getenv
	}
	app := newApp(inv)
	root := app.root(inv.Others)
	root.SetArgs(append([]string{inv.Name}, inv.Args...))
	root.SetIn(inv.Stdin)
	root.SetOut(inv.Stdout)
	root.SetErr(inv.Stderr)
	_, err := root.ExecuteContextC(ctx)
	if err != nil && errors.Is(err, context.Canceled) && ctx.Err() != nil {
		// Ctrl-C (or SIGTERM): say so, not "context canceled". A turn being
		// followed goes on on the server.
		return &Error{Code: ExitError, Err: errors.New("interrupted")}
	}
	return err
}

// Error is an error with an exit code.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func usageErrorf(cmd *cobra.Command, format string, a ...any) error {
	msg := fmt.Sprintf(format, a...)
	if cmd != nil {
		msg += fmt.Sprintf("\nRun '%s --help' for usage.", cmd.CommandPath())
	}
	return &Error{Code: ExitUsage, Err: errors.New(msg)}
}

// ExitCode maps an error from Run (or any subcommand) to the process exit code.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	var api *APIError
	if errors.As(err, &api) {
		return api.ExitCode()
	}
	return ExitError
}

// root builds the whole command tree; only the invoked branch runs.
func (a *app) root(others [][2]string) *cobra.Command {
	root := &cobra.Command{
		Use:           "opsagent",
		Short:         "A self-hosted AI agent for DevOps and SRE teams",
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageErrorf(c, "%v", err) })
	a.globalFlags(root)
	root.AddCommand(a.chatCmd(), a.sessionsCmd(), a.tasksCmd(), a.approvalsCmd(), a.incidentsCmd(), a.changesCmd(), a.postmortemsCmd(),
		a.webhooksCmd(), a.rulesCmd(), a.channelsCmd(), a.heartbeatsCmd(), a.maintenanceCmd(), a.billingCmd(), a.projectsCmd(),
		a.whoamiCmd(), a.evalCmd(), a.completionCmd(root))
	for _, o := range others {
		// Served elsewhere in the binary; here only so completion knows them.
		root.AddCommand(&cobra.Command{Use: o[0], Short: o[1], DisableFlagParsing: true, RunE: func(*cobra.Command, []string) error { return nil }})
	}
	return root
}

// group is a command that only holds subcommands: a missing or unknown
// subcommand is a usage error, not help with exit 0.
func group(use, short string, subs ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{Use: use, Short: short, Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf(cmd, "%s needs a subcommand (%s)", cmd.CommandPath(), subNames(cmd))
			}
			return usageErrorf(cmd, "unknown subcommand %q for %s (%s)", args[0], cmd.CommandPath(), subNames(cmd))
		}}
	c.AddCommand(subs...)
	return c
}

func subNames(c *cobra.Command) string {
	var names []string
	for _, s := range c.Commands() {
		if s.IsAvailableCommand() {
			names = append(names, s.Name())
		}
	}
	return strings.Join(names, ", ")
}

// Argument checks that fail as usage errors (exit 2).
func exactArgs(n int, names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErrorf(cmd, "%s takes %d argument(s) (%s), got %d", cmd.CommandPath(), n, strings.Join(names, " "), len(args))
		}
		return nil
	}
}

func rangeArgs(lo, hi int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < lo || len(args) > hi {
			return usageErrorf(cmd, "%s takes %d to %d arguments, got %d", cmd.CommandPath(), lo, hi, len(args))
		}
		return nil
	}
}
