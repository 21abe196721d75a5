package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// pacingTurns answer in two steps (a tool call between them), so the answer
// is edited more than once and its last edit comes soon after the one
// before it.
func pacingTurns() []llmfake.Turn {
	return []llmfake.Turn{
		llmfake.Reply("Looking at the disk.", llmfake.Call{Name: "run_command", Arguments: `{"command":"echo 40%","target":"server"}`}),
		llmfake.Text("The disk is 40% full."),
	}
}

func allowEcho(ce *channelEnv) {
	ce.owner.must(201, "POST", "/api/rules", map[string]any{"kind": "must_always", "effect": "allow", "description": "echo is harmless",
		"tool": "run_command", "match_type": "glob", "pattern": "echo *"})
}

// writesApart checks that the answer's writes (the placeholder, then every
// edit, as the platform fake received them) are at least interval apart:
// the last edit as well, which the platforms rate-limit like any other.
func writesApart(t *testing.T, f *chatFake, post, edit, final string, interval time.Duration) {
	t.Helper()
	f.waitFor("the final edit", method(edit, final))
	f.mu.Lock()
	defer f.mu.Unlock()
	var at []time.Time
	var what []string
	for _, c := range f.calls {
		if c.Method == post && strings.Contains(c.text(), "…") || c.Method == edit {
			at, what = append(at, c.At), append(what, c.Method+" "+c.text())
		}
	}
	if len(at) < 2 {
		t.Fatalf("answer writes: %v, want a placeholder and its edits", what)
	}
	for i := 1; i < len(at); i++ {
		if gap := at[i].Sub(at[i-1]); gap < interval {
			t.Errorf("write %d (%s) came %v after the one before, want at least the update interval %v", i, what[i], gap, interval)
		}
	}
}

func TestSlackFinalEditWaitsForTheUpdateInterval(t *testing.T) {
	const interval = 300 * time.Millisecond
	ce := newChannelEnvEvery(t, interval, pacingTurns()...)
	allowEcho(ce)
	chID := ce.slackChannel(t, map[string]any{"allow_unlinked": true})
	mention := fixture(t, "slack/app_mention.json", map[string]any{"event.text": "<@U0LAN0Z89> how full is the disk?"})
	if r := slackPost(ce.env, chID, mention, time.Now(), "application/json", slackSecret, 0); r.Status != 200 {
		t.Fatalf("app_mention: %d %s", r.Status, r.Body)
	}
	writesApart(t, ce.slack, "chat.postMessage", "chat.update", "40% full", interval)
}

func TestTelegramFinalEditWaitsForTheUpdateInterval(t *testing.T) {
	const interval = 300 * time.Millisecond
	ce := newChannelEnvEvery(t, interval, pacingTurns()...)
	allowEcho(ce)
	chID := ce.owner.must(201, "POST", "/api/channels", map[string]any{"platform": "telegram", "name": "group", "allow_unlinked": true,
		"bot_user_id": "opsagent_bot", "credentials": map[string]any{"bot_token": telegramToken, "secret_token": "pace-secret"}}).JSON()["id"].(string)
	update := fixture(t, "telegram/message.json", map[string]any{"update_id": 1, "message.text": "@opsagent_bot how full is the disk?",
		"message.chat": map[string]any{"id": -100778, "type": "supergroup", "title": "ops"}})
	if r := telegramPost(ce.env, chID, "pace-secret", update); r.Status != 200 {
		t.Fatalf("update: %d %s", r.Status, r.Body)
	}
	writesApart(t, ce.telegram, "sendMessage", "editMessageText", "40% full", interval)
}
