package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// nodeClientDir returns a directory holding testdata/mcp with its pinned
// node_modules: the checked-in one when `npm ci` already ran there (CI does
// it in .ci/run), else a temporary copy installed from package-lock.json.
// Without node or npm the test is skipped on a workstation and fails in CI.
func nodeClientDir(t *testing.T) string {
	t.Helper()
	unavailable := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("CI") != "" {
			t.Fatalf(format, args...)
		}
		t.Skipf(format, args...)
	}
	if _, err := exec.LookPath("node"); err != nil {
		unavailable("node is not installed: %v", err)
	}
	src := filepath.Join("testdata", "mcp")
	if _, err := os.Stat(filepath.Join(src, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err == nil {
		return src
	}
	if _, err := exec.LookPath("npm"); err != nil {
		unavailable("npm is not installed: %v", err)
	}
	dir := t.TempDir()
	for _, name := range []string{"package.json", "package-lock.json", "client.mjs"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		unavailable("npm ci in %s: %v\n%s", dir, err, out)
	}
	return dir
}

// The official TypeScript SDK client (a 2025-protocol client) against the
// stateless mounts: list, curated calls, a bridged call, a validation error.
func TestMCPOfficialNodeClient(t *testing.T) {
	t.Parallel()
	dir := nodeClientDir(t)
	f := newMCPFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "client.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "OPSAGENT_URL="+f.env.URL, "OPSAGENT_TOKEN="+f.ownerToken, "PROJECT_ID="+f.project, "TASK_ID="+f.task)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node client: %v\nstderr: %s\nstdout: %s", err, stderr.String(), stdout.String())
	}
	var out struct {
		Server       map[string]any `json:"server"`
		CuratedTools []string       `json:"curatedTools"`
		Search       struct {
			IsError bool   `json:"isError"`
			Text    string `json:"text"`
		} `json:"search"`
		ListTasks struct {
			IsError    bool           `json:"isError"`
			Structured map[string]any `json:"structured"`
		} `json:"listTasks"`
		RestTools     []string       `json:"restTools"`
		GetTaskSchema map[string]any `json:"getTaskSchema"`
		GetTask       struct {
			IsError    bool           `json:"isError"`
			Structured map[string]any `json:"structured"`
		} `json:"getTask"`
		BadLimit struct {
			IsError bool   `json:"isError"`
			Text    string `json:"text"`
		} `json:"badLimit"`
		Whoami struct {
			IsError    bool           `json:"isError"`
			Structured map[string]any `json:"structured"`
		} `json:"whoami"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("node output %q: %v (stderr %s)", stdout.String(), err, stderr.String())
	}
	if out.Server["name"] != "opsagent" {
		t.Fatalf("server info %v", out.Server)
	}
	if !slices.Contains(out.CuratedTools, "search_knowledge") || !slices.Contains(out.CuratedTools, "trigger_task") {
		t.Fatalf("curated tools %v", out.CuratedTools)
	}
	if out.Search.IsError || !strings.Contains(out.Search.Text, "disk-full.md") {
		t.Fatalf("search_knowledge: %+v", out.Search)
	}
	if items, _ := out.ListTasks.Structured["items"].([]any); out.ListTasks.IsError || len(items) != 1 {
		t.Fatalf("list_tasks: %+v", out.ListTasks)
	}
	if !slices.Contains(out.RestTools, "get_tasks_task_id") || !slices.Contains(out.RestTools, "post_tasks_task_id_trigger") {
		t.Fatalf("bridged tools %v", out.RestTools)
	}
	if req, _ := out.GetTaskSchema["required"].([]any); len(req) != 1 || req[0] != "task_id" {
		t.Fatalf("get_tasks_task_id schema %v", out.GetTaskSchema)
	}
	if out.GetTask.IsError || out.GetTask.Structured["id"] != f.task {
		t.Fatalf("get_tasks_task_id: %+v", out.GetTask)
	}
	if !out.BadLimit.IsError || !strings.Contains(out.BadLimit.Text, "422") {
		t.Fatalf("get_tasks limit 1000: %+v", out.BadLimit)
	}
	if out.Whoami.IsError || out.Whoami.Structured["email"] != "mcp-owner@example.com" {
		t.Fatalf("whoami: %+v", out.Whoami)
	}
}
