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
