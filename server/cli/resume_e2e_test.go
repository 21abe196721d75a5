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

// A server restarted (SIGTERM) in the middle of a turn (issue 34): the
// client shows what it streamed as it arrived, reconnects with Last-Event-ID
// when the server is back, and the turn itself resumes from its last
// completed step and completes; the client and an SSE viewer each see every
// event once, and the model is asked again with the transcript as it was.
func TestChatResumesAfterTheServerRestartsMidStream(t *testing.T) {
	s := startServerWith(t, []string{"OPSAGENT_SHUTDOWN_GRACE=1s"},
		llmfake.ToolCall("search_knowledge", `{"query":"latency"}`),
		llmfake.Hang(), // the second model call never answers: the turn is mid-way when the server stops
		llmfake.Text("The API is slow because its cache is cold."),
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
	var first jsonEvent
	_ = json.Unmarshal([]byte(got[0]), &first)
	sid, _ := first.Data["session_id"].(string)
	viewer := followSSE(t, s, u, sid)

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
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after a resumed turn: %v (want 0)\n%s", err, stderr.String())
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
	if done.Data["status"] != "completed" || done.Data["agent_status"] != "completed" {
		t.Fatalf("done after the restart: %v", done.Data)
	}
	if !hasEvent(evs, "run.resumed") || !strings.Contains(strings.Join(got, "\n"), "cache is cold") {
		t.Fatalf("the resumed turn's events are missing:\n%s", strings.Join(got, "\n"))
	}
	// The SSE viewer, reconnecting with Last-Event-ID, saw the same events once.
	seen := <-viewer
	checkOnce(t, seen)
	if len(seen) != len(evs) || seen[len(seen)-1].ID != done.ID {
		t.Fatalf("the SSE viewer saw %d events (last %d), the client %d (last %d)", len(seen), seen[len(seen)-1].ID, len(evs), done.ID)
	}
	// The model's next request after the restart holds the transcript once:
	// the prompt, the call and its result, nothing twice.
	reqs := s.fake.Requests()
	last := reqs[len(reqs)-1]
	counts := map[string]int{}
	for _, m := range last.Messages {
		counts[m.Role]++
	}
	if counts["user"] != 1 || counts["assistant"] != 1 || counts["tool"] != 1 {
		t.Fatalf("the re-issued model call's messages: %+v", last.Messages)
	}
	sess := s.must(200, "GET", "/api/sessions/detail/"+sid, u.token, u.project, nil)
	if sess["status"] != "completed" {
		t.Fatalf("session after the resumed turn: %v", sess)
	}
}

func hasEvent(evs []jsonEvent, typ string) bool {
	for _, e := range evs {
		if e.Type == typ {
			return true
		}
	}
	return false
}
