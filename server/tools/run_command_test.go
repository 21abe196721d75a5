package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func runCmd(t *testing.T, r *RunCommand, args map[string]any) (string, error) {
	t.Helper()
	b, _ := json.Marshal(args)
	return r.Run(context.Background(), b)
}

func TestRunCommandLocalIsOffByDefault(t *testing.T) {
	r := &RunCommand{WorkDir: t.TempDir()}
	_, err := runCmd(t, r, map[string]any{"command": "touch ran"})
	if err == nil || !strings.Contains(err.Error(), "OPSAGENT_ALLOW_LOCAL_COMMANDS") {
		t.Fatalf("got %v", err)
	}
	_, err = runCmd(t, &RunCommand{AllowLocal: true, WorkDir: t.TempDir()}, map[string]any{"command": "true", "target": "db-1"})
	if err == nil || !strings.Contains(err.Error(), `no connector "db-1"`) {
		t.Fatalf("connector target: %v", err)
	}
}

func TestRunCommandInjectsSecretsAndMasksThem(t *testing.T) {
	dir := t.TempDir()
	r := &RunCommand{AllowLocal: true, WorkDir: dir, Secrets: func(_ context.Context, names []string) (map[string]string, error) {
		return map[string]string{"DB_PASSWORD": "hunter2-very-secret", "OTHER": "not-asked-for"}, nil
	}}
	out, err := runCmd(t, r, map[string]any{"command": `echo "pw=$DB_PASSWORD"; echo "$DB_PASSWORD" | wc -c; pwd; env | sort`, "secrets": []string{"DB_PASSWORD"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "hunter2") || !strings.Contains(out, "pw=********") {
		t.Fatalf("secret not masked:\n%s", out)
	}
	if !strings.Contains(out, "20\n") || !strings.Contains(out, dir) || !strings.HasPrefix(out, "exit code 0") {
		t.Fatalf("command did not see the secret or the working dir:\n%s", out)
	}
	if strings.Contains(out, "OTHER=") || strings.Contains(out, "GOPATH") {
		t.Fatalf("environment not minimal:\n%s", out)
	}
	_, err = runCmd(t, r, map[string]any{"command": "true", "secrets": []string{"MISSING"}})
	if err == nil || !strings.Contains(err.Error(), "unknown secret(s) MISSING") {
		t.Fatalf("missing secret: %v", err)
	}
}

func TestRunCommandTimeoutKillsTheGroupAndCapsOutput(t *testing.T) {
	r := &RunCommand{AllowLocal: true, WorkDir: t.TempDir(), MaxOutput: 1000}
	started := time.Now()
	out, err := runCmd(t, r, map[string]any{"command": "sleep 30 | cat", "timeout_seconds": 1})
	if err != nil || !strings.Contains(out, "timed out after 1s") {
		t.Fatalf("got %q %v", out, err)
	}
	if time.Since(started) > 10*time.Second {
		t.Fatal("the pipeline outlived the timeout")
	}
	out, err = runCmd(t, r, map[string]any{"command": "seq 1 5000; exit 3"})
	if err != nil || !strings.HasPrefix(out, "exit code 3") || !strings.Contains(out, "bytes of output dropped") || !strings.Contains(out, "5000") {
		t.Fatalf("cap: %q %v", out, err)
	}
}
