package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/sandbox"
	"github.com/opsagent/opsagent/vault"
)

// TargetServer names the opsagent host itself as a run_command target.
const TargetServer = "server"

// RunCommand is the run_command tool. Commands run on connector agents
// (one by name, or every connected one a label selector names; see
// run_remote.go) or, only when the operator turned it on, on the server
// host itself in a per-project working directory, with a timeout, an
// output cap and a minimal environment. Secrets named in the call are
// injected as environment variables; every value is masked in the output,
// so it reaches neither the model, the transcript nor a log.
type RunCommand struct {
	// AllowLocal lets commands run on the server host (OPSAGENT_ALLOW_LOCAL_COMMANDS).
	AllowLocal bool
	// WorkDir is the working directory of local commands (created on use).
	WorkDir string
	// Secrets resolves secret names to values (the project's and its org's).
	Secrets func(ctx context.Context, names []string) (map[string]string, error)
	// DefaultTimeout (60 s) and MaxTimeout (10 min) bound a command.
	DefaultTimeout, MaxTimeout time.Duration
	// MaxOutput bounds the combined stdout and stderr kept (256 KiB).
	MaxOutput int
	// Remote runs commands on the project's connectors; nil when none serve it.
	Remote Remote
	// Kernel is what this host's kernel offers the sandbox.
	Kernel sandbox.Kernel
	// AllSecretValues are every secret value of the project and its org,
	// masked in everything a connector sends back.
	AllSecretValues func(ctx context.Context) ([]string, error)
}

type commandArgs struct {
	Command        string   `json:"command"`
	Target         string   `json:"target"`
	Secrets        []string `json:"secrets"`
	TimeoutSeconds int      `json:"timeout_seconds"`
}

// minimalPath is the only PATH a local command gets.
const minimalPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Spec describes the tool to the model.
func (r *RunCommand) Spec() llm.ToolSpec {
	where := "Targets are the project's connectors: one by name (`db-1`), or every connected one matching a label " +
		"selector (`env=prod,role=db`); list_connectors shows them. Running commands on the server host is turned off."
	if r.AllowLocal {
		where += ` Target "server" runs on the opsagent host in a scratch working directory.`
	}
	return llm.ToolSpec{Name: "run_command",
		Description: "Run a shell command (sh -c) on a target and read its exit code and output. " + where +
			" Secrets are referenced by name in `secrets` and appear to the command as environment variables " +
			"($NAME); you never see their values. Commands can change things and may need a person's approval.",
		Parameters: schema(map[string]any{
			"command": str("the shell command line", "minLength", 1, "maxLength", 16384),
			"target":  str(`where to run it: a connector name, a label selector such as env=prod,role=db, or "server" for the opsagent host`, "minLength", 1, "maxLength", 256, "default", TargetServer),
			"secrets": map[string]any{"type": "array", "maxItems": 32, "uniqueItems": true,
				"items": str("secret name", "pattern", "^[A-Za-z_][A-Za-z0-9_]{0,63}$")},
			"timeout_seconds": map[string]any{"type": "integer", "minimum": 1, "maximum": 3600},
		}, "command")}
}

// ReadOnly is false: a shell command can change anything.
func (r *RunCommand) ReadOnly() bool { return false }

// Render shows the exact command and target, secrets by name only.
func (r *RunCommand) Render(args json.RawMessage) (Rendered, error) {
	var a commandArgs
	if err := decode(args, &a); err != nil {
		return Rendered{}, err
	}
	target := targetOf(a)
	if target != TargetServer {
		target = r.renderRemote(target, a.Command)
	}
	return Rendered{Target: target, Command: a.Command}, nil
}

func targetOf(a commandArgs) string {
	if a.Target == "" {
		return TargetServer
	}
	return a.Target
}

// Run runs the command and reports its exit code and (masked) output.
func (r *RunCommand) Run(ctx context.Context, args json.RawMessage) (string, error) {
	var a commandArgs
	if err := decode(args, &a); err != nil {
		return "", err
	}
	target := targetOf(a)
	if target != TargetServer {
		return r.runRemote(ctx, a, target)
	}
	if !r.AllowLocal {
		return "", fmt.Errorf("running commands on the server host is turned off (the operator can enable it with " +
			"OPSAGENT_ALLOW_LOCAL_COMMANDS), and no connector agent is connected: this command did not run")
	}
	env, injected, err := r.environment(ctx, a.Secrets)
	if err != nil {
		return "", err
	}
	// The output streams live (tool.output) before the runner masks the
	// result, so it is masked here for every secret of the project and its
	// org, not only the injected ones: a file the command reads may hold
	// others (as on a connector).
	masker, err := r.fullMasker(ctx, injected)
	if err != nil {
		return "", err
	}
	timeout := r.timeout(a.TimeoutSeconds)
	if err := os.MkdirAll(r.WorkDir, 0o700); err != nil {
		return "", fmt.Errorf("working directory: %v", err)
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	prof, cleanup, err := localSandbox(SandboxOf(ctx), r.Kernel, r.WorkDir)
	if err != nil {
		return "", fmt.Errorf("the sandbox could not be prepared (%v); the command did not run", err)
	}
	defer cleanup()
	cmd, err := sandbox.Command(cctx, prof, "/bin/sh", "-c", a.Command)
	if err != nil {
		return "", err
	}
	cmd.Dir, cmd.Env = r.WorkDir, tmpEnv(env, prof.TempDir)
	cmd.WaitDelay = 2 * time.Second
	capBytes := orDefault(r.MaxOutput, 256<<10)
	buf := newCapBuffer(capBytes)
	// The output also streams live (tool.output), masked like the result,
	// as a connector's does: a long command is watched while it runs.
	stream := &liveWriter{host: TargetServer, fn: agent.ToolOutput(ctx), budget: capBytes}
	mw := masker.Writer(io.MultiWriter(buf, stream))
	cmd.Stdout, cmd.Stderr = mw, mw
	started := time.Now()
	runErr := cmd.Run()
	_ = mw.Close()
	stream.finish()
	took := time.Since(started).Round(time.Millisecond)
	var head string
	var exit *exec.ExitError
	switch {
	case cctx.Err() == context.DeadlineExceeded && ctx.Err() == nil:
		head = fmt.Sprintf("timed out after %s: the command was killed", timeout)
	case ctx.Err() != nil:
		return "", ctx.Err()
	case runErr == nil:
		head = "exit code 0"
	case errors.As(runErr, &exit):
		head = fmt.Sprintf("exit code %d", exit.ExitCode())
	default:
		return "", fmt.Errorf("could not start the command: %s", masker.Mask(runErr.Error()))
	}
	out := buf.String()
	return fmt.Sprintf("%s (target %s, %s)\n%s%s", head, TargetServer, took, out, RefusalNote(prof.Refusals(out, r.WorkDir))), nil
}

func (r *RunCommand) timeout(seconds int) time.Duration {
	def, limit := r.DefaultTimeout, r.MaxTimeout
	if def <= 0 {
		def = time.Minute
	}
	if limit <= 0 {
		limit = 10 * time.Minute
	}
	if seconds <= 0 {
		return min(def, limit)
	}
	return min(time.Duration(seconds)*time.Second, limit)
}

// environment is the minimal environment plus the named secrets, and the
// values injected by name.
func (r *RunCommand) environment(ctx context.Context, names []string) ([]string, map[string]string, error) {
	env := []string{"PATH=" + minimalPath, "HOME=" + r.WorkDir, "LANG=C.UTF-8", "TMPDIR=" + filepath.Join(r.WorkDir, ".tmp")}
	if len(names) == 0 {
		return env, nil, nil
	}
	for _, n := range names {
		if err := vault.ValidateName(n); err != nil {
			return nil, nil, fmt.Errorf("secret %q cannot be injected: %v", n, err)
		}
	}
	if r.Secrets == nil {
		return nil, nil, errors.New("no secrets are available to this run")
	}
	vals, err := r.Secrets(ctx, names)
	if err != nil {
		return nil, nil, errors.New("the secrets could not be read; the command did not run")
	}
	var missing []string
	injected := make(map[string]string, len(names))
	for _, n := range names {
		v, ok := vals[n]
		if !ok {
			missing = append(missing, n)
			continue
		}
		env = append(env, n+"="+v)
		injected[n] = v
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, nil, fmt.Errorf("unknown secret(s) %s: the project has no such secret; the command did not run", strings.Join(missing, ", "))
	}
	_ = os.MkdirAll(filepath.Join(r.WorkDir, ".tmp"), 0o700)
	return env, injected, nil
}
