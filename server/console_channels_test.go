package server_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/opsagent/opsagent/server"
)

// The Channels page in a real browser: connect a Slack channel (its inbound
// URL and setup steps shown), test it against Slack's API (the bot's user
// id recorded), issue a link code; the page passes axe-core.
func TestConsoleChannels(t *testing.T) {
	sf := newSlackFake(t)
	env := newEnv(t, func(c *server.Config) { c.SlackAPIURL = sf.URL })
	c := env.register("op@example.com")
	c.Project = c.must(201, "POST", "/api/projects", map[string]any{"name": "prod"}).JSON()["id"].(string)
	ctx, cancel := browser(t)
	defer cancel()
	q := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }

	signIn(t, ctx, env.URL, "op@example.com")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1200, 900), chromedp.WaitVisible(q(`#nav`))); err != nil {
		t.Fatal(err)
	}
	clickNav(t, ctx, "/channels")
	err := chromedp.Do(ctx,
		chromedp.WaitVisible(q(`#channel-create`)),
		chromedp.SendKeys(q(`#channel-create input[name=name]`), "ops-slack"),
		chromedp.SendKeys(q(`#channel-create input[name=bot_token]`), "xoxb-test-token"),
		chromedp.SendKeys(q(`#channel-create input[name=signing_secret]`), slackSecret),
		click(`#channel-create button[type=submit]`),
	)
	if err != nil {
		t.Fatalf("connect a channel: %v", err)
	}
	waitJS(t, ctx, "the inbound URL and setup steps", `(document.querySelector('#channel-made-url')?.value || '').includes('/api/inbound/slack/') && `+textHas(`#channel-made`, "Event Subscriptions"))
	chs := c.must(200, "GET", "/api/channels", nil).JSON()["items"].([]any)
	if len(chs) != 1 || chs[0].(map[string]any)["platform"] != "slack" {
		t.Fatalf("channels after the form: %v", chs)
	}
	if err := chromedp.Do(ctx, click(`.channel .channel-test`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the test result", textHas(`.channel-test-result`, "connected as U0LAN0Z89"))
	if err := chromedp.Do(ctx, click(`.channel .channel-link`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "a link code", `(document.querySelector('.channel-code input')?.value || '').startsWith('link OPS-')`)
	visit(t, ctx, "channels", 1200, 900) // settles, then axe in both themes, nothing wider than a phone
}
