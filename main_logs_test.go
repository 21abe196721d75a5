package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// With --log-format json every line is a JSON object, and each request is
// one line naming its request id, route template, status and duration,
// never the bearer token or the body.
func TestJSONRequestLog(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--log-format", "json"}, env(nil), &stdout, &stderr)
	}()
	var addr string
	for deadline := time.Now().Add(30 * time.Second); addr == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, line := range strings.Split(stderr.String(), "\n") {
			var l map[string]any
			if json.Unmarshal([]byte(line), &l) == nil && l["msg"] == "opsagent listening" {
				addr, _ = l["addr"].(string)
			}
		}
	}
	if addr == "" {
		t.Fatalf("no JSON listening line:\n%s", stderr.String())
	}
	req, _ := http.NewRequest("GET", "http://"+addr+"/api/auth/me", nil)
	req.Header.Set("Authorization", "Bearer not-a-real-token-but-secret-looking")
	req.Header.Set("X-Request-ID", "req-json-1")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	cancel()
	<-done
	var found map[string]any
	sc := bufio.NewScanner(strings.NewReader(stderr.String()))
	for sc.Scan() {
		var l map[string]any
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("a log line is not JSON: %s", sc.Text())
		}
		if l["msg"] == "request" && l["request_id"] == "req-json-1" {
			found = l
		}
	}
	if found == nil || found["route"] != "/api/auth/me" || found["status"] != float64(401) || found["duration_ms"] == nil || found["method"] != "GET" {
		t.Fatalf("request line = %v\n%s", found, stderr.String())
	}
	if strings.Contains(stderr.String(), "secret-looking") {
		t.Errorf("the bearer token reached the log")
	}
}
