package cli_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// needTmux fails in CI (where .ci/run installs tmux) and skips elsewhere.
func needTmux(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is required in CI (.ci/run installs it)")
		}
		t.Skip("tmux is not installed (apt-get install tmux); skipping the terminal test")
	}
}

// newPane starts a tmux session named cli running script, ended with the test.
func newPane(t *testing.T, name, script string) *tmuxPane {
	p := &tmuxPane{t: t, socket: fmt.Sprintf("opsagent-%s-%d", name, os.Getpid())}
	p.tmux("new-session", "-d", "-s", "cli", "-x", "160", "-y", "50", script)
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", p.socket, "kill-server").Run() })
	return p
}

// Answering n at the inline approval prompt says "denied", a real word.
func TestInlineDenialInATerminalSaysDenied(t *testing.T) {
	needTmux(t)
	s := startServer(t,
		llmfake.ToolCall("run_command", `{"command":"echo hello >> hello.log","target":"server"}`),
		llmfake.Text("Understood, I did not run it."),
	)
	u := s.newUser("deny@example.com")
	var cmdline []string
	for _, kv := range s.cliEnv(t.TempDir(), u.key, "TERM=xterm-256color") {
		cmdline = append(cmdline, shellQuote(kv))
	}
	p := newPane(t, "deny", fmt.Sprintf("env -i %s %s chat; echo EXIT=$?; sleep 60", strings.Join(cmdline, " "), shellQuote(bin)))
	p.waitFor("you›", 1)
	p.keys("say hello on the server", "Enter")
	p.waitFor("Approve run_command?", 1)
	p.keys("n not now", "Enter")
	scr := p.waitFor("Understood, I did not run it.", 1)
	if !strings.Contains(scr, "denied; the agent continues") || strings.Contains(scr, "denyd") {
		t.Fatalf("after an inline denial:\n%s", scr)
	}
	p.keys("C-d")
	p.waitFor("EXIT=0", 1)
}

// `source <(opsagent completion bash)` works in a bash without Debian's
// bash-completion package (bash --norc loads none of it): Tab completes.
func TestBashCompletionWorksWithoutTheBashCompletionPackage(t *testing.T) {
	needTmux(t)
	binDir := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(binDir, "opsagent")); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	p := newPane(t, "compl", fmt.Sprintf("env -i PATH=%s:/usr/bin:/bin HOME=%s TERM=xterm PS1='$ ' bash --norc --noprofile",
		shellQuote(binDir), shellQuote(home)))
	p.waitFor("$ ", 1)
	p.keys("source <(opsagent completion bash) && echo SOURCED", "Enter")
	p.waitFor("SOURCED", 2)
	p.keys("opsagent tas", "Tab")
	p.keys("lis", "Tab")
	scr := p.waitFor("opsagent tasks list", 1)
	if strings.Contains(scr, "command not found") {
		t.Fatalf("the completion script needs a function the shell lacks:\n%s", scr)
	}
}
