package server_test

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// The project's sandbox profile on the Sandbox tab of project settings: a
// relative path is refused with the server's reason beside the field, an absolute one is
// saved and the page says what approved commands may now write.
func TestConsoleSandboxProfileTab(t *testing.T) {
	env := newEnv(t)
	c := env.register("sre@example.com")
	withProject(t, env, c)
	ctx, cancel := browser(t)
	defer cancel()
	q := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }
	signIn(t, ctx, env.URL, "sre@example.com")
	clickNav(t, ctx, "/settings")
	if err := chromedp.Do(ctx, click(`#tab-sandbox`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the sandbox tab", textHas(`#sandbox-summary`, "wherever the host's user may"))
	err := chromedp.Do(ctx,
		chromedp.SendKeys(q(`#sandbox-profile-form textarea[name=allow_paths]`), "srv/app"),
		click(`#sandbox-profile-form button[type=submit]`),
	)
	if err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the refusal beside the field", textHas(`#sandbox-profile-form .field-error`, "absolute"))
	err = chromedp.Do(ctx,
		chromedp.SetValue(q(`#sandbox-profile-form textarea[name=allow_paths]`), "/srv/app\n/var/log/app\n"),
		click(`#sandbox-profile-form button[type=submit]`),
	)
	if err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the saved profile", textHas(`#sandbox-summary`, "only beneath /srv/app, /var/log/app"))
	got := c.must(200, "GET", "/api/sandbox-profile", nil).JSON()
	if ps := got["allow_paths"].([]any); len(ps) != 2 || ps[0] != "/srv/app" || ps[1] != "/var/log/app" {
		t.Fatalf("saved from the console: %v", got)
	}
}
