package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/internal/testkit"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// amSilences lists a real Alertmanager's silences.
func amSilences(t *testing.T, addr string) []map[string]any {
	t.Helper()
	res, err := http.Get("http://" + addr + "/api/v2/silences")
	if err != nil {
		return nil
	}
	defer res.Body.Close()
	var out []map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return out
}

// The silence tools against Debian's Alertmanager (prometheus-alertmanager):
// an approved create makes an active silence with the proposed matchers,
// an approved expire ends it.
func TestAlertmanagerSilenceOnDebianAlertmanager(t *testing.T) {
	bin, err := exec.LookPath("prometheus-alertmanager")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("prometheus-alertmanager is not installed; .ci/run installs Debian's package")
		}
		t.Skip("prometheus-alertmanager not installed (apt-get install prometheus-alertmanager)")
	}
	dir := t.TempDir()
	cfg := "route:\n  receiver: devnull\nreceivers:\n  - name: devnull\n"
	if err := os.WriteFile(filepath.Join(dir, "alertmanager.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--config.file="+filepath.Join(dir, "alertmanager.yml"), "--storage.path="+filepath.Join(dir, "data"),
		"--web.listen-address=127.0.0.1:0", "--cluster.listen-address=", "--log.level=info")
	out := &testkit.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cancel(); <-exited })
	addr := childAddr(t, "alertmanager", out, promListening, exited)
	for deadline := time.Now().Add(20 * time.Second); amSilences(t, addr) == nil; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("alertmanager did not start: %s", out.String())
		}
	}

	e := newE2E(t,
		llmfake.ToolCall("alertmanager_create_silence", `{"matchers":[{"name":"service","value":"db"}],"duration":"1h","comment":"db upgrade"}`),
		llmfake.Text("Silenced."),
	)
	e.c.must(201, "POST", "/api/integrations", map[string]any{"kind": "alertmanager", "name": "am", "base_url": "http://" + addr})
	approveAndFinish := func(prompt string) map[string]any {
		t.Helper()
		sid, evs := e.chat(t, prompt)
		ar := lastOf(t, evs, "approval.required")
		e.c.must(200, "POST", "/api/approvals/"+ar.Data["approval_id"].(string)+"/approve", map[string]any{})
		return lastOf(t, e.watch(t, sid, evs[len(evs)-1].ID), "tool.result").Data
	}
	if res := approveAndFinish("silence the db"); res["is_error"] == true {
		t.Fatalf("create: %v", res)
	}
	ss := amSilences(t, addr)
	if len(ss) != 1 || ss[0]["status"].(map[string]any)["state"] != "active" || ss[0]["comment"] != "db upgrade" {
		t.Fatalf("silences after create: %v", ss)
	}
	id := ss[0]["id"].(string)
	e.fake.Add(llmfake.ToolCall("alertmanager_expire_silence", `{"silence_id":"`+id+`"}`), llmfake.Text("Expired."))
	if res := approveAndFinish("expire it"); res["is_error"] == true || !strings.Contains(res["output"].(string), "expired") {
		t.Fatalf("expire: %v", res)
	}
	if ss := amSilences(t, addr); len(ss) != 1 || ss[0]["status"].(map[string]any)["state"] != "expired" {
		t.Fatalf("silences after expire: %v", ss)
	}
}
