package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// A task pointed at a Slack channel: its run's approval is a card there,
// decided in Slack by a linked account, and the run's outcome is posted.
func TestTaskRunPostsItsApprovalAndOutcomeToItsChannel(t *testing.T) {
	args := `{"command":"` + echoHello + `"}`
	ce := newChannelEnv(t,
		llmfake.ToolCall("run_command", args),
		llmfake.Text("Said hello on the server."),
	)
	chID := ce.slackChannel(t, nil)
	ce.linkSlack(t, ce.owner, chID, "UA8RXUSPL")
	task := createTask(t, ce.owner, map[string]any{"name": "hello", "prompt": "say hello on the server"})
	tid := task["id"].(string)
	ce.owner.must(404, "PUT", "/api/tasks/"+tid+"/channel", map[string]any{"channel_id": "0190a000-0000-7000-8000-000000000000", "conversation": "C0OPS"})
	ce.owner.must(200, "PUT", "/api/tasks/"+tid+"/channel", map[string]any{"channel_id": chID, "conversation": "C0OPS"})
	if got := ce.owner.must(200, "GET", "/api/tasks/"+tid+"/channel", nil).JSON(); got["conversation"] != "C0OPS" || got["channel_id"] != chID {
		t.Fatalf("task channel: %v", got)
	}

	ce.owner.must(202, "POST", "/api/tasks/"+tid+"/trigger", nil)
	card := ce.slack.waitFor("the task's approval card", func(c chatCall) bool {
		return c.Method == "chat.postMessage" && c.Form.Get("channel") == "C0OPS" && strings.Contains(c.text(), "Approval needed")
	})
	id := ce.owner.must(200, "GET", "/api/approvals?status=pending", nil).JSON()["items"].([]any)[0].(map[string]any)["id"].(string)
	p := fixture(t, "slack/block_actions.json", map[string]any{"user.id": "UA8RXUSPL", "actions.action_id": "approve",
		"actions.value": id, "channel.id": "C0OPS", "message.ts": card.Ref})
	slackPost(ce.env, chID, slackInteraction(p), time.Now(), "application/x-www-form-urlencoded", slackSecret, 0)
	ce.slack.waitFor("the card decided", func(c chatCall) bool {
		return c.Method == "chat.update" && c.Form.Get("ts") == card.Ref && strings.Contains(c.text(), "Approved by oncall@example.com")
	})
	ce.slack.waitFor("the run's outcome", func(c chatCall) bool {
		return c.Method == "chat.postMessage" && c.Form.Get("channel") == "C0OPS" && containsAll(c.text(), "Task hello: completed", "Said hello on the server.")
	})
	ce.owner.must(204, "DELETE", "/api/tasks/"+tid+"/channel", nil)
	ce.owner.must(404, "GET", "/api/tasks/"+tid+"/channel", nil)
}

// A routing rule pointed at a Slack channel: the approval its alert opens
// is a card there, approved in Slack; the investigation it starts posts
// its outcome there.
func TestRoutingRulePostsItsApprovalAndTheRunOutcomeToItsChannel(t *testing.T) {
	ce := newChannelEnv(t, llmfake.Text("Investigated: the api recovered on its own."))
	chID := ce.slackChannel(t, nil)
	ce.linkSlack(t, ce.owner, chID, "UA8RXUSPL")
	f := newHook(t, ce.env, ce.owner, map[string]any{"provider": "generic", "scheme": "bearer", "dedupe_window_seconds": 0})
	target := createTask(t, ce.owner, map[string]any{"name": "investigate api", "prompt": "investigate the alert"})["id"].(string)
	rule := ce.owner.must(201, "POST", "/api/tasks/"+f.task+"/webhook/rules", map[string]any{"name": "needs a human",
		"target_task_id": target, "requires_approval": true}).JSON()["id"].(string)
	path := "/api/tasks/" + f.task + "/webhook/rules/" + rule + "/channel"
	ce.owner.must(200, "PUT", path, map[string]any{"channel_id": chID, "conversation": "C0INCIDENT"})

	ev := f.deliver(t, genericAlert("api 500s", "critical"))
	card := ce.slack.waitFor("the rule's approval card", func(c chatCall) bool {
		return c.Method == "chat.postMessage" && c.Form.Get("channel") == "C0INCIDENT" && strings.Contains(c.text(), "Approval needed")
	})
	id := ev["dispatch"].([]any)[0].(map[string]any)["id"].(string)
	if !strings.Contains(card.text(), id) {
		t.Fatalf("card for %s: %s", id, card.text())
	}
	p := fixture(t, "slack/block_actions.json", map[string]any{"user.id": "UA8RXUSPL", "actions.action_id": "approve",
		"actions.value": id, "channel.id": "C0INCIDENT", "message.ts": card.Ref})
	slackPost(ce.env, chID, slackInteraction(p), time.Now(), "application/x-www-form-urlencoded", slackSecret, 0)
	if a := ce.owner.must(200, "GET", "/api/approvals/"+id, nil).JSON(); a["status"] != "approved" {
		t.Fatalf("rule approval after the press: %v", a)
	}
	ce.slack.waitFor("the investigation's outcome", func(c chatCall) bool {
		return c.Method == "chat.postMessage" && c.Form.Get("channel") == "C0INCIDENT" && containsAll(c.text(), "Task investigate api: completed", "recovered on its own")
	})
	ce.owner.must(200, "GET", path, nil)
	ce.owner.must(204, "DELETE", path, nil)
}

// A rule's approval nobody decided in time: its chat card says it expired.
func TestRuleApprovalExpiryRedrawsItsCard(t *testing.T) {
	ce := newChannelEnv(t)
	ce.env.UseClock()
	chID := ce.slackChannel(t, nil)
	f := newHook(t, ce.env, ce.owner, map[string]any{"provider": "generic", "scheme": "bearer", "dedupe_window_seconds": 0, "approval_ttl_seconds": 600})
	target := createTask(t, ce.owner, map[string]any{"name": "investigate api", "prompt": "investigate the alert"})["id"].(string)
	rule := ce.owner.must(201, "POST", "/api/tasks/"+f.task+"/webhook/rules", map[string]any{"name": "needs a human",
		"target_task_id": target, "requires_approval": true}).JSON()["id"].(string)
	ce.owner.must(200, "PUT", "/api/tasks/"+f.task+"/webhook/rules/"+rule+"/channel", map[string]any{"channel_id": chID, "conversation": "C0INCIDENT"})
	f.deliver(t, genericAlert("api 500s", "critical"))
	card := ce.slack.waitFor("the rule's approval card", method("chat.postMessage", "Approval needed"))
	ce.env.Advance(11 * time.Minute)
	if err := ce.env.Srv.ExpireApprovals(t.Context()); err != nil {
		t.Fatal(err)
	}
	ce.slack.waitFor("the card redrawn as expired", func(c chatCall) bool {
		return c.Method == "chat.update" && c.Form.Get("ts") == card.Ref && strings.Contains(c.text(), "Expired") && !strings.Contains(c.text(), `"approve"`)
	})
}
