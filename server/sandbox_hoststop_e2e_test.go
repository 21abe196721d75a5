package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// An approved command may make host-changing calls only when its approval
// card said "may stop or restart the host" and the person approved that:
// every other approved command runs with them denied. The probe is signal
// 0 to PID 1 (harmless: it only asks whether the signal could be sent),
// which the host-stop filter refuses.
func TestSandboxHostStopOnlyWhenTheApprovalCardSaidSo(t *testing.T) {
	t.Parallel()
	e := newSandboxE2E(t)
	got := e.evaluate(t, "kill -0 1")
	sb, _ := got["sandbox"].(map[string]any)
	if got["verdict"] != "need_approval" || sb["deny_host_stop"] == true || !strings.Contains(got["reason"].(string), "may stop or restart the host") {
		t.Fatalf("kill -0 1: %v", got)
	}
	got = e.evaluate(t, "touch x")
	if sb, _ := got["sandbox"].(map[string]any); sb["deny_host_stop"] != true || strings.Contains(got["reason"].(string), "may stop or restart") {
		t.Fatalf("touch x: %v", got)
	}

	// The card says so, the person approves: the call is theirs to make.
	run := e.runCorpus(t, []string{"kill -0 1 && echo signalled"}, false)
	out, _ := run.results[0].Data["output"].(string)
	if run.approved != 1 || !strings.Contains(out, "exit code 0") || !strings.Contains(out, "signalled") {
		t.Fatalf("approved host-stopping line: %+v\n%s", run, out)
	}

	// The card did not say so (the project called perl host-stopping only
	// after it was shown): the approval does not cover host-changing calls.
	line := `perl -e 'kill(0, 1) or die "kill: $!\n"; print "signalled\n"'`
	b, _ := json.Marshal(map[string]any{"command": line, "target": "server"})
	e.fake.Add(llmfake.ToolCall("run_command", string(b)), llmfake.Text("Done."))
	sid, evs := e.chat(t, "run it")
	items := e.c.must(200, "GET", "/api/approvals?status=pending&kind=tool_call&session_id="+sid, nil).JSON()["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("pending approvals: %v", items)
	}
	card := items[0].(map[string]any)
	if strings.Contains(card["reason"].(string), "may stop or restart") {
		t.Fatalf("the card warned of a line nothing called host-stopping: %v", card)
	}
	e.c.must(200, "PUT", "/api/command-policy", map[string]any{"effects": map[string][]string{"stops_host": {"perl *"}}})
	if got := e.evaluate(t, line); !strings.Contains(got["reason"].(string), "may stop or restart the host") {
		t.Fatalf("perl is host-stopping now: %v", got)
	}
	e.c.must(200, "POST", "/api/approvals/"+card["id"].(string)+"/approve", map[string]any{"comment": "ok"})
	out, _ = toolResult(t, e.watch(t, sid, evs[len(evs)-1].ID))
	if strings.Contains(out, "exit code 0") || !strings.Contains(out, "the sandbox refused: a host-changing system call") ||
		!strings.Contains(out, "host-changing calls stay denied") {
		t.Fatalf("ESCAPE: a host-changing call ran on an approval whose card did not say so:\n%s", out)
	}
}
