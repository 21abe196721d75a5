package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// Telegram end to end: updates from the Bot API's documented examples
// (testdata/channels/telegram) through the webhook with its secret_token,
// the bot's calls answered by a loopback Bot API.

func TestTelegramConversationAllowListAndApprovalByInlineKeyboard(t *testing.T) {
	args := `{"command": "` + echoHello + `", "target": "server"}`
	ce := newChannelEnv(t,
		llmfake.Text("The disk is 40% full."),
		llmfake.ToolCall("run_command", args),
		llmfake.Text("Done: it printed hello."),
	)
	ch := ce.owner.must(201, "POST", "/api/channels", map[string]any{"platform": "telegram", "name": "ops-telegram",
		"bot_user_id": "opsagent_bot", "allowed_chat_ids": []string{"1111111", "-1001234567890"},
		"credentials": map[string]any{"bot_token": telegramToken}}).JSON()
	chID := ch["id"].(string)
	secret := ch["generated"].(map[string]any)["secret_token"].(string)
	if !strings.HasSuffix(ch["inbound_url"].(string), "/api/inbound/telegram/"+chID) {
		t.Fatalf("inbound url: %v", ch["inbound_url"])
	}
	if got := ce.owner.must(200, "GET", "/api/channels/"+chID, nil).JSON(); got["generated"] != nil || strings.Contains(string(ce.owner.must(200, "GET", "/api/channels/"+chID, nil).Body), secret) {
		t.Fatalf("the generated secret is shown once: %v", got)
	}

	// A wrong or missing secret token: 401, nothing stored or run.
	msg := func(updateID int, chatID float64, chatType, text string) []byte {
		return fixture(t, "telegram/message.json", map[string]any{"update_id": updateID, "message.chat.id": chatID, "message.chat.type": chatType, "message.text": text})
	}
	for _, s := range []string{"", "wrong"} {
		if r := telegramPost(ce.env, chID, s, msg(1, 1111111, "private", "hi")); r.Status != 401 {
			t.Fatalf("secret %q: got %d, want 401", s, r.Status)
		}
	}
	if r := telegramPost(ce.env, chID, secret, []byte(`{"message":`)); r.Status != 422 {
		t.Fatalf("malformed update: %d", r.Status)
	}
	if r := telegramPost(ce.env, chID, secret, []byte(`{"update_id":1,"message":{"text":"`+strings.Repeat("a", 300<<10)+`"}}`)); r.Status != 413 {
		t.Fatalf("oversized update: %d", r.Status)
	}

	code := ce.owner.must(201, "POST", "/api/channels/"+chID+"/link-codes", nil).JSON()["code"].(string)
	telegramPost(ce.env, chID, secret, msg(10000, 1111111, "private", "/link "+code))
	ce.telegram.waitFor("the link confirmation", method("sendMessage", "Linked"))

	// A private chat: placeholder, then the answer edited in; Telegram's
	// 429 on the first edit is waited out (its retry_after) and retried.
	ce.telegram.limit("editMessageText")
	ask := msg(10001, 1111111, "private", "how full is the disk?")
	for i := 0; i < 3; i++ { // Telegram redelivers an update it got no 200 for: update_id dedupes
		if r := telegramPost(ce.env, chID, secret, ask); r.Status != 200 {
			t.Fatalf("update: %d %s", r.Status, r.Body)
		}
	}
	edit := ce.telegram.waitFor("the streamed answer", method("editMessageText", "40% full"))
	ce.telegram.mu.Lock()
	limited := ce.telegram.limited
	ce.telegram.mu.Unlock()
	if limited != 1 {
		t.Fatalf("the fake refused %d calls with 429, want 1", limited)
	}
	placeholder := ce.telegram.waitFor("the placeholder", method("sendMessage", `"text":"…"`))
	if edit.At.Sub(placeholder.At) < 900*time.Millisecond {
		t.Fatalf("the edit after a 429 with retry_after 1 came %v after the placeholder", edit.At.Sub(placeholder.At))
	}
	if n := len(ce.fake.Requests()); n != 1 {
		t.Fatalf("the model was called %d times for one update delivered three times", n)
	}
	sessions := ce.owner.must(200, "GET", "/api/sessions/index?source=telegram", nil).JSON()["items"].([]any)
	if len(sessions) != 1 {
		t.Fatalf("telegram sessions: %v", sessions)
	}
	sid := sessions[0].(map[string]any)["session_id"].(string)
	waitSessionDone(t, ce.owner, sid)

	// Chats off the allow-list are ignored and counted; groups need a mention.
	telegramPost(ce.env, chID, secret, msg(10002, 999, "private", "hello?"))
	telegramPost(ce.env, chID, secret, msg(10003, -1001234567890, "supergroup", "just chatting among humans"))
	if got := ce.owner.must(200, "GET", "/api/channels/"+chID, nil).JSON()["ignored_messages"]; got != float64(1) {
		t.Fatalf("ignored messages: %v", got)
	}

	// A mention in the allowed group starts its own session; the approval
	// is an inline keyboard; the linked owner's press approves.
	telegramPost(ce.env, chID, secret, msg(10004, -1001234567890, "supergroup", "@opsagent_bot say hello on the server"))
	card := ce.telegram.waitFor("the approval card", method("sendMessage", "Approval needed", "callback_data"))
	if card.JSON["chat_id"] != "-1001234567890" {
		t.Fatalf("card sent to %v", card.JSON["chat_id"])
	}
	approvalID := ce.owner.must(200, "GET", "/api/approvals?status=pending", nil).JSON()["items"].([]any)[0].(map[string]any)["id"].(string)
	press := fixture(t, "telegram/callback_query.json", map[string]any{"update_id": 10005, "callback_query.data": "a:" + approvalID,
		"callback_query.message": map[string]any{"message_id": mustAtoi(t, tgRef(card)), "chat": map[string]any{"id": -1001234567890, "type": "supergroup"}}})
	if r := telegramPost(ce.env, chID, secret, press); r.Status != 200 {
		t.Fatalf("callback_query: %d %s", r.Status, r.Body)
	}
	if a := ce.owner.must(200, "GET", "/api/approvals/"+approvalID, nil).JSON(); a["status"] != "approved" {
		t.Fatalf("approval after the press: %v", a)
	}
	ce.telegram.waitFor("the pressed button answered", method("answerCallbackQuery", "4382bfdwdsb323b2d9"))
	ce.telegram.waitFor("the card edited", func(c chatCall) bool {
		return c.Method == "editMessageText" && c.JSON["message_id"] == float64(mustAtoi(t, tgRef(card))) && strings.Contains(c.text(), "Approved by oncall@example.com")
	})
	ce.telegram.waitFor("the resumed answer", method("editMessageText", "Done: it printed hello."))
	if n := len(ce.owner.must(200, "GET", "/api/sessions/index?source=telegram", nil).JSON()["items"].([]any)); n != 2 {
		t.Fatalf("a private chat and a group are two sessions, got %d", n)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' {
			t.Fatalf("not a number: %q", s)
		}
		n = n*10 + int(r-'0')
	}
	return n
}

// In groups the bot answers mentions and replies to its own messages; a
// forum topic is its own session, answered in the topic.
func TestTelegramGroupRepliesAndForumTopics(t *testing.T) {
	ce := newChannelEnv(t, llmfake.Text("First answer."), llmfake.Text("Second answer."), llmfake.Text("Topic answer."))
	ch := ce.owner.must(201, "POST", "/api/channels", map[string]any{"platform": "telegram", "name": "group", "allow_unlinked": true,
		"bot_user_id": "opsagent_bot", "credentials": map[string]any{"bot_token": telegramToken, "secret_token": "group-secret"}}).JSON()
	chID := ch["id"].(string)
	if ch["generated"] != nil {
		t.Fatalf("a given secret_token is not generated: %v", ch["generated"])
	}
	group := map[string]any{"id": -100777, "type": "supergroup", "title": "ops"}
	send := func(id int, set map[string]any) {
		t.Helper()
		set["update_id"], set["message.chat"] = id, group
		if r := telegramPost(ce.env, chID, "group-secret", fixture(t, "telegram/message.json", set)); r.Status != 200 {
			t.Fatalf("update %d: %d %s", id, r.Status, r.Body)
		}
	}
	send(1, map[string]any{"message.text": "@OpsAgent_Bot what is up?"})
	ce.telegram.waitFor("the first answer", method("editMessageText", "First answer."))
	sid := ce.owner.must(200, "GET", "/api/sessions/index?source=telegram", nil).JSON()["items"].([]any)[0].(map[string]any)["session_id"].(string)
	waitSessionDone(t, ce.owner, sid)
	if p := ce.fake.Requests()[0]; !strings.Contains(p.Messages[len(p.Messages)-1].Content, "what is up?") || strings.Contains(p.Messages[len(p.Messages)-1].Content, "@") {
		t.Fatalf("the mention must be taken out of the prompt: %+v", p.Messages[len(p.Messages)-1])
	}

	send(2, map[string]any{"message.text": "humans talking"}) // neither a mention nor a reply: ignored
	send(3, map[string]any{"message.text": "and the disk?", "message.reply_to_message": map[string]any{"message_id": 5,
		"from": map[string]any{"id": 123456, "is_bot": true, "first_name": "opsagent", "username": "opsagent_bot"}, "chat": group, "text": "First answer."}})
	ce.telegram.waitFor("the reply's answer", method("editMessageText", "Second answer."))
	if d := waitSessionDone(t, ce.owner, sid); d["turns"] != float64(2) {
		t.Fatalf("a reply continues the group's session: %v", d)
	}

	send(4, map[string]any{"message.text": "@opsagent_bot in the topic", "message.is_topic_message": true, "message.message_thread_id": 77})
	ce.telegram.waitFor("the answer in the topic", func(c chatCall) bool {
		return c.Method == "sendMessage" && c.JSON["message_thread_id"] == float64(77)
	})
	ce.telegram.waitFor("the topic's answer", method("editMessageText", "Topic answer."))
	if n := len(ce.owner.must(200, "GET", "/api/sessions/index?source=telegram", nil).JSON()["items"].([]any)); n != 2 {
		t.Fatalf("the group and its topic are two sessions, got %d", n)
	}
	if n := len(ce.fake.Requests()); n != 3 {
		t.Fatalf("the model was asked %d times, want 3 (the unaddressed message ignored)", n)
	}
}

// Telegram has no dialogs: "Deny with comment" asks for a reply, and the
// reply denies with its text as the comment.
func TestTelegramDenyWithCommentByReply(t *testing.T) {
	args := `{"command": "` + echoHello + `", "target": "server"}`
	ce := newChannelEnv(t, llmfake.ToolCall("run_command", args), llmfake.Text("Not run, as you asked."))
	chID := ce.owner.must(201, "POST", "/api/channels", map[string]any{"platform": "telegram", "name": "tg",
		"credentials": map[string]any{"bot_token": telegramToken, "secret_token": "s3"}}).JSON()["id"].(string)
	code := ce.owner.must(201, "POST", "/api/channels/"+chID+"/link-codes", nil).JSON()["code"].(string)
	telegramPost(ce.env, chID, "s3", fixture(t, "telegram/message.json", map[string]any{"update_id": 1, "message.text": "/link " + code}))
	telegramPost(ce.env, chID, "s3", fixture(t, "telegram/message.json", map[string]any{"update_id": 2, "message.text": "say hello on the server"}))
	ce.telegram.waitFor("the card with its three buttons", method("sendMessage", "Approval needed", `"c:`, "Deny with comment"))
	id := ce.owner.must(200, "GET", "/api/approvals?status=pending", nil).JSON()["items"].([]any)[0].(map[string]any)["id"].(string)

	telegramPost(ce.env, chID, "s3", fixture(t, "telegram/callback_query.json", map[string]any{"update_id": 3, "callback_query.data": "c:" + id,
		"callback_query.message": map[string]any{"message_id": 9, "chat": map[string]any{"id": 1111111, "type": "private"}}}))
	prompt := ce.telegram.waitFor("the comment prompt", method("sendMessage", "Reply to this message", id, "force_reply"))
	if a := ce.owner.must(200, "GET", "/api/approvals/"+id, nil).JSON(); a["status"] != "pending" {
		t.Fatalf("asking for a comment decides nothing: %v", a)
	}
	reply := fixture(t, "telegram/message.json", map[string]any{"update_id": 4, "message.text": "not during the freeze",
		"message.reply_to_message": map[string]any{"message_id": mustAtoi(t, tgRef(prompt)), "chat": map[string]any{"id": 1111111, "type": "private"},
			"from": map[string]any{"id": 123456, "is_bot": true, "first_name": "opsagent", "username": "opsagent_bot"}, "text": prompt.JSON["text"]}})
	telegramPost(ce.env, chID, "s3", reply)
	if a := ce.owner.must(200, "GET", "/api/approvals/"+id, nil).JSON(); a["status"] != "denied" || a["comment"] != "not during the freeze" {
		t.Fatalf("denied by the reply: %v", a)
	}
	ce.telegram.waitFor("the card shows the denial", method("editMessageText", "Denied by oncall@example.com", "not during the freeze"))
	ce.telegram.waitFor("the answer after the denial", method("editMessageText", "Not run, as you asked."))
}
