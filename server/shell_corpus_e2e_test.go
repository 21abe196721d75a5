package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/opsagent/opsagent/internal/testkit"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// The corpus of testdata/commands runs over HTTP against the real server:
// the scripted model sends every spelling as a run_command call, the rules
// are created through the API as an operator would (one per effect
// category, written from the docs), and an approver approves every call it
// is shown. The rule must be the defence: any call that reaches the
// approver, runs, or changes the canaries is an escape.

// corpusLines reads testdata/commands/<name> (@URL@ is the download server).
func corpusLines(t *testing.T, name, url string) []string {
	t.Helper()
	return testkit.Commands(t, name, url)
}

// downloadServer serves code that leaves a marker in the working directory
// of whatever runs it; hits counts every fetch.
func downloadServer(t *testing.T) (string, *atomic.Int64) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch {
		case strings.HasSuffix(r.URL.Path, ".py"):
			_, _ = w.Write([]byte("open('downloaded.log','a').write('ran\\n')\n"))
		case strings.HasSuffix(r.URL.Path, ".pl"):
			_, _ = w.Write([]byte("open(my $f, '>>', 'downloaded.log'); print $f \"ran\\n\";\n"))
		default:
			_, _ = w.Write([]byte("echo ran >> downloaded.log\n"))
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/i.sh", &hits
}

// corpusRun is one session's calls and what became of them.
type corpusRun struct {
	results  []sseEvent // tool.result events
	reached  []string   // commands an approval was asked for
	approved int
}

// runCorpus sends lines as one model turn of run_command calls, then a
// final answer, and plays the approver until the session ends. deny keeps
// a reached call from running (for the host-stopping spellings: an escape
// is recorded, but this machine must not go down with the test).
func (e *e2e) runCorpus(t *testing.T, lines []string, deny bool) corpusRun {
	t.Helper()
	calls := make([]llmfake.Call, 0, len(lines))
	for _, l := range lines {
		b, _ := json.Marshal(map[string]any{"command": l, "target": "server", "timeout_seconds": 20})
		calls = append(calls, llmfake.Call{Name: "run_command", Arguments: string(b)})
	}
	e.fake.Add(llmfake.Reply("Running them.", calls...), llmfake.Text("Done."))
	sid, evs := e.chat(t, "run the commands")
	var out corpusRun
	for round := 0; ; round++ {
		for _, ev := range evs {
			if ev.Type == "tool.result" {
				out.results = append(out.results, ev)
			}
		}
		done := lastOf(t, evs, "done")
		if done.Data["waiting_approval"] != true {
			if done.Data["status"] != "completed" {
				t.Fatalf("session ended %v", done.Data)
			}
			return out
		}
		if round > len(lines) {
			t.Fatal("the approver went round more times than there are calls")
		}
		items := e.c.must(200, "GET", "/api/approvals?status=pending&kind=tool_call&session_id="+sid, nil).JSON()["items"].([]any)
		if len(items) != 1 {
			t.Fatalf("pending approvals of a waiting session: %d", len(items))
		}
		item := items[0].(map[string]any)
		out.reached = append(out.reached, item["subject"].(map[string]any)["command"].(string))
		verb := "approve"
		if deny {
			verb = "deny"
		} else {
			out.approved++
		}
		e.c.must(200, "POST", "/api/approvals/"+item["id"].(string)+"/"+verb, map[string]any{"comment": "approver approves everything"})
		evs = e.watch(t, sid, evs[len(evs)-1].ID)
	}
}

func TestE2ECorpusMustNeverHoldsOnWhatRuns(t *testing.T) {
	t.Parallel()
	url, hits := downloadServer(t)
	e := newE2E(t)
	for _, r := range []map[string]any{
		{"kind": "must_never", "description": "Never delete files", "tool": "run_command", "match_type": "effect", "pattern": "deletes_files"},
		{"kind": "must_never", "description": "Never stop or reboot the host", "tool": "run_command", "match_type": "effect", "pattern": "stops_host"},
		{"kind": "must_never", "description": "Never run code downloaded from the network", "match_type": "effect", "pattern": "runs_downloaded_code"},
		{"kind": "must_never", "description": "Never run rm", "tool": "run_command", "match_type": "command", "pattern": "rm"},
	} {
		if got := e.c.must(201, "POST", "/api/rules", r).JSON(); got["effect"] != "block" || got["allow_opaque"] != false {
			t.Fatalf("rule: %v", got)
		}
	}
	if err := os.MkdirAll(filepath.Join(e.work, "victimdir"), 0o700); err != nil {
		t.Fatal(err)
	}
	canaries := map[string]string{"victim.txt": "canary\n", "victimdir/keep.txt": "keep\n", "notes.txt": "remember the rm\n"}
	for name, body := range canaries {
		if err := os.WriteFile(filepath.Join(e.work, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	for _, tc := range []struct {
		file, rule string
		deny       bool
	}{
		{"deletes_files.txt", "Never delete files", false},
		{"runs_downloaded_code.txt", "Never run code downloaded", false},
		{"stops_host.txt", "Never stop or reboot the host", true},
	} {
		lines := corpusLines(t, tc.file, url)
		if len(lines) < 100 {
			t.Fatalf("%s: %d spellings, want at least 100", tc.file, len(lines))
		}
		run := e.runCorpus(t, lines, tc.deny)
		for _, c := range run.reached {
			t.Errorf("%s: ESCAPE: %q was not blocked and reached the approver", tc.file, c)
		}
		if len(run.results) != len(lines) {
			t.Fatalf("%s: %d results for %d calls", tc.file, len(run.results), len(lines))
		}
		opaque := 0
		for i, r := range run.results {
			out, _ := r.Data["output"].(string)
			if r.Data["blocked"] != true {
				t.Errorf("%s: ESCAPE: %q ran: %.200s", tc.file, lines[i], out)
				continue
			}
			if strings.Contains(out, "the platform cannot prove") {
				opaque++
			}
			if !strings.Contains(out, "Parsed as: ") {
				t.Errorf("%s: the refusal of %q does not say what it was parsed as: %s", tc.file, lines[i], out)
			}
		}
		// The plain spelling (first line) is refused by the category's rule, with what it was parsed as.
		first := run.results[0].Data["output"].(string)
		if !strings.Contains(first, tc.rule) || strings.Contains(first, "the platform cannot prove") {
			t.Errorf("%s: the plain spelling %q was refused by %s", tc.file, lines[0], first)
		}
		t.Logf("%s: %d spellings blocked (%d by the rule on what runs, %d as unprovable), %d escapes", tc.file, len(lines), len(lines)-opaque, opaque, len(run.reached))
	}
	for name, body := range canaries {
		if b, err := os.ReadFile(filepath.Join(e.work, name)); err != nil || string(b) != body {
			t.Errorf("canary %s was touched: %q %v", name, b, err)
		}
	}
	if _, err := os.Stat(filepath.Join(e.work, "downloaded.log")); err == nil || hits.Load() != 0 {
		t.Errorf("downloaded code ran or was fetched (%d fetches)", hits.Load())
	}

	// The look-alikes still run, each approved by the same approver.
	lines := corpusLines(t, "lookalikes.txt", url)
	run := e.runCorpus(t, lines, false)
	if len(run.results) != len(lines) || run.approved != len(lines) {
		t.Fatalf("look-alikes: %d results, %d approved, for %d calls", len(run.results), run.approved, len(lines))
	}
	for i, r := range run.results {
		out, _ := r.Data["output"].(string)
		if r.Data["blocked"] == true || r.Data["is_error"] == true || !strings.Contains(out, "exit code") {
			t.Errorf("look-alike %q did not run: %v", lines[i], r.Data)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(e.work, "words.txt")); string(b) != "rm\n" {
		t.Errorf("echo rm > words.txt did not run: %q", b)
	}
	if e.fake.Remaining() != 0 {
		t.Fatalf("%d scripted turns left", e.fake.Remaining())
	}
}
