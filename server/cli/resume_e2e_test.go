package cli_test

import (
	"bufio"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// A server restarted in the middle of a turn: the client shows what it
// streamed as it arrived, reconnects with Last-Event-ID when the server is
// back, shows the rest of the turn once, and exits with the turn's outcome.
func TestChatResumesAfterTheServerRestartsMidStream(t *testing.T) {
	s := startServer(t,
		llmfake.ToolCall("search_knowledge", `{"query":"latency"}`),
		llmfake.Hang(), // the second model call never answers: the turn is mid-way when the server stops
	)
	u := s.newUser("sre@example.com")
	cmd := exec.Command(bin, "chat", "--json", "why is the API slow?")
	cmd.Env = s.cliEnv(t.TempDir(), u.key)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuf{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var got []string
	// Streaming: the tool's result is shown while the turn is still running.
	waitFor := func(what string) {
		t.Helper()
		timeout := time.After(20 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the client ended before %q:\n%s\n%s", what, strings.Join(got, "\n"), stderr.String())
				}
				got = append(got, l)
				if strings.Contains(l, what) {
					return
				}
			case <-timeout:
				t.Fatalf("no %q in time:\n%s\n%s", what, strings.Join(got, "\n"), stderr.String())
			}
		}
	}
	waitFor(`"event":"tool.result"`)
	shown := len(got)

	s.stop()
	// The server comes back once the client has noticed and retries against
	// the closed port: a client slower than a fixed pause (a loaded machine)
	// asked the restarted server for the turn's state instead, found it
	// over, and never said it reconnected.
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(stderr.String(), "reconnecting"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the client did not say it lost the connection:\n%s", stderr.String())
		}
	}
	s.start(s.addr)

	waitFor(`"event":"done"`)
	for l := range lines {
		got = append(got, l)
	}
	if err := cmd.Wait(); err == nil || cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("exit after an interrupted turn: %v (want 1)\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "reconnecting") {
		t.Fatalf("the client did not say it lost the connection:\n%s", stderr.String())
	}
	var evs []jsonEvent
	for _, l := range got {
		var ev jsonEvent
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		evs = append(evs, ev)
	}
	checkOnce(t, evs)
	if len(evs) <= shown {
		t.Fatalf("nothing arrived after the restart: %v", evs)
	}
	done := evs[len(evs)-1]
	if done.Data["status"] != "failed" || !strings.Contains(done.Data["reason"].(string), "interrupted") {
		t.Fatalf("done after the restart: %v", done.Data)
	}
}
