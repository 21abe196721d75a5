package whatsapp

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"testing"

	"github.com/opsagent/opsagent/server/channels"
)

func TestVerifyAndHandshake(t *testing.T) {
	body := []byte(`{"object":"whatsapp_business_account"}`)
	mac := hmac.New(sha256.New, []byte("app"))
	mac.Write(body)
	good := http.Header{"X-Hub-Signature-256": {"sha256=" + hex.EncodeToString(mac.Sum(nil))}}
	if err := Verify(good, body, "app"); err != nil {
		t.Fatal(err)
	}
	for name, h := range map[string]http.Header{"missing": {}, "sha1": {"X-Hub-Signature-256": {"sha1=00"}}, "wrong": {"X-Hub-Signature-256": {"sha256=00"}}} {
		if Verify(h, body, "app") == nil {
			t.Errorf("%s accepted", name)
		}
	}
	if Verify(good, body, "other") == nil {
		t.Error("another app secret accepted")
	}
	if c, err := VerifyHandshake("subscribe", "tok", "42", "tok"); err != nil || c != "42" {
		t.Fatalf("handshake: %q %v", c, err)
	}
	for _, c := range [][2]string{{"subscribe", "bad"}, {"unsubscribe", "tok"}, {"subscribe", ""}} {
		if _, err := VerifyHandshake(c[0], c[1], "42", "tok"); err == nil {
			t.Errorf("%v accepted", c)
		}
	}
}

func TestParseKeepsMessagesOfItsNumberOnly(t *testing.T) {
	body := []byte(`{"object":"whatsapp_business_account","entry":[{"changes":[
		{"field":"messages","value":{"metadata":{"phone_number_id":"111"},"statuses":[{"id":"wamid.s","status":"read"}]}},
		{"field":"messages","value":{"metadata":{"phone_number_id":"222"},"messages":[{"from":"9","id":"wamid.other","type":"text","text":{"body":"x"}}]}},
		{"field":"messages","value":{"metadata":{"phone_number_id":"111"},"contacts":[{"profile":{"name":"Kim"},"wa_id":"5"}],
			"messages":[{"from":"5","id":"wamid.a","type":"text","text":{"body":"disk?"}},{"from":"5","id":"wamid.b","type":"image"}]}}]}]}`)
	ins, err := Parse(body, "111")
	if err != nil || len(ins) != 2 {
		t.Fatalf("%d inbound, %v", len(ins), err)
	}
	if in := ins[0]; in.Kind != channels.KindMessage || in.Text != "disk?" || in.UserName != "Kim" || in.DeliveryKey != "message:wamid.a" {
		t.Fatalf("text: %+v", in)
	}
	if ins[1].Kind != channels.KindIgnore {
		t.Fatalf("an image is not a prompt: %+v", ins[1])
	}
	if _, err := Parse([]byte(`{"object":"page"}`), "111"); err == nil {
		t.Error("another object type accepted")
	}
}
