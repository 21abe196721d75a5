package cli_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// telegramBot is a loopback Telegram Bot API that knows one token (getMe only).
func telegramBot(t *testing.T, token string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/bot"+token+"/getMe" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"ok":false,"error_code":401,"description":"Unauthorized"}`))
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": map[string]any{"id": 1, "is_bot": true, "username": "opsagent_bot"}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// channels: create (credentials from stdin or a file, never printed), list,
// show by id or name, test against the platform, edit, disable/enable, link
// codes and links, delete; exit 3 for what is not there, 2 for bad input.
func TestChannels(t *testing.T) {
	const token = "123456:tg-bot-token-never-printed"
	s := startServerWith(t, []string{"OPSAGENT_TELEGRAM_API_URL=" + telegramBot(t, token)})
	u := s.newUser("chatops@example.com")
	home := t.TempDir()
	env := s.cliEnv(home, u.key)
	const slackToken, slackSigning = "xoxb-slack-token-never-printed", "slack-signing-secret-never-printed"
	noSecrets := func(what string, r result) {
		t.Helper()
		for _, secret := range []string{token, slackToken, slackSigning} {
			if strings.Contains(r.stdout+r.stderr, secret) {
				t.Fatalf("%s printed a credential:\n%s\n%s", what, r.stdout, r.stderr)
			}
		}
	}

	// Telegram, the token from stdin; the generated secret_token shown once.
	tg := runWithInput(t, token+"\n", env, "channels", "create", "--platform", "telegram", "--name", "oncall", "--bot-token", "-")
	if tg.code != 0 || !strings.Contains(tg.stdout, "/api/inbound/telegram/") || !strings.Contains(tg.stdout, "Setup on the platform's side:") ||
		!strings.Contains(tg.stdout, "secret_token: ") || !strings.Contains(tg.stderr, "shown only now") {
		t.Fatalf("channels create telegram: exit %d\n%s\n%s", tg.code, tg.stdout, tg.stderr)
	}
	noSecrets("channels create", tg)

	// Slack, from a credentials file, as JSON.
	file := filepath.Join(home, "slack.json")
	if err := os.WriteFile(file, []byte(`{"bot_token":"`+slackToken+`","signing_secret":"`+slackSigning+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	sr := ok(t, env, "channels", "create", "--json", "--platform", "slack", "--name", "ops", "--credentials", file, "--allow-chat", "C0123", "--allow-unlinked")
	noSecrets("channels create --json", sr)
	slack := decode[map[string]any](t, sr.stdout)
	if slack["platform"] != "slack" || slack["allow_unlinked"] != true || slack["allowed_chat_ids"].([]any)[0] != "C0123" || slack["credentials"] != nil {
		t.Fatalf("channels create --json: %v", slack)
	}
	slackID := slack["id"].(string)

	list := ok(t, env, "channels", "list")
	if !strings.Contains(list.stdout, "PLATFORM") || !strings.Contains(list.stdout, "oncall") || !strings.Contains(list.stdout, "telegram") || !strings.Contains(list.stdout, slackID) {
		t.Fatalf("channels list:\n%s", list.stdout)
	}
	noSecrets("channels list", list)
	if items := decode[map[string]any](t, ok(t, env, "channels", "list", "--json").stdout)["items"].([]any); len(items) != 2 {
		t.Fatalf("channels list --json: %v", items)
	}
	if ids := strings.Fields(ok(t, env, "channels", "list", "-q").stdout); len(ids) != 2 {
		t.Fatalf("channels list -q: %v", ids)
	}
	shown := ok(t, env, "channels", "show", "ops").stdout
	if !strings.Contains(shown, slackID) || !strings.Contains(shown, "C0123") || !strings.Contains(shown, "may chat (never approve)") || strings.Contains(shown, "secret_token") {
		t.Fatalf("channels show by name:\n%s", shown)
	}

	// The platform is asked; the bot's username is kept.
	if out := ok(t, env, "channels", "test", "oncall").stdout; !strings.Contains(out, "ok: connected as opsagent_bot") {
		t.Fatalf("channels test:\n%s", out)
	}
	if got := decode[map[string]any](t, ok(t, env, "channels", "show", "oncall", "--json").stdout); got["bot_user_id"] != "opsagent_bot" {
		t.Fatalf("after test: %v", got)
	}
	edited := runWithInput(t, "wrong-token", env, "channels", "edit", "oncall", "--bot-token", "-", "--name", "oncall-bot")
	if edited.code != 0 || !strings.Contains(edited.stdout, "oncall-bot") {
		t.Fatalf("channels edit: exit %d\n%s\n%s", edited.code, edited.stdout, edited.stderr)
	}
	exits(t, 1, "the platform refused the channel's credentials", env, "channels", "test", "oncall-bot")

	if out := ok(t, env, "channels", "disable", "oncall-bot").stdout; !strings.Contains(out, "disabled") {
		t.Fatalf("channels disable:\n%s", out)
	}
	if got := decode[map[string]any](t, ok(t, env, "channels", "enable", "oncall-bot", "--json").stdout); got["enabled"] != true {
		t.Fatalf("channels enable: %v", got)
	}

	// Link codes are for signed-in people, not API keys.
	exits(t, 4, "", env, "channels", "link", "ops")
	person := s.cliEnv(t.TempDir(), u.token)
	if code := ok(t, person, "channels", "link", "ops").stdout; !strings.HasPrefix(code, "OPS-") {
		t.Fatalf("channels link: %q", code)
	}
	links := run(t, env, "channels", "links", "ops")
	if links.code != 0 || links.stdout != "" || !strings.Contains(links.stderr, "(none)") {
		t.Fatalf("channels links: %+v", links)
	}
	if got := decode[map[string]any](t, ok(t, env, "channels", "links", "ops", "--json").stdout); len(got["items"].([]any)) != 0 {
		t.Fatalf("channels links --json: %v", got)
	}
	exits(t, 3, "", env, "channels", "unlink", "ops", unknownID)

	if out := ok(t, env, "channels", "delete", "ops").stdout; out != "Deleted channel "+slackID+"\n" {
		t.Fatalf("channels delete: %q", out)
	}
	exits(t, 3, "", env, "channels", "show", slackID)
	exits(t, 3, `no channel named "ops"`, env, "channels", "delete", "ops")

	// Bad input: ours, then the server's.
	exits(t, 2, "--platform must be slack, telegram or whatsapp", env, "channels", "create", "--platform", "irc", "--name", "x")
	exits(t, 2, "credentials are required: --bot-token and --signing-secret", env, "channels", "create", "--platform", "slack", "--name", "x")
	exits(t, 2, "body.credentials.signing_secret", env, "channels", "create", "--platform", "slack", "--name", "x", "--bot-token", "xoxb-1")
	exits(t, 2, `unknown field "bot_tokn"`, env, "channels", "create", "--platform", "slack", "--name", "x", "--credentials", writeFile(t, home, `{"bot_tokn":"x"}`))
	exits(t, 2, "only one of --bot-token and --app-secret can read stdin", env, "channels", "create", "--platform", "whatsapp", "--name", "x", "--bot-token", "-", "--app-secret", "-")
	exits(t, 2, "nothing to change", env, "channels", "edit", "oncall-bot")
}

func writeFile(t *testing.T, dir, content string) string {
	t.Helper()
	p := filepath.Join(dir, "creds.json")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
