package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/opsagent/opsagent/store"
)

// The receiver never loses what it acknowledged: the real binary ingests
// signed deliveries from many clients, is SIGKILLed mid-stream and
// restarted; every acknowledged event is stored exactly once, the pending
// ones are dispatched after the restart, and the database is intact.
func TestWebhookSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "opsagent")
	build := exec.Command("go", "build", "-o", bin, "github.com/opsagent/opsagent")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	data := filepath.Join(dir, "data")
	cmd, base := startBinary(t, bin, data)
	api := func(method, path, token, project string, body any) map[string]any {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, base+path, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if project != "" {
			req.Header.Set("X-Project-ID", project)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var m map[string]any
		raw, _ := io.ReadAll(res.Body)
		if res.StatusCode >= 300 {
			t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, raw)
		}
		_ = json.Unmarshal(raw, &m)
		return m
	}
	tok := api("POST", "/api/auth/register", "", "", map[string]any{"email": "o@example.com", "password": "correct horse battery", "name": "o"})["access_token"].(string)
	proj := api("POST", "/api/projects", tok, "", map[string]any{"name": "prod"})["id"].(string)
	task := api("POST", "/api/tasks", tok, proj, map[string]any{"name": "alert", "prompt": "look", "overlap_policy": "queue"})["id"].(string)
	secret := api("PUT", "/api/tasks/"+task+"/webhook", tok, proj, map[string]any{"provider": "generic", "scheme": "hmac_sha256",
		"rate_limit_per_minute": 100000, "dedupe_window_seconds": 0})["secret"].(string)

	var mu sync.Mutex
	acked := map[string]bool{}
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	hc := &http.Client{Timeout: 5 * time.Second}
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				key := fmt.Sprintf("w%d-%d", w, i)
				body := []byte(fmt.Sprintf(`{"title":"alert %s","severity":"warning"}`, key))
				req, _ := http.NewRequest("POST", base+"/api/webhooks/"+task, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Idempotency-Key", key)
				req.Header.Set("X-Webhook-Signature", "sha256="+hmacHex(secret, body))
				res, err := hc.Do(req)
				if err != nil {
					return // the server died
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode == 202 {
					mu.Lock()
					acked[key] = true
					mu.Unlock()
				}
			}
		}()
	}
	time.Sleep(1500 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	stop()
	wg.Wait()
	if len(acked) < 100 {
		t.Fatalf("only %d deliveries acknowledged before the kill", len(acked))
	}
	// Restart: the server comes up on the same data and dispatches what waited.
	cmd2, _ := startBinary(t, bin, data)
	time.Sleep(1500 * time.Millisecond)
	_ = cmd2.Process.Signal(syscall.SIGTERM)
	_ = cmd2.Wait()

	db, err := store.Open(context.Background(), filepath.Join(data, "opsagent.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	if err := db.Reader().QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q %v", check, err)
	}
	rows, err := db.Reader().Query(`SELECT idem_key, count(*), max(status) FROM webhook_events WHERE task_id = ? GROUP BY idem_key`, task)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]bool{}
	for rows.Next() {
		var k, status string
		var n int
		if err := rows.Scan(&k, &n, &status); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("event %s stored %d times", k, n)
		}
		if status == store.EventReceived {
			t.Errorf("event %s never dispatched after the restart", k)
		}
		stored[k] = true
	}
	rows.Close()
	for k := range acked {
		if !stored[k] {
			t.Errorf("acknowledged event %s lost", k)
		}
	}
	var runs, events int
	db.Reader().QueryRow(`SELECT count(*) FROM task_runs WHERE task_id = ?`, task).Scan(&runs)
	db.Reader().QueryRow(`SELECT count(*) FROM webhook_events WHERE task_id = ?`, task).Scan(&events)
	if runs != events {
		t.Errorf("%d events but %d runs: each event dispatches exactly once", events, runs)
	}
	t.Logf("%d acknowledged before SIGKILL, %d stored (unacknowledged ones may be stored too), %d runs", len(acked), len(stored), runs)
}

var listenRE = regexp.MustCompile(`opsagent listening" addr=(\S+)`)

// startBinary runs `opsagent serve` on a free port and returns its base URL.
func startBinary(t *testing.T, bin, data string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--data-dir", data, "--signup", "open", "--log-level", "info")
	cmd.Env = append(os.Environ(), "OPSAGENT_LOG_LEVEL=info")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listenRE.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	select {
	case a := <-addr:
		return cmd, "http://" + a
	case <-time.After(30 * time.Second):
		t.Fatal("server did not start")
	}
	return nil, ""
}

func hmacHex(secret string, body []byte) string {
	return hmacSHA256Hex([]byte(secret), body)
}
