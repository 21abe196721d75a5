package server_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack/slacktest"

	"github.com/opsagent/opsagent/server"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// chatCall is one Web API call a platform fake received.
type chatCall struct {
	Method string
	Form   url.Values     // form-encoded calls (Slack chat.*)
	JSON   map[string]any // JSON calls (views.open, Telegram, WhatsApp)
	Ref    string         // the id the fake gave a message it created (Slack ts, Telegram/WhatsApp message id)
	At     time.Time
}

// text is everything the call shows a person, for assertions.
func (c chatCall) text() string {
	if c.Form != nil {
		return c.Form.Get("text") + " " + c.Form.Get("blocks")
	}
	b, _ := json.Marshal(c.JSON)
	return string(b)
}

// chatFake records the calls a platform's loopback fake receives.
type chatFake struct {
	t testing.TB
	// notify, when set, hears of every recorded call (benchmarks).
	notify chan chatCall
	mu     sync.Mutex
	calls  []chatCall
	URL    string
	seq    int
	// limitOnce answers the next call of this method 429 with Retry-After: 1.
	limitOnce map[string]bool
	limited   int // calls answered 429
}

// limit makes the next call of method answer 429 with a Retry-After of 1 s.
func (f *chatFake) limit(method string) {
	f.mu.Lock()
	f.limitOnce[method] = true
	f.mu.Unlock()
}

func (f *chatFake) record(method string, r *http.Request) (chatCall, bool) {
	body, _ := io.ReadAll(r.Body)
	c := chatCall{Method: method, At: time.Now()}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		_ = json.Unmarshal(body, &c.JSON)
	} else {
		c.Form, _ = url.ParseQuery(string(body))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.limitOnce[method] {
		delete(f.limitOnce, method)
		f.limited++
		return c, false
	}
	f.seq++
	c.Ref = fmt.Sprintf("1700000000.%06d", f.seq)
	f.calls = append(f.calls, c)
	if f.notify != nil {
		f.notify <- c
	}
	return c, true
}

// waitFor returns the first call pred accepts, waiting up to 30 s.
func (f *chatFake) waitFor(what string, pred func(chatCall) bool) chatCall {
	f.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		f.mu.Lock()
		for _, c := range f.calls {
			if pred(c) {
				f.mu.Unlock()
				return c
			}
		}
		f.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var seen []string
	for _, c := range f.calls {
		seen = append(seen, c.Method+" "+c.text())
	}
	f.t.Fatalf("no %s among the platform calls:\n%s", what, strings.Join(seen, "\n"))
	return chatCall{}
}

func (f *chatFake) count(pred func(chatCall) bool) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		if pred(c) {
			n++
		}
	}
	return n
}

func method(m string, subs ...string) func(chatCall) bool {
	return func(c chatCall) bool { return c.Method == m && containsAll(c.text(), subs...) }
}

// newSlackFake is slack-go's own test server with the Web API methods the
// bot calls answered as Slack does, each call recorded.
func newSlackFake(t testing.TB) *chatFake {
	f := &chatFake{t: t, limitOnce: map[string]bool{}}
	handler := func(m string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			c, ok := f.record(m, r)
			if !ok {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			ts := c.Ref
			w.Header().Set("Content-Type", "application/json")
			switch m {
			case "chat.postMessage":
				_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "channel": c.Form.Get("channel"), "ts": ts})
			case "chat.update":
				_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "channel": c.Form.Get("channel"), "ts": c.Form.Get("ts"), "text": c.Form.Get("text")})
			case "chat.postEphemeral":
				_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "message_ts": ts})
			case "views.open":
				_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "view": map[string]any{"id": "V0123"}})
			case "auth.test":
				_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "user_id": "U0LAN0Z89", "bot_id": "B0LAN0Z89", "team": "T", "user": "opsagent"})
			}
		}
	}
	srv := slacktest.NewTestServer(func(c slacktest.Customize) {
		for _, m := range []string{"chat.postMessage", "chat.update", "chat.postEphemeral", "views.open", "auth.test"} {
			c.Handle("/"+m, handler(m))
		}
	})
	srv.Start()
	t.Cleanup(srv.Stop)
	f.URL = srv.GetAPIURL()
	return f
}

// fixture reads a platform's documented example payload and lets the test
// change fields (dot paths into objects).
func fixture(t testing.TB, file string, set map[string]any) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "channels", file))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for path, v := range set {
		parts := strings.Split(path, ".")
		cur := m
		for _, p := range parts[:len(parts)-1] {
			next, ok := cur[p].(map[string]any)
			if !ok {
				if arr, isArr := cur[p].([]any); isArr {
					next = arr[0].(map[string]any)
				} else {
					next = map[string]any{}
					cur[p] = next
				}
			}
			cur = next
		}
		if v == nil {
			delete(cur, parts[len(parts)-1])
		} else {
			cur[parts[len(parts)-1]] = v
		}
	}
	out, _ := json.Marshal(m)
	return out
}

const slackSecret = "8f742231b10e8888abcd99yyyzzz85a5"

// slackPost sends body to the channel's inbound URL signed as Slack signs
// (v0, at ts), with an optional retry number.
func slackPost(env *testEnv, chID string, body []byte, ts time.Time, contentType, secret string, retry int) *resp {
	env.t.Helper()
	req, _ := http.NewRequest("POST", env.URL+"/api/inbound/slack/"+chID, bytes.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%d:", ts.Unix())
	mac.Write(body)
	req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
	if retry > 0 {
		req.Header.Set("X-Slack-Retry-Num", strconv.Itoa(retry))
		req.Header.Set("X-Slack-Retry-Reason", "http_timeout")
	}
	return env.newClient().send(req)
}

// slackInteraction wraps an interaction payload as Slack sends it (form, payload=).
func slackInteraction(payload []byte) []byte {
	return []byte("payload=" + url.QueryEscape(string(payload)))
}

// channelEnv is a server with the fake LLM, local commands, fast chat
// updates and the platforms' API URLs pointing at the fakes.
type channelEnv struct {
	env      *testEnv
	fake     *llmfake.Server
	owner    *client
	slack    *chatFake
	telegram *chatFake
	whatsapp *chatFake
}

// Platform credentials of the test channels.
const (
	telegramToken  = "123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11"
	whatsappToken  = "EAAGtesttoken"
	whatsappSecret = "whatsapp-app-secret"
)

func newChannelEnv(t *testing.T, turns ...llmfake.Turn) *channelEnv {
	t.Helper()
	return newChannelEnvEvery(t, 20*time.Millisecond, turns...)
}

// newChannelEnvEvery is a channelEnv whose answers are edited at most once
// per interval.
func newChannelEnvEvery(t *testing.T, interval time.Duration, turns ...llmfake.Turn) *channelEnv {
	t.Helper()
	fake := llmfake.New(t, turns...)
	sf, tf, wf := newSlackFake(t), newTelegramFake(t, telegramToken), newWhatsAppFake(t, whatsappToken)
	env := newEnv(t, withLLM(fake), allowLocal, func(c *server.Config) {
		c.SlackAPIURL, c.TelegramAPIURL, c.WhatsAppAPIURL = sf.URL, tf.URL, wf.URL
		c.ChannelUpdateInterval = interval
	})
	t.Cleanup(func() {
		if t.Failed() {
			logs := env.Logs.String()
			t.Log("server log (tail):\n" + logs[max(0, len(logs)-6000):])
		}
	})
	owner := env.register("oncall@example.com")
	withProject(t, env, owner)
	return &channelEnv{env: env, fake: fake, owner: owner, slack: sf, telegram: tf, whatsapp: wf}
}

// slackChannel connects a Slack channel and returns its id.
func (ce *channelEnv) slackChannel(t *testing.T, extra map[string]any) string {
	t.Helper()
	body := map[string]any{"platform": "slack", "name": "ops-slack", "bot_user_id": "U0LAN0Z89",
		"credentials": map[string]any{"bot_token": "xoxb-test-token", "signing_secret": slackSecret}}
	for k, v := range extra {
		body[k] = v
	}
	return ce.owner.must(201, "POST", "/api/channels", body).JSON()["id"].(string)
}

// link issues a link code as c and sends it to the bot as the platform user.
func (ce *channelEnv) linkSlack(t *testing.T, c *client, chID, slackUser string) {
	t.Helper()
	code := c.must(201, "POST", "/api/channels/"+chID+"/link-codes", nil).JSON()["code"].(string)
	body := fixture(t, "slack/message_im.json", map[string]any{"event_id": "EvLink" + slackUser, "event.user": slackUser, "event.text": "link " + code})
	slackPost(ce.env, chID, body, time.Now(), "application/json", slackSecret, 0)
	ce.slack.waitFor("the link confirmation", method("chat.postMessage", "Linked"))
	links := c.must(200, "GET", "/api/channels/"+chID+"/links", nil).JSON()["items"].([]any)
	for _, l := range links {
		if l.(map[string]any)["external_user_id"] == slackUser {
			return
		}
	}
	t.Fatalf("%s not linked: %v", slackUser, links)
}
