package server_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
	"github.com/opsagent/opsagent/store"
)

// kill -9 of the node running a task run while its command runs: the node
// that takes over the scheduling resumes the run from its checkpoint, in
// the same session; the command is not run again (the model is told its
// outcome is unknown) and the run completes once.
func TestProcessClusterResumesADeadNodesTaskRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three server processes")
	}
	dir := t.TempDir()
	marker, ancestry := filepath.Join(dir, "marker"), filepath.Join(dir, "ancestry")
	script := filepath.Join(dir, "cleanup")
	// The script notes its ancestors' pids (the node running it is one).
	body := "#!/bin/sh\necho ran >> " + marker + "\np=$$\nwhile [ \"$p\" -gt 1 ]; do echo $p >> " + ancestry +
		"; p=$(ps -o ppid= -p $p | tr -d ' '); done\nsleep 4\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	fake := llmfake.New(t,
		llmfake.ToolCall("run_command", `{"command":"`+script+`","target":"server"}`),
		llmfake.Always(llmfake.Text("I checked whether the cleanup ran before trying again.")))
	pc := startProcCluster(t, 3, fake)
	local := newEnv(t, openSignup)
	n1 := pc.env(t, pc.nodes[0].URL, local)
	c := n1.register("oncall@example.com")
	c.Project = c.must(201, "POST", "/api/projects", map[string]any{"name": "prod"}).JSON()["id"].(string)
	c.must(201, "POST", "/api/rules", map[string]any{"kind": "must_always", "effect": "allow", "description": "the cleanup runs without asking",
		"tool": "run_command", "match_type": "glob", "pattern": "*"})
	tid := createTask(t, c, map[string]any{"name": "cleanup", "prompt": "Clean the cache"})["id"].(string)
	sid, _ := c.must(202, "POST", "/api/tasks/"+tid+"/trigger", nil).JSON()["session_id"].(string)
	if sid == "" {
		t.Fatal("the trigger started no run")
	}
	var dead = -1
	for end := time.Now().Add(30 * time.Second); dead < 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the run's command never started on a node")
		}
		b, _ := os.ReadFile(ancestry)
		for i, n := range pc.nodes {
			for _, line := range strings.Fields(string(b)) {
				if line == strconv.Itoa(n.Cmd.Process.Pid) {
					dead = i
				}
			}
		}
	}
	pc.nodes[dead].Kill()
	killed := time.Now()
	other := pc.env(t, pc.nodes[(dead+1)%3].URL, local)
	c2 := *c
	c2.env = other
	var d map[string]any
	for end := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the dead node's run did not complete elsewhere: %v", d)
		}
		if d = c2.must(200, "GET", "/api/sessions/detail/"+sid, nil).JSON(); d["status"] == "completed" {
			break
		}
	}
	took := time.Since(killed)
	t.Logf("kill -9 of the node running the task run: resumed and completed elsewhere %v later", took.Round(time.Millisecond))
	if took > 2*store.RunLease {
		t.Fatalf("completed %v after kill -9, want within two run leases (%v)", took, 2*store.RunLease)
	}
	time.Sleep(time.Second) // a second resume, were there one, would have run by now
	b, _ := os.ReadFile(marker)
	if n := strings.Count(string(b), "\n"); n != 1 {
		t.Fatalf("the command ran %d times, want exactly once", n)
	}
	reqs := fake.Requests()
	if res := reqs[len(reqs)-1].ToolResults(); len(res) != 1 || !strings.Contains(res[0].Content, "interrupted; outcome unknown") {
		t.Fatalf("the model was not told the call was interrupted: %+v", res)
	}
	task := c2.must(200, "GET", "/api/tasks/"+tid, nil).JSON()
	if task["last_status"] != "completed" || task["last_session_id"] != sid {
		t.Fatalf("the task's last run: %v", task)
	}
}
