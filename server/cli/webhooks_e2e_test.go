package cli_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// alertmanagerDeliveries are real Alertmanager 0.25 webhook bodies (firing, resolved).
func alertmanagerDeliveries(t *testing.T) [][]byte {
	t.Helper()
	b, err := os.ReadFile("../../testdata/webhooks/alertmanager/deliveries-0.25.0.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var d struct {
			Body json.RawMessage `json:"body"`
		}
		if err := json.Unmarshal(line, &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d.Body)
	}
	return out
}

func TestWebhookEventsAndIncidents(t *testing.T) {
	s := startServer(t, llmfake.Always(llmfake.Text("Investigating: CPU is high on api.")))
	u := s.newUser("oncall@example.com")
	env := s.cliEnv(t.TempDir(), u.key)
	task := decode[map[string]any](t, ok(t, env, "tasks", "create", "--json", "--name", "CPU alerts", "--prompt", "Investigate").stdout)
	id := task["id"].(string)
	const secret = "whtok_cli_test_secret_0123456789"
	s.must(200, "PUT", "/api/tasks/"+id+"/webhook", u.token, u.project, map[string]any{"provider": "alertmanager", "secret": secret})
	deliver := func(body []byte) {
		t.Helper()
		req, _ := http.NewRequest("POST", s.URL+"/api/webhooks/"+id, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+secret)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode/100 != 2 {
			t.Fatalf("delivery: %d", res.StatusCode)
		}
	}
	bodies := alertmanagerDeliveries(t)
	deliver(bodies[0])

	// The event, by task name; the incident it opened.
	var events map[string]any
	deadline := time.Now().Add(30 * time.Second)
	for {
		events = decode[map[string]any](t, ok(t, env, "webhooks", "events", "--task", "CPU alerts", "--json").stdout)
		items := events["items"].([]any)
		if len(items) == 1 && items[0].(map[string]any)["status"] != "received" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the event was not dispatched: %v", events)
		}
		time.Sleep(100 * time.Millisecond)
	}
	incidents := decode[map[string]any](t, ok(t, env, "incidents", "list", "--json").stdout)["items"].([]any)
	if len(incidents) != 1 {
		t.Fatalf("incidents: %v", incidents)
	}
	inc := incidents[0].(map[string]any)
	shown := ok(t, env, "incidents", "show", inc["id"].(string)).stdout
	if !strings.Contains(shown, inc["title"].(string)) || !strings.Contains(shown, "alertmanager") || !strings.Contains(shown, "KIND") {
		t.Fatalf("incidents show:\n%s", shown)
	}
	exits(t, 3, "", env, "incidents", "show", "0192f0c4-0000-7000-8000-000000000000")
	exits(t, 3, `no task named "nope"`, env, "webhooks", "events", "--task", "nope")

	// --follow prints what is there, then each new event as it arrives, until interrupted.
	follow := exec.Command(bin, "webhooks", "events", "--task", id, "--follow", "--json", "--interval", "200ms")
	follow.Env = env
	stdout, _ := follow.StdoutPipe()
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan map[string]any, 10)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var ev map[string]any
			_ = json.Unmarshal(sc.Bytes(), &ev)
			lines <- ev
		}
		close(lines)
	}()
	next := func() map[string]any {
		select {
		case ev := <-lines:
			return ev
		case <-time.After(10 * time.Second):
			t.Fatal("--follow printed nothing new")
		}
		return nil
	}
	if first := next(); first["id"] != events["items"].([]any)[0].(map[string]any)["id"] {
		t.Fatalf("first followed event: %v", first)
	}
	deliver(bodies[1])
	for {
		ev := next()
		if ev["id"] != events["items"].([]any)[0].(map[string]any)["id"] {
			break // the new delivery (perhaps after a status change of the first)
		}
	}
	_ = follow.Process.Signal(syscall.SIGINT)
	if err := follow.Wait(); err != nil {
		t.Fatalf("--follow after Ctrl-C: %v", err)
	}
}
