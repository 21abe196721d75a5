package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// Slack end to end: inbound events and interactions signed as Slack signs
// them (payloads from Slack's documented examples under testdata/), the
// bot's Web API calls answered by slack-go's slacktest server.

func TestSlackConversationStreamsIntoTheThreadAndRetriesRunOnce(t *testing.T) {
	ce := newChannelEnv(t,
		llmfake.Text("The disk on web-1 is 40% full, nothing to do."),
		llmfake.Text("Still 40%."),
	)
	chID := ce.slackChannel(t, nil)
	// Before linking, the channel (no allow_unlinked) only tells the person how to link.
	dm := fixture(t, "slack/message_im.json", map[string]any{"event.user": "U061F7AUR"})
	slackPost(ce.env, chID, dm, time.Now(), "application/json", slackSecret, 0)
	ce.slack.waitFor("the link instructions", method("chat.postEphemeral", "Link your opsagent account first"))
	if n := len(ce.owner.must(200, "GET", "/api/sessions/index?source=slack", nil).JSON()["items"].([]any)); n != 0 {
		t.Fatalf("an unlinked person started %d sessions", n)
	}
	ce.linkSlack(t, ce.owner, chID, "U061F7AUR")

	// The documented url_verification handshake.
	r := slackPost(ce.env, chID, fixture(t, "slack/url_verification.json", nil), time.Now(), "application/json", slackSecret, 0)
	if r.Status != 200 || r.JSON()["challenge"] != "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" {
		t.Fatalf("url_verification: %d %s", r.Status, r.Body)
	}

	mention := fixture(t, "slack/app_mention.json", map[string]any{"event.text": "<@U0LAN0Z89> how full is the disk on web-1?"})
	if r := slackPost(ce.env, chID, mention, time.Now(), "application/json", slackSecret, 0); r.Status != 200 {
		t.Fatalf("app_mention: %d %s", r.Status, r.Body)
	}
	// Slack retries a delivery it thinks timed out: the same event_id runs nothing again.
	for i := 1; i <= 2; i++ {
		if r := slackPost(ce.env, chID, mention, time.Now(), "application/json", slackSecret, i); r.Status != 200 {
			t.Fatalf("retry %d: %d %s", i, r.Status, r.Body)
		}
	}
	first := ce.slack.waitFor("the placeholder in the thread", func(c chatCall) bool {
		return c.Method == "chat.postMessage" && c.Form.Get("thread_ts") == "1515449522.000016" && c.Form.Get("channel") == "C0LAN2Q65"
	})
	final := ce.slack.waitFor("the streamed answer", method("chat.update", "nothing to do"))
	if final.Form.Get("channel") != "C0LAN2Q65" || final.Form.Get("ts") == "" {
		t.Fatalf("update of %v", final.Form)
	}
	if !final.At.After(first.At) {
		t.Fatal("the answer must edit the message posted first")
	}

	sessions := ce.owner.must(200, "GET", "/api/sessions/index?source=slack", nil).JSON()
	items := sessions["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("slack sessions after a delivery and two retries: %v", sessions)
	}
	sid := items[0].(map[string]any)["session_id"].(string)
	if n := len(ce.fake.Requests()); n != 1 {
		t.Fatalf("the model was called %d times, want once (retries deduplicated)", n)
	}

	// A reply in the thread continues the same session.
	reply := fixture(t, "slack/app_mention.json", map[string]any{"event_id": "Ev0LAN670S", "event.ts": "1515449600.000100",
		"event.thread_ts": "1515449522.000016", "event.text": "<@U0LAN0Z89> and now?"})
	waitSessionDone(t, ce.owner, sid)
	if r := slackPost(ce.env, chID, reply, time.Now(), "application/json", slackSecret, 0); r.Status != 200 {
		t.Fatalf("reply: %d %s", r.Status, r.Body)
	}
	ce.slack.waitFor("the second answer", method("chat.update", "Still 40%"))
	d := waitSessionDone(t, ce.owner, sid)
	if d["turns"].(float64) != 2 || d["source"] != "slack" {
		t.Fatalf("the thread's session after a reply: %v", d)
	}
	if n := len(ce.owner.must(200, "GET", "/api/sessions/index?source=slack", nil).JSON()["items"].([]any)); n != 1 {
		t.Fatalf("one thread must be one session, got %d", n)
	}
}

// waitSessionDone waits for a session to finish its turn and returns its detail.
func waitSessionDone(t *testing.T, c *client, sid string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		d := c.must(200, "GET", "/api/sessions/detail/"+sid, nil).JSON()
		if d["status"] != "running" || d["waiting_approval"] == true {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("session still running: %v", d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestSlackApprovalDecidedInChatIsCheckedAgainstTheLinkedRole(t *testing.T) {
	args := `{"command": "` + echoHello + `", "target": "server"}`
	ce := newChannelEnv(t,
		llmfake.ToolCall("run_command", args),
		llmfake.Text("Done: it printed hello."),
	)
	chID := ce.slackChannel(t, nil)
	org := orgOf(t, ce.owner)
	viewer := ce.env.invite(t, ce.owner, org, "viewer@example.com", "viewer")
	viewer.Project = ce.owner.Project
	ce.linkSlack(t, ce.owner, chID, "UA8RXUSPL")
	ce.linkSlack(t, viewer, chID, "UVIEWER01")

	mention := fixture(t, "slack/app_mention.json", map[string]any{"event.user": "UA8RXUSPL", "event.text": "<@U0LAN0Z89> say hello on the server"})
	slackPost(ce.env, chID, mention, time.Now(), "application/json", slackSecret, 0)
	card := ce.slack.waitFor("the approval card", method("chat.postMessage", "Approval needed", "approve", "deny_comment"))
	page := ce.owner.must(200, "GET", "/api/approvals?status=pending", nil).JSON()["items"].([]any)
	if len(page) != 1 {
		t.Fatalf("pending approvals: %v", page)
	}
	approvalID := page[0].(map[string]any)["id"].(string)
	if !strings.Contains(card.Form.Get("blocks"), approvalID) || card.Form.Get("thread_ts") != "1515449522.000016" {
		t.Fatalf("card: %v", card.Form)
	}

	press := func(user, action, trigger string) *resp {
		p := fixture(t, "slack/block_actions.json", map[string]any{"user.id": user, "trigger_id": trigger,
			"actions.action_id": action, "actions.value": approvalID, "channel.id": "C0LAN2Q65",
			"message.ts": card.Ref, "container.message_ts": card.Ref, "container.channel_id": "C0LAN2Q65"})
		return slackPost(ce.env, chID, slackInteraction(p), time.Now(), "application/x-www-form-urlencoded", slackSecret, 0)
	}
	// A viewer's linked account can neither chat nor approve, exactly as in the console.
	slackPost(ce.env, chID, fixture(t, "slack/app_mention.json", map[string]any{"event_id": "EvViewer", "event.user": "UVIEWER01",
		"event.ts": "1515449600.000001", "event.text": "<@U0LAN0Z89> restart nginx"}), time.Now(), "application/json", slackSecret, 0)
	ce.slack.waitFor("the viewer told they may not chat", method("chat.postEphemeral", "does not allow chatting"))
	if r := press("UVIEWER01", "approve", "trig-viewer"); r.Status != 200 {
		t.Fatalf("viewer press: %d %s", r.Status, r.Body)
	}
	ce.slack.waitFor("the refusal told to the viewer", method("chat.postEphemeral", "does not allow deciding approvals"))
	// An unlinked Slack user cannot either.
	press("UNOBODY01", "approve", "trig-nobody")
	ce.slack.waitFor("the refusal told to an unlinked user", method("chat.postEphemeral", "linked their opsagent account"))
	if a := ce.owner.must(200, "GET", "/api/approvals/"+approvalID, nil).JSON(); a["status"] != "pending" {
		t.Fatalf("after refused presses: %v", a)
	}

	// The owner's linked account approves; the card shows who decided; the
	// resumed turn's answer reaches the thread.
	if r := press("UA8RXUSPL", "approve", "trig-owner"); r.Status != 200 {
		t.Fatalf("owner press: %d %s", r.Status, r.Body)
	}
	press("UA8RXUSPL", "approve", "trig-owner") // a repeated delivery decides nothing twice
	a := ce.owner.must(200, "GET", "/api/approvals/"+approvalID, nil).JSON()
	if a["status"] != "approved" || a["decided_by"] != ce.owner.userID() {
		t.Fatalf("approved from Slack: %v", a)
	}
	ce.slack.waitFor("the card updated", func(c chatCall) bool {
		return c.Method == "chat.update" && c.Form.Get("ts") == card.Ref && containsAll(c.text(), "Approved by oncall@example.com") && !strings.Contains(c.text(), `"approve"`)
	})
	ce.slack.waitFor("the resumed answer", method("chat.update", "Done: it printed hello."))

	audit := ce.owner.must(200, "GET", "/api/audit-logs?action=approval.approved", nil).JSON()["items"].([]any)
	if len(audit) != 1 {
		t.Fatalf("approval audit: %v", audit)
	}
	ev := audit[0].(map[string]any)
	det := ev["detail"].(map[string]any)
	if ev["actor_user_id"] != ce.owner.userID() || det["channel"] != "slack" || det["external_user"] != "UA8RXUSPL" {
		t.Fatalf("the audit must name the person and the channel: %v", ev)
	}
	denied := ce.owner.must(200, "GET", "/api/audit-logs?action=permission.denied", nil).JSON()["items"].([]any)
	if len(denied) == 0 {
		t.Fatal("the viewer's refused press must be audited like the console's")
	}
}

func TestSlackApprovalDecidedInTheConsoleUpdatesTheCardAndCommentModalDenies(t *testing.T) {
	args := `{"command": "` + echoHello + `", "target": "server"}`
	ce := newChannelEnv(t,
		llmfake.ToolCall("run_command", args),
		llmfake.Text("Understood, not running it."),
		llmfake.ToolCall("run_command", args),
		llmfake.Text("OK, I will leave it."),
	)
	chID := ce.slackChannel(t, nil)
	ce.linkSlack(t, ce.owner, chID, "U0MJRG1AL")

	slackPost(ce.env, chID, fixture(t, "slack/app_mention.json", map[string]any{"event.user": "U0MJRG1AL"}), time.Now(), "application/json", slackSecret, 0)
	card := ce.slack.waitFor("the approval card", method("chat.postMessage", "Approval needed"))
	id := ce.owner.must(200, "GET", "/api/approvals?status=pending", nil).JSON()["items"].([]any)[0].(map[string]any)["id"].(string)
	ce.owner.must(200, "POST", "/api/approvals/"+id+"/deny", map[string]any{"comment": "not during the freeze"})
	ce.slack.waitFor("the card updated from the console", func(c chatCall) bool {
		return c.Method == "chat.update" && c.Form.Get("ts") == card.Ref && containsAll(c.text(), "Denied by oncall@example.com", "not during the freeze")
	})
	ce.slack.waitFor("the answer after the denial", method("chat.update", "Understood, not running it."))

	// Deny with comment: the button opens Slack's modal, its submission denies.
	sid := ce.owner.must(200, "GET", "/api/sessions/index?source=slack", nil).JSON()["items"].([]any)[0].(map[string]any)["session_id"].(string)
	waitSessionDone(t, ce.owner, sid)
	slackPost(ce.env, chID, fixture(t, "slack/app_mention.json", map[string]any{"event_id": "Ev2", "event.user": "U0MJRG1AL",
		"event.ts": "1515449999.000001", "event.thread_ts": "1515449522.000016", "event.text": "<@U0LAN0Z89> try again"}), time.Now(), "application/json", slackSecret, 0)
	var id2 string
	deadline := time.Now().Add(30 * time.Second)
	for id2 == "" && time.Now().Before(deadline) {
		if items := ce.owner.must(200, "GET", "/api/approvals?status=pending", nil).JSON()["items"].([]any); len(items) == 1 {
			id2 = items[0].(map[string]any)["id"].(string)
		}
		time.Sleep(20 * time.Millisecond)
	}
	card2 := ce.slack.waitFor("the second card", func(c chatCall) bool { return c.Method == "chat.postMessage" && strings.Contains(c.text(), id2) })
	p := fixture(t, "slack/block_actions.json", map[string]any{"user.id": "U0MJRG1AL", "trigger_id": "trig-modal",
		"actions.action_id": "deny_comment", "actions.value": id2, "channel.id": "C0LAN2Q65", "message.ts": card2.Ref})
	slackPost(ce.env, chID, slackInteraction(p), time.Now(), "application/x-www-form-urlencoded", slackSecret, 0)
	open := ce.slack.waitFor("the comment modal", func(c chatCall) bool { return c.Method == "views.open" && c.JSON["trigger_id"] == "trig-modal" })
	view := open.JSON["view"].(map[string]any)
	sub := fixture(t, "slack/view_submission.json", map[string]any{"user.id": "U0MJRG1AL", "view.callback_id": view["callback_id"],
		"view.private_metadata": view["private_metadata"], "view.state.values": map[string]any{"comment": map[string]any{"comment": map[string]any{"type": "plain_text_input", "value": "wait for the change window"}}}})
	if r := slackPost(ce.env, chID, slackInteraction(sub), time.Now(), "application/x-www-form-urlencoded", slackSecret, 0); r.Status != 200 || len(r.Body) != 0 {
		t.Fatalf("view_submission must be acknowledged with an empty 200: %d %q", r.Status, r.Body)
	}
	a := ce.owner.must(200, "GET", "/api/approvals/"+id2, nil).JSON()
	if a["status"] != "denied" || a["comment"] != "wait for the change window" {
		t.Fatalf("denied with a comment from the modal: %v", a)
	}
	ce.slack.waitFor("the second card updated", func(c chatCall) bool {
		return c.Method == "chat.update" && c.Form.Get("ts") == card2.Ref && strings.Contains(c.text(), "wait for the change window")
	})
}

func TestSlackRefusesBadSignaturesStaleTimestampsAndBadPayloads(t *testing.T) {
	ce := newChannelEnv(t)
	chID := ce.slackChannel(t, map[string]any{"allow_unlinked": true})
	body := fixture(t, "slack/app_mention.json", nil)
	cases := []struct {
		name   string
		r      *resp
		status int
	}{
		{"wrong secret", slackPost(ce.env, chID, body, time.Now(), "application/json", "not-the-secret", 0), 401},
		{"stale timestamp", slackPost(ce.env, chID, body, time.Now().Add(-6*time.Minute), "application/json", slackSecret, 0), 401},
		{"future timestamp", slackPost(ce.env, chID, body, time.Now().Add(6*time.Minute), "application/json", slackSecret, 0), 401},
		{"unknown channel", slackPost(ce.env, "0190a000-0000-7000-8000-000000000000", body, time.Now(), "application/json", slackSecret, 0), 404},
		{"malformed", slackPost(ce.env, chID, []byte(`{"type":"event_callback","event":`), time.Now(), "application/json", slackSecret, 0), 422},
		{"malformed interaction", slackPost(ce.env, chID, []byte("payload=%7Bnot-json"), time.Now(), "application/x-www-form-urlencoded", slackSecret, 0), 422},
		{"oversized", slackPost(ce.env, chID, []byte(`{"type":"event_callback","x":"`+strings.Repeat("a", 300<<10)+`"}`), time.Now(), "application/json", slackSecret, 0), 413},
	}
	for _, c := range cases {
		if c.r.Status != c.status {
			t.Errorf("%s: got %d, want %d (%s)", c.name, c.r.Status, c.status, c.r.Body)
		}
	}
	ce.owner.must(200, "PATCH", "/api/channels/"+chID, map[string]any{"enabled": false})
	if r := slackPost(ce.env, chID, body, time.Now(), "application/json", slackSecret, 0); r.Status != 404 {
		t.Errorf("a disabled channel: got %d, want 404", r.Status)
	}
	ce.owner.must(200, "PATCH", "/api/channels/"+chID, map[string]any{"enabled": true})
	unsigned := mustRequest(t, "POST", ce.env.URL+"/api/inbound/slack/"+chID, "application/json", string(body))
	if r := ce.env.newClient().send(unsigned); r.Status != 401 {
		t.Errorf("unsigned: got %d, want 401", r.Status)
	}
	// Nothing stored, nothing run; the server is healthy.
	if n := len(ce.owner.must(200, "GET", "/api/sessions/index?source=slack", nil).JSON()["items"].([]any)); n != 0 {
		t.Fatalf("sessions after refused requests: %d", n)
	}
	var deliveries int
	if err := ce.env.DB.Reader().QueryRow(`SELECT count(*) FROM channel_deliveries`).Scan(&deliveries); err != nil || deliveries != 0 {
		t.Fatalf("deliveries stored after refused requests: %d (%v)", deliveries, err)
	}
	if len(ce.fake.Requests()) != 0 || ce.slack.count(func(chatCall) bool { return true }) != 0 {
		t.Fatal("a refused request ran something")
	}
	ce.env.newClient().must(200, "GET", "/api/version", nil)
}

// The inbound counter names refused, duplicate and handled deliveries.
func TestChannelInboundMetrics(t *testing.T) {
	ce := newChannelEnv(t, llmfake.Text("ok"))
	chID := ce.slackChannel(t, map[string]any{"allow_unlinked": true, "allowed_chat_ids": []string{"C0LAN2Q65"}})
	body := fixture(t, "slack/app_mention.json", nil)
	slackPost(ce.env, chID, body, time.Now(), "application/json", "wrong", 0)
	slackPost(ce.env, chID, body, time.Now(), "application/json", slackSecret, 0)
	slackPost(ce.env, chID, body, time.Now(), "application/json", slackSecret, 1)
	slackPost(ce.env, chID, fixture(t, "slack/app_mention.json", map[string]any{"event_id": "Ev9", "event.channel": "COTHER"}), time.Now(), "application/json", slackSecret, 0)
	m := string(ce.env.newClient().must(200, "GET", "/metrics", nil).Body)
	for _, want := range []string{`opsagent_channel_inbound_total{outcome="refused",platform="slack"} 1`, `opsagent_channel_inbound_total{outcome="message",platform="slack"} 1`,
		`opsagent_channel_inbound_total{outcome="duplicate",platform="slack"} 1`, `opsagent_channel_inbound_total{outcome="not_allowed",platform="slack"} 1`} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	ce.slack.waitFor("the answer", method("chat.update", "ok"))
}
