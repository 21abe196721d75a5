package server_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
	"github.com/opsagent/opsagent/store"
)

// WhatsApp end to end: the GET verification handshake, notifications from
// the Cloud API's documented examples (testdata/channels/whatsapp) signed
// with X-Hub-Signature-256, the bot's messages answered by a loopback
// Cloud API; the 24-hour customer-service window.

func TestWhatsAppHandshakeConversationButtonsAndTheDayWindow(t *testing.T) {
	args := `{"command": "` + echoHello + `", "target": "server"}`
	ce := newChannelEnv(t,
		llmfake.Text("The disk is 40% full."),
		llmfake.ToolCall("run_command", args),
		llmfake.Text("Done: it printed hello."),
		llmfake.ToolCall("run_command", args),
		llmfake.Text("Not run."),
		llmfake.Text("Back with you."),
	)
	ch := ce.owner.must(201, "POST", "/api/channels", map[string]any{"platform": "whatsapp", "name": "ops-whatsapp",
		"phone_number_id": "123456123", "credentials": map[string]any{"access_token": whatsappToken, "app_secret": whatsappSecret}}).JSON()
	chID := ch["id"].(string)
	verify := ch["generated"].(map[string]any)["verify_token"].(string)

	// The GET handshake Meta sends when the callback URL is saved.
	hs := func(token string) *resp {
		q := url.Values{"hub.mode": {"subscribe"}, "hub.verify_token": {token}, "hub.challenge": {"1158201444"}}
		return ce.env.newClient().send(mustRequest(t, "GET", ce.env.URL+"/api/inbound/whatsapp/"+chID+"?"+q.Encode(), "", ""))
	}
	if r := hs(verify); r.Status != 200 || string(r.Body) != "1158201444" {
		t.Fatalf("handshake: %d %q", r.Status, r.Body)
	}
	if r := hs("wrong"); r.Status != 403 {
		t.Fatalf("handshake with a wrong token: %d", r.Status)
	}

	text := func(id, body string) []byte {
		return fixture(t, "whatsapp/text.json", map[string]any{"entry.changes.value.messages.id": id, "entry.changes.value.messages.text.body": body})
	}
	if r := whatsappPost(ce.env, chID, "not-the-app-secret", text("wamid.bad", "hi")); r.Status != 401 {
		t.Fatalf("bad signature: %d", r.Status)
	}
	if r := whatsappPost(ce.env, chID, whatsappSecret, []byte(`{"object":"page","entry":[]}`)); r.Status != 422 {
		t.Fatalf("not a WhatsApp notification: %d", r.Status)
	}
	code := ce.owner.must(201, "POST", "/api/channels/"+chID+"/link-codes", nil).JSON()["code"].(string)
	whatsappPost(ce.env, chID, whatsappSecret, text("wamid.link", "link "+code))
	ce.whatsapp.waitFor("the link confirmation", method("POST /123456123/messages", "Linked", "16315551181"))

	// WhatsApp cannot edit: the answer arrives once, whole; a redelivery runs nothing.
	for i := 0; i < 2; i++ {
		if r := whatsappPost(ce.env, chID, whatsappSecret, text("ABGGFlA5Fpa", "how full is the disk?")); r.Status != 200 {
			t.Fatalf("message: %d %s", r.Status, r.Body)
		}
	}
	ce.whatsapp.waitFor("the answer", method("POST /123456123/messages", "40% full"))
	if n := len(ce.fake.Requests()); n != 1 {
		t.Fatalf("the model was called %d times for one message delivered twice", n)
	}
	sid := ce.owner.must(200, "GET", "/api/sessions/index?source=whatsapp", nil).JSON()["items"].([]any)[0].(map[string]any)["session_id"].(string)
	waitSessionDone(t, ce.owner, sid)

	// The approval is an interactive message with reply buttons.
	whatsappPost(ce.env, chID, whatsappSecret, text("wamid.2", "say hello on the server"))
	card := ce.whatsapp.waitFor("the approval buttons", method("POST /123456123/messages", `"interactive"`, "Approve"))
	approvalID := ce.owner.must(200, "GET", "/api/approvals?status=pending", nil).JSON()["items"].([]any)[0].(map[string]any)["id"].(string)
	reply := fixture(t, "whatsapp/button_reply.json", map[string]any{"entry.changes.value.metadata.phone_number_id": "123456123",
		"entry.changes.value.messages.from": "16315551181", "entry.changes.value.messages.id": "wamid.press",
		"entry.changes.value.messages.interactive.button_reply.id": "a:" + approvalID,
		"entry.changes.value.messages.context":                     map[string]any{"from": "16505551111", "id": "wamid." + card.Ref}})
	if r := whatsappPost(ce.env, chID, whatsappSecret, reply); r.Status != 200 {
		t.Fatalf("button reply: %d %s", r.Status, r.Body)
	}
	if a := ce.owner.must(200, "GET", "/api/approvals/"+approvalID, nil).JSON(); a["status"] != "approved" {
		t.Fatalf("approval after the button: %v", a)
	}
	ce.whatsapp.waitFor("the decision shown", method("POST /123456123/messages", "Approved by oncall@example.com"))
	ce.whatsapp.waitFor("the resumed answer", method("POST /123456123/messages", "Done: it printed hello."))
	waitSessionDone(t, ce.owner, sid)

	// More than 24 hours after the person's last message, nothing free-form
	// is sent: a decision made then is not pushed to WhatsApp.
	whatsappPost(ce.env, chID, whatsappSecret, text("wamid.3", "say hello again"))
	ce.whatsapp.waitFor("the second approval", func(c chatCall) bool {
		return c.Method == "POST /123456123/messages" && strings.Contains(c.text(), `"interactive"`) && !strings.Contains(c.text(), approvalID)
	})
	var id2 string
	for _, it := range ce.owner.must(200, "GET", "/api/approvals?status=pending", nil).JSON()["items"].([]any) {
		id2 = it.(map[string]any)["id"].(string)
	}
	if err := ce.env.DB.Write(context.Background(), func(tx *store.Tx) error {
		_, err := tx.Exec(`UPDATE channel_threads SET last_inbound_at = ?`, store.TS(time.Now().Add(-25*time.Hour)))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	before := ce.whatsapp.count(func(chatCall) bool { return true })
	ce.owner.must(200, "POST", "/api/approvals/"+id2+"/deny", map[string]any{"comment": "later"})
	waitSessionDone(t, ce.owner, sid)
	deadline := time.Now().Add(30 * time.Second)
	for withheld := 0; withheld < 2; { // the decided card and the answer
		if err := ce.env.DB.Reader().QueryRow(`SELECT withheld FROM channel_threads`).Scan(&withheld); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("withheld messages counted: %d, want 2", withheld)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if after := ce.whatsapp.count(func(chatCall) bool { return true }); after != before {
		t.Fatalf("%d messages sent outside the 24-hour window", after-before)
	}
	// The person's next message reopens the window; the answer says what was not delivered.
	whatsappPost(ce.env, chID, whatsappSecret, text("wamid.4", "anything new?"))
	ce.whatsapp.waitFor("the answer with the explanation", method("POST /123456123/messages", "2 earlier message(s) were not delivered", "24 hours", "Back with you."))
}
