package tools

import (
	"context"
	"errors"
	"fmt"
	"github.com/opsagent/opsagent/server/sandbox"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/connector"
	"github.com/opsagent/opsagent/vault"
)

// RemoteHost is one connector a command can run on.
type RemoteHost struct {
	ID       string
	Name     string
	Hostname string
}

// Label is how a person reads the host: its name and the machine's own.
func (h RemoteHost) Label() string {
	if h.Hostname == "" || h.Hostname == h.Name {
		return h.Name
	}
	return h.Name + " (" + h.Hostname + ")"
}

// RemoteCommand is what a connector is asked to run.
type RemoteCommand struct {
	Command string
	Env     map[string]string
	Timeout time.Duration
	// Sandbox is the profile the host runs it under.
	Sandbox sandbox.Profile
}

// RemoteResult is how it ended on the host.
type RemoteResult struct {
	ExitCode  int
	Duration  time.Duration
	TimedOut  bool
	Refused   string // the host's allow-list refused it: it did not run
	Error     string // it could not start
	Truncated bool   // the connector stopped forwarding output at its cap
	// SandboxRefused names what the host's sandbox refused the command.
	SandboxRefused []string
}

// Remote runs commands on a project's connectors. The server implements it
// over its connector hub.
type Remote interface {
	// Resolve turns a target (a connector name or a label selector such as
	// env=prod,role=db) into the connected hosts it names. The error is
	// written for the model: unknown, offline, or refused by the
	// connector's server-side allow-list.
	Resolve(ctx context.Context, target, command string) ([]RemoteHost, error)
	// Run runs the command on one host, streaming its output into out.
	Run(ctx context.Context, host RemoteHost, cmd RemoteCommand, out io.Writer) (RemoteResult, error)
	// MaxTimeout is the longest a command may run in this project.
	MaxTimeout(ctx context.Context) time.Duration
}

// IsSelector reports a label-selector target (k=v[,k=v...]).
func IsSelector(target string) bool { return strings.Contains(target, "=") }

// renderRemote names the exact hosts a target resolves to now, for the
// approval card; the raw target when it resolves to none.
func (r *RunCommand) renderRemote(target, command string) string {
	if r.Remote == nil {
		return target
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	hosts, err := r.Remote.Resolve(ctx, target, command)
	if err != nil || len(hosts) == 0 {
		return target
	}
	return renderHosts(target, hosts)
}

// renderHosts is how a person reads the hosts a target resolved to.
func renderHosts(target string, hosts []RemoteHost) string {
	labels := make([]string, len(hosts))
	for i, h := range hosts {
		labels[i] = h.Label()
	}
	if IsSelector(target) {
		return target + ": " + strings.Join(labels, ", ")
	}
	return strings.Join(labels, ", ")
}

// runRemote runs the command on every host the target names, at once,
// streaming each host's masked output live and returning every host's
// exit code, duration and (capped) output.
func (r *RunCommand) runRemote(ctx context.Context, a commandArgs, target string) (string, error) {
	if r.Remote == nil {
		return "", &agent.Refusal{Reason: fmt.Sprintf("no connector %q: no connector agent serves this project", target)}
	}
	hosts, err := r.Remote.Resolve(ctx, target, a.Command)
	if err != nil {
		return "", &agent.Refusal{Reason: err.Error()}
	}
	if approved, ok := ctx.Value(approvedTargetKey{}).(string); ok {
		if now := renderHosts(target, hosts); now != approved {
			return "", &agent.Refusal{Reason: fmt.Sprintf("the hosts this target names changed since the approval "+
				"(approved: %s; now: %s), so the command did not run on hosts nobody approved; ask again", approved, now)}
		}
	}
	env, err := r.remoteEnv(ctx, a.Secrets)
	if err != nil {
		return "", err
	}
	// Every secret of the project and its org is masked in what hosts send
	// back, not only the ones injected: a host may hold others in files.
	masker, err := r.fullMasker(ctx, env)
	if err != nil {
		return "", err
	}
	limit := r.MaxTimeout
	if m := r.Remote.MaxTimeout(ctx); m > 0 {
		limit = m
	}
	timeout := (&RunCommand{DefaultTimeout: r.DefaultTimeout, MaxTimeout: limit}).timeout(a.TimeoutSeconds)
	capBytes := orDefault(r.MaxOutput, 256<<10)
	perHost := max(capBytes/len(hosts), 16<<10)
	live := agent.ToolOutput(ctx)
	outs := make([]hostOutcome, len(hosts))
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = r.runOnHost(ctx, h, RemoteCommand{Command: a.Command, Env: env, Timeout: timeout, Sandbox: SandboxOf(ctx)}, masker, perHost, live)
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	if len(hosts) == 1 {
		switch o := outs[0]; {
		case o.refused:
			return "", &agent.Refusal{Reason: o.text}
		case o.failed:
			return "", errors.New(strings.TrimSuffix(o.text, "\n"))
		default:
			return o.text, nil
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "ran on %d connectors (%s)\n", len(hosts), target)
	for _, o := range outs {
		b.WriteString("\n")
		b.WriteString(o.text)
		if !strings.HasSuffix(o.text, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String(), nil
}

// hostOutcome is one host's part of a call: refused (by the host's
// allow-list: it did not run), failed (lost, could not start) or ran.
type hostOutcome struct {
	text            string
	refused, failed bool
}

func (r *RunCommand) runOnHost(ctx context.Context, h RemoteHost, cmd RemoteCommand, masker *vault.Masker, limit int, live agent.OutputFunc) hostOutcome {
	buf := newCapBuffer(limit)
	stream := &liveWriter{host: h.Name, fn: live, budget: limit}
	mw := masker.Writer(io.MultiWriter(buf, stream))
	res, err := r.Remote.Run(ctx, h, cmd, mw)
	_ = mw.Close()
	stream.finish()
	where := "target " + h.Label()
	switch {
	case err != nil:
		return hostOutcome{text: fmt.Sprintf("%s: %s\n%s", where, masker.Mask(err.Error()), buf.String()), failed: true}
	case res.Refused != "":
		return hostOutcome{text: "refused by the host " + h.Label() + ": " + masker.Mask(res.Refused), refused: true}
	case res.Error != "":
		return hostOutcome{text: fmt.Sprintf("%s: could not start the command: %s\n", where, masker.Mask(res.Error)), failed: true}
	}
	head := fmt.Sprintf("exit code %d", res.ExitCode)
	if res.TimedOut {
		head = fmt.Sprintf("timed out after %s: the command's process group was killed", cmd.Timeout)
	}
	out := buf.String()
	if res.Truncated {
		out += "\n[the host stopped forwarding output at its cap]\n"
	}
	out += RefusalNote(res.SandboxRefused)
	return hostOutcome{text: fmt.Sprintf("%s (%s, %s)\n%s", head, where, res.Duration.Round(time.Millisecond), out)}
}

// remoteEnv resolves the secrets the call names, and only those: no other
// value travels to a host.
func (r *RunCommand) remoteEnv(ctx context.Context, names []string) (map[string]string, error) {
	env := map[string]string{}
	if len(names) == 0 {
		return env, nil
	}
	for _, n := range names {
		if err := vault.ValidateName(n); err != nil {
			return nil, fmt.Errorf("secret %q cannot be injected: %v", n, err)
		}
	}
	if r.Secrets == nil {
		return nil, errors.New("no secrets are available to this run")
	}
	vals, err := r.Secrets(ctx, names)
	if err != nil {
		return nil, errors.New("the secrets could not be read; the command did not run")
	}
	var missing []string
	for _, n := range names {
		v, ok := vals[n]
		if !ok {
			missing = append(missing, n)
			continue
		}
		env[n] = v
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("unknown secret(s) %s: the project has no such secret; the command did not run", strings.Join(missing, ", "))
	}
	return env, nil
}

func (r *RunCommand) fullMasker(ctx context.Context, env map[string]string) (*vault.Masker, error) {
	values := make([]string, 0, len(env))
	for _, v := range env {
		values = append(values, v)
	}
	if r.AllSecretValues != nil {
		all, err := r.AllSecretValues(ctx)
		if err != nil {
			return nil, errors.New("the project's secrets could not be read to mask the output; the command did not run")
		}
		values = append(values, all...)
	}
	return vault.NewMasker(values...), nil
}

// liveWriter passes output on as tool.output events up to a budget, then
// says once that the live view stops there (the result keeps the tail).
// It holds nothing: what it passed is in the run's event log.
type liveWriter struct {
	host    string
	fn      agent.OutputFunc
	budget  int
	sent    int
	dropped int64
	part    []byte // the start of a character the last write split (events are JSON text)
}

func (w *liveWriter) Write(p []byte) (int, error) {
	if room := w.budget - w.sent; room > 0 {
		k := min(room, len(p))
		text := append(w.part, p[:k]...)
		cut := connector.CompleteUTF8(text)
		if cut > 0 {
			w.fn(w.host, string(text[:cut]), false)
		}
		w.part = append([]byte(nil), text[cut:]...)
		w.sent += k
		w.dropped += int64(len(p) - k)
		return len(p), nil
	}
	w.dropped += int64(len(p))
	return len(p), nil
}

func (w *liveWriter) finish() {
	if len(w.part) > 0 {
		w.fn(w.host, string(w.part), false)
	}
	if w.dropped > 0 {
		w.fn(w.host, fmt.Sprintf("[live output capped at %d bytes; %d more bytes were not streamed]", w.budget, w.dropped), true)
	}
}

type approvedTargetKey struct{}

// WithApprovedTarget records the target as a person approved it (the
// rendered hosts); the call then runs only if it still resolves to them.
func WithApprovedTarget(ctx context.Context, rendered string) context.Context {
	return context.WithValue(ctx, approvedTargetKey{}, rendered)
}
