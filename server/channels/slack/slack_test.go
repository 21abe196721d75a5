package slack

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/channels"
)

func signed(secret string, ts time.Time, body []byte) http.Header {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:" + strconv.FormatInt(ts.Unix(), 10) + ":"))
	mac.Write(body)
	return http.Header{"X-Slack-Request-Timestamp": {strconv.FormatInt(ts.Unix(), 10)},
		"X-Slack-Signature": {"v0=" + hex.EncodeToString(mac.Sum(nil))}}
}

func TestVerify(t *testing.T) {
	now, body := time.Unix(1_700_000_000, 0), []byte(`{"type":"event_callback"}`)
	if err := Verify(signed("s", now, body), body, "s", now.Add(4*time.Minute)); err != nil {
		t.Fatalf("valid within the window: %v", err)
	}
	bad := []struct {
		name string
		h    http.Header
		body []byte
		now  time.Time
	}{
		{"other secret", signed("t", now, body), body, now},
		{"body changed", signed("s", now, body), []byte(`{"type":"x"}`), now},
		{"stale", signed("s", now, body), body, now.Add(5*time.Minute + time.Second)},
		{"future", signed("s", now, body), body, now.Add(-6 * time.Minute)},
		{"no headers", http.Header{}, body, now},
		{"not hex", http.Header{"X-Slack-Request-Timestamp": {"1700000000"}, "X-Slack-Signature": {"v0=zz"}}, body, now},
	}
	for _, b := range bad {
		if Verify(b.h, b.body, "s", b.now) == nil {
			t.Errorf("%s: accepted", b.name)
		}
	}
	if Verify(signed("", now, body), body, "", now) == nil {
		t.Error("an empty signing secret must verify nothing")
	}
}

func TestParseIgnoresBotsEditsAndChannelChatter(t *testing.T) {
	ev := func(e string) []byte {
		return []byte(`{"type":"event_callback","event_id":"Ev1","event":` + e + `}`)
	}
	for name, body := range map[string][]byte{
		"bot message":      ev(`{"type":"message","channel_type":"im","channel":"D1","user":"U1","bot_id":"B1","text":"hi","ts":"1.1"}`),
		"own message":      ev(`{"type":"message","channel_type":"im","channel":"D1","user":"UBOT","text":"hi","ts":"1.1"}`),
		"edit":             ev(`{"type":"message","subtype":"message_changed","channel_type":"im","channel":"D1","text":"hi","ts":"1.1"}`),
		"channel chatter":  ev(`{"type":"message","channel_type":"channel","channel":"C1","user":"U1","text":"hi","ts":"1.1"}`),
		"other event type": ev(`{"type":"reaction_added","channel":"C1","user":"U1"}`),
		"app rate limited": []byte(`{"type":"app_rate_limited","token":"x","team_id":"T1","minute_rate_limited":1518467820}`),
	} {
		in, err := Parse("application/json", body, "UBOT")
		if err != nil || in.Kind != channels.KindIgnore {
			t.Errorf("%s: kind %q err %v", name, in.Kind, err)
		}
	}
	in, err := Parse("application/json", ev(`{"type":"app_mention","channel":"C1","user":"U1","text":"<@UBOT> disk?","ts":"5.5","thread_ts":"4.4"}`), "UBOT")
	if err != nil || in.Kind != channels.KindMessage || in.Text != "disk?" || in.Thread != "4.4" || in.ThreadKey() != "C1:4.4" || in.DeliveryKey != "event:Ev1" {
		t.Fatalf("mention in a thread: %+v %v", in, err)
	}
	if _, err := Parse("application/json", []byte(`{"type":"event_callback","event":{"type":"app_mention"}}`), ""); err == nil {
		t.Error("an event without id or channel is malformed")
	}
}
