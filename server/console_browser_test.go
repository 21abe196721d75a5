package server_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium finds Debian's headless browser. CI installs it (.ci/run); on a
// developer machine without it the browser tests are skipped, never faked.
func chromium(t *testing.T) string {
	for _, p := range []string{os.Getenv("OPSAGENT_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p == "" {
			continue
		}
		if _, err := exec.LookPath(p); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed; .ci/run must install it")
	}
	t.Skip("chromium not installed; apt-get install chromium to run the browser tests")
	return ""
}

func browser(t *testing.T) (context.Context, context.CancelFunc) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	limit := 2 * time.Minute // generous: eight engineers share two cores
	if os.Getenv("OPSAGENT_SCREENSHOT_DIR") != "" {
		limit = 4 * time.Minute // full-page screenshots at two sizes of every page
	}
	ctx, cancelTimeout := context.WithTimeout(ctx, limit)
	cancel := func() { cancelTimeout(); cancelCtx(); cancelAlloc() }
	if err := installFetchTracker(ctx); err != nil { // click waits on it (console_click_test.go)
		cancel()
		t.Fatalf("start the browser: %v", err)
	}
	return ctx, cancel
}

// A person signs in to the console in a real browser, then approves a
// command-line sign-in there; the device flow completes for the CLI.
func TestConsoleSignInAndApproveCLIGrant(t *testing.T) {
	env := newEnv(t)
	env.register("op@example.com")
	ctx, cancel := browser(t)
	defer cancel()

	q := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }
	err := chromedp.Do(ctx,
		chromedp.Navigate(env.URL+"/"),
		chromedp.WaitVisible(q(`#login`)),
	)
	if err != nil {
		t.Fatalf("open the console: %v", err)
	}
	checkA11y(t, ctx, "sign in")
	err = chromedp.Do(ctx,
		chromedp.SendKeys(q(`#login input[name=email]`), "op@example.com"),
		chromedp.SendKeys(q(`#login input[name=password]`), "correct horse battery"),
		click(`#login button`),
		chromedp.WaitVisible(q(`#me`)),
	)
	if err != nil {
		t.Fatalf("sign in through the console: %v", err)
	}
	who, err := chromedp.Run(ctx, chromedp.Text(q(`#who`)))
	if err != nil || !strings.Contains(who, "op@example.com") {
		t.Fatalf("console shows %q (%v), want the signed-in address", who, err)
	}

	cli := env.newClient()
	dc := cli.must(200, "POST", "/api/auth/device-code", map[string]any{"client_name": "opsagent CLI"}).JSON()
	code := dc["user_code"].(string)
	err = chromedp.Do(ctx,
		chromedp.Navigate(env.URL+"/cli-grant?user_code="+code),
		chromedp.WaitVisible(q(`#grant-info`)),
	)
	if err != nil {
		t.Fatalf("open the grant page: %v", err)
	}
	checkA11y(t, ctx, "CLI grant")
	client, err := chromedp.Run(ctx, chromedp.Text(q(`#grant-client`)))
	if err != nil || client != "opsagent CLI" {
		t.Fatalf("grant page names %q (%v), want the client's name", client, err)
	}
	if err := chromedp.Do(ctx, click(`#grant-approve`)); err != nil {
		t.Fatalf("click approve: %v", err)
	}
	approved, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector('#grant-result').textContent.startsWith('Approved')`))
	if err != nil || !approved {
		t.Fatalf("grant result: %v %v", approved, err)
	}
	tok := cli.must(200, "POST", "/api/auth/device-token", map[string]any{
		"grant_type": "urn:ietf:params:oauth:grant-type:device_code", "device_code": dc["device_code"]}).JSON()
	if tok["access_token"] == nil {
		t.Fatalf("device token after approval: %v", tok)
	}
	cli.Token = tok["access_token"].(string)
	if me := cli.must(200, "GET", "/api/auth/me", nil).JSON(); me["email"] != "op@example.com" {
		t.Fatalf("CLI acts as %v, want op@example.com", me["email"])
	}
}
