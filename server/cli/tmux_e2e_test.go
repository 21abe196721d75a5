package cli_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// tmuxPane drives a terminal the way a person does: keys in, screen out.
type tmuxPane struct {
	t      *testing.T
	socket string
}

func (p *tmuxPane) tmux(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", p.socket, "-f", "/dev/null"}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (p *tmuxPane) keys(keys ...string) {
	p.tmux(append([]string{"send-keys", "-t", "cli"}, keys...)...)
}

func (p *tmuxPane) screen(flags ...string) string {
	return p.tmux(append([]string{"capture-pane", "-p", "-J", "-S", "-200", "-t", "cli"}, flags...)...)
}

// waitFor waits until the screen shows want at least n times.
func (p *tmuxPane) waitFor(want string, n int) string {
	p.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := p.screen()
		if strings.Count(s, want) >= n {
			return s
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the screen never showed %q (%d times):\n%s", want, n, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// An interactive chat in a real terminal: the answer streams, an approval
// is given inline, Ctrl-C asks before cancelling, Ctrl-D leaves.
func TestInteractiveChatInATerminal(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is required in CI (.ci/run installs it)")
		}
		t.Skip("tmux is not installed (apt-get install tmux); skipping the terminal test")
	}
	s := startServer(t,
		llmfake.Text("All good: nothing is on fire."),
		llmfake.ToolCall("run_command", `{"command":"echo hello >> hello.log && cat hello.log","target":"server"}`),
		llmfake.Text("It printed hello."),
		llmfake.Hang(),
	)
	u := s.newUser("term@example.com")
	var cmdline []string
	for _, kv := range s.cliEnv(t.TempDir(), u.key, "TERM=xterm-256color") {
		cmdline = append(cmdline, shellQuote(kv))
	}
	script := fmt.Sprintf("env -i %s %s chat; echo EXIT=$?; sleep 60", strings.Join(cmdline, " "), shellQuote(bin))
	p := &tmuxPane{t: t, socket: fmt.Sprintf("opsagent-test-%d", os.Getpid())}
	p.tmux("new-session", "-d", "-s", "cli", "-x", "160", "-y", "50", script)
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", p.socket, "kill-server").Run() })

	p.waitFor("you›", 1)
	p.keys("is anything on fire?", "Enter")
	p.waitFor("All good: nothing is on fire.", 1)
	p.waitFor("you›", 2)
	// Colours on a terminal (capture-pane -e keeps the escape sequences).
	if !strings.Contains(p.screen("-e"), "\x1b[") {
		t.Fatalf("no colours on a terminal:\n%q", p.screen("-e"))
	}

	p.keys("say hello on the server", "Enter")
	p.waitFor("Approve run_command?", 1)
	p.keys("y fine by me", "Enter")
	scr := p.waitFor("It printed hello.", 1)
	if !strings.Contains(scr, "approved; the agent continues") || !strings.Contains(scr, "✓ run_command") {
		t.Fatalf("after the inline approval:\n%s", scr)
	}
	p.waitFor("you›", 3)

	// Ctrl-C during a turn asks first; "n" keeps it, a second Ctrl-C then "y" cancels.
	p.keys("this one hangs", "Enter")
	p.waitFor("working…", 1) // the spinner, on a terminal only
	p.keys("C-c")
	p.waitFor("Cancel the running turn? [y/N]", 1)
	p.keys("n", "Enter")
	p.waitFor("continuing", 1)
	p.keys("C-c")
	p.waitFor("Cancel the running turn? [y/N]", 2)
	p.keys("y", "Enter")
	p.waitFor("cancelled", 2) // the cancelling note and the turn's summary
	p.waitFor("you›", 4)

	p.keys("C-d")
	p.waitFor("EXIT=0", 1)

	// NO_COLOR: the same terminal, no colours (a table has bold headers otherwise).
	for _, noColor := range []bool{false, true} {
		extra := []string{"TERM=xterm-256color"}
		if noColor {
			extra = append(extra, "NO_COLOR=1")
		}
		cmdline = cmdline[:0]
		for _, kv := range s.cliEnv(t.TempDir(), u.key, extra...) {
			cmdline = append(cmdline, shellQuote(kv))
		}
		p.tmux("respawn-pane", "-k", "-t", "cli", fmt.Sprintf("clear; env -i %s %s projects list; echo DONE; sleep 60", strings.Join(cmdline, " "), shellQuote(bin)))
		p.tmux("clear-history", "-t", "cli")
		p.waitFor("DONE", 1)
		if colored := strings.Contains(p.screen("-e"), "\x1b[1m") || strings.Contains(p.screen("-e"), "\x1b[01m"); colored == noColor {
			t.Fatalf("NO_COLOR=%v: colours %v:\n%q", noColor, colored, p.screen("-e"))
		}
	}
}
