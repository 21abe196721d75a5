package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sse "github.com/tmaxmax/go-sse"

	"github.com/opsagent/opsagent/internal/testkit"
	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// connWorld is the real binary serving, with connector processes of the
// same binary dialling it on loopback.
type connWorld struct {
	t      testing.TB
	beat   string // --connector-heartbeat
	bin    string
	data   string
	addr   string // fixed after the first start, so a restart keeps the port
	fake   *llmfake.Server
	server *testkit.Process
	logs   *lockedBuffer
	env    *testEnv
	c      *client
}

type lockedBuffer = testkit.SyncBuffer

func newConnWorld(t testing.TB) *connWorld { return newConnWorldBeat(t, "400ms") }

func newConnWorldBeat(t testing.TB, beat string) *connWorld {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	w := &connWorld{t: t, beat: beat, bin: testkit.SharedBinary(t), data: filepath.Join(t.TempDir(), "data"), addr: "127.0.0.1:0", fake: llmfake.New(t)}
	w.start()
	w.env = &testEnv{t: t, URL: "http://" + w.addr}
	w.c = w.env.register("ops@example.com")
	w.c.Project = w.c.must(201, "POST", "/api/projects", map[string]any{"name": "prod"}).JSON()["id"].(string)
	return w
}

// start runs `opsagent serve` and waits for its address.
func (w *connWorld) start() {
	w.t.Helper()
	w.server = testkit.StartProcess(w.t, w.bin, []string{"serve", "--addr", w.addr, "--data-dir", w.data, "--signup", "open", "--log-level", "info",
		"--connector-heartbeat", w.beat, "--shutdown-timeout", "2s", "--shutdown-grace", "1s",
		"--llm-provider", llm.ProviderOpenAI, "--llm-base-url", w.fake.BaseURL(llm.ProviderOpenAI),
		"--llm-api-key", llmfake.APIKey, "--llm-model", llmfake.Model}, os.Environ())
	w.t.Cleanup(w.server.Kill) // runs first: a test's end need not wait for a graceful drain
	w.addr, w.logs = w.server.Addr, w.server.Logs
}

// stop ends the server with SIGTERM.
func (w *connWorld) stop() { w.server.Stop() }

// hostProc is one `opsagent connector` process and its working directory.
type hostProc struct {
	name string
	dir  string
	cmd  *exec.Cmd
	logs *lockedBuffer
	done chan struct{} // closed when the process has exited
}

// enroll creates a connector through the API and returns its token.
func (w *connWorld) enroll(c *client, name string, labels map[string]string) (string, string) {
	r := c.must(201, "POST", "/api/connectors", map[string]any{"name": name, "labels": labels}).JSON()
	return r["token"].(string), r["id"].(string)
}

// runHost starts a connector process with its own work dir holding a few
// helper scripts (so tests count runs without shell control characters).
func (w *connWorld) runHost(name, token string, extra ...string) *hostProc {
	t := w.t
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	scripts := map[string]string{
		"mark":     "#!/bin/sh\necho \"$1\" >> runs.log\necho \"marked $1 on " + name + "\"\n",
		"slowmark": "#!/bin/sh\necho \"$1\" >> runs.log\necho started\nsleep 30\necho \"finished $1\" >> runs.log\n",
		"spawn":    "#!/bin/sh\nsleep 300 &\necho $! > bg.pid\necho spawned\nsleep 300\n",
		"showenv":  "#!/bin/sh\necho \"DB_PASSWORD=${DB_PASSWORD:-unset}\"\ncat host-file.txt 2>/dev/null\n",
		"flood":    "#!/bin/sh\nhead -c \"$1\" /dev/zero | tr '\\0' 'x'\necho\necho flood-end\n",
	}
	for n, body := range scripts {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return w.startHost(name, dir, token, extra...)
}

func (w *connWorld) startHost(name, dir, token string, extra ...string) *hostProc {
	args := append([]string{"connector", "--server", "http://" + w.addr, "--work-dir", dir, "--log-level", "debug"}, extra...)
	cmd := exec.Command(w.bin, args...)
	cmd.Env = append(os.Environ(), "OPSAGENT_CONNECTOR_TOKEN="+token)
	h := &hostProc{name: name, dir: dir, cmd: cmd, logs: &lockedBuffer{}, done: make(chan struct{})}
	cmd.Stderr, cmd.Stdout = h.logs, h.logs
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(h.done) }()
	w.t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		<-h.done
	})
	return h
}

// runs is what the host's mark scripts logged.
func (h *hostProc) runs() []string {
	b, _ := os.ReadFile(filepath.Join(h.dir, "runs.log"))
	return strings.Fields(string(b))
}

// waitOnline waits until every named connector of c's project is online.
func (w *connWorld) waitOnline(c *client, names ...string) {
	w.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		list := c.must(200, "GET", "/api/connectors", nil).JSON()
		online := map[string]bool{}
		for _, it := range list["items"].([]any) {
			m := it.(map[string]any)
			online[m["name"].(string)] = m["status"] == "online"
		}
		all := true
		for _, n := range names {
			all = all && online[n]
		}
		if all {
			return
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("connectors %v not online: %v\n%s", names, list, w.logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// runCommand makes the model call run_command with args once and then
// answer; it returns the session id and the first turn's events.
func (w *connWorld) runCommand(c *client, args map[string]any) (string, []sseEvent) {
	w.t.Helper()
	b, _ := json.Marshal(args)
	w.fake.Add(llmfake.ToolCall("run_command", string(b)), llmfake.Text("done"))
	res, evs := c.stream("POST", "/api/chat", map[string]any{"message": "run it"}, 0, nil)
	if res.StatusCode != 200 || len(evs) == 0 || evs[len(evs)-1].Type != "done" {
		w.t.Fatalf("chat: %d %v\n%s", res.StatusCode, types(evs), w.logs.String())
	}
	return res.Header.Get("X-Session-ID"), evs
}

// asyncChat starts a chat in the background; events arrive on the
// channel until the stream ends. followUp adds the model's answer after
// the tool result (leave it out when the test cuts the turn short).
func (w *connWorld) asyncChat(c *client, args map[string]any, followUp bool) <-chan sseEvent {
	b, _ := json.Marshal(args)
	w.fake.Add(llmfake.ToolCall("run_command", string(b)))
	if followUp {
		w.fake.Add(llmfake.Text("done"))
	}
	out := make(chan sseEvent, 256)
	body, _ := json.Marshal(map[string]any{"message": "run it"})
	req, _ := http.NewRequest("POST", w.env.URL+"/api/chat", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.Token)
	req.Header.Set("X-Project-ID", c.Project)
	go func() {
		defer close(out)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return
		}
		defer res.Body.Close()
		for ev, err := range sse.Read(res.Body, nil) {
			if err != nil {
				return
			}
			id, _ := strconv.ParseInt(ev.LastEventID, 10, 64)
			e := sseEvent{ID: id, Type: ev.Type}
			_ = json.Unmarshal([]byte(ev.Data), &e.Data)
			out <- e
		}
	}()
	return out
}

// until reads events until one of type typ, or fails after d.
func until(t *testing.T, ch <-chan sseEvent, typ string, d time.Duration) sseEvent {
	t.Helper()
	timer := time.After(d)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("stream ended before %s", typ)
			}
			if ev.Type == typ {
				return ev
			}
		case <-timer:
			t.Fatalf("no %s event within %s", typ, d)
		}
	}
}

// toolResult is the run's tool.result output and whether it is an error.
func toolResult(t *testing.T, evs []sseEvent) (string, map[string]any) {
	t.Helper()
	r := lastOf(t, evs, "tool.result")
	out, _ := r.Data["output"].(string)
	return out, r.Data
}

func waitFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
