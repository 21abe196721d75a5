package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/opsagent/opsagent/internal/testkit"
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
	bin := testkit.SharedBinary(t)
	data := filepath.Join(dir, "data")
	serve := []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", data, "--signup", "open", "--log-level", "info"}
	proc := testkit.StartProcess(t, bin, serve, nil)
	base := proc.URL
	api := func(method, path, token, project string, body any) map[string]any {
		return testkit.Call(t, method, base+path, token, project, body, 0)
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
	// Kill mid-stream after 1.5 s and at least 100 acknowledged (a loaded
	// machine may need longer for those).
	for start, deadline := time.Now(), time.Now().Add(60*time.Second); ; time.Sleep(50 * time.Millisecond) {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if (n >= 100 && time.Since(start) >= 1500*time.Millisecond) || time.Now().After(deadline) {
			break
		}
	}
	proc.Kill()
	stop()
	wg.Wait()
	if len(acked) < 100 {
		t.Fatalf("only %d deliveries acknowledged before the kill", len(acked))
	}
	// Restart: the server comes up on the same data and dispatches what waited.
	proc2 := testkit.StartProcess(t, bin, serve, nil)
	tok = testkit.Call(t, "POST", proc2.URL+"/api/auth/login", "", "", map[string]any{"email": "o@example.com", "password": "correct horse battery"}, 200)["access_token"].(string)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		waiting := testkit.Call(t, "GET", proc2.URL+"/api/tasks/"+task+"/webhook/events?status=received&limit=1", tok, proj, nil, 200)
		if waiting["total"] == float64(0) || time.Now().After(deadline) {
			break // (past the deadline, the checks below name what was not dispatched)
		}
	}
	proc2.Stop()

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
	// No model is configured, so after the first run fails the org's
	// webhook runs are held (webhook_run_hold.go) and later events are
	// skipped: each dispatched event has exactly one run.
	var runs, events int
	db.Reader().QueryRow(`SELECT count(*) FROM task_runs WHERE task_id = ?`, task).Scan(&runs)
	db.Reader().QueryRow(`SELECT count(*) FROM webhook_events WHERE task_id = ? AND status = 'dispatched'`, task).Scan(&events)
	if runs != events || runs == 0 {
		t.Errorf("%d dispatched events but %d runs: each dispatched event has exactly one run", events, runs)
	}
	t.Logf("%d acknowledged before SIGKILL, %d stored (unacknowledged ones may be stored too), %d runs", len(acked), len(stored), runs)
}

func hmacHex(secret string, body []byte) string {
	return hmacSHA256Hex([]byte(secret), body)
}
