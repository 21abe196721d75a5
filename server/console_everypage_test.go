package server_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/opsagent/opsagent/store"
)

// walkBrowser is problemBrowser with room for a walk of every page.
func walkBrowser(t *testing.T, limit time.Duration) (context.Context, context.CancelFunc) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)), chromedp.NoSandbox, chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(t.TempDir()))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, limit)
	cancel := func() { cancelTimeout(); cancelCtx(); cancelAlloc() }
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		for _, src := range []string{trackFetches, trackProblems} {
			if _, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: src}); err != nil {
				return err
			}
		}
		return nil
	}))
	if err != nil {
		cancel()
		t.Fatalf("start the browser: %v", err)
	}
	return ctx, cancel
}

// Every page of the console, in the light and the dark theme, at 1400x900
// and 390x844: axe-core finds no serious or critical issue, no placeholder
// text ("null", "undefined", "NaN", "[object Object]", "Invalid Date") is
// shown, no request fails and nothing is logged as an error. With
// OPSAGENT_SCREENSHOT_DIR set, a PNG of each page, size and theme is
// written there (README: "Screenshots of every page").
func TestConsoleEveryPage(t *testing.T) {
	env := newEnv(t, openSignup)
	c := env.register("op@example.com")
	withProject(t, env, c)
	pendingApproval(t, env, c, "on alert")
	incident := c.must(200, "GET", "/api/incidents", nil).JSON()["items"].([]any)[0].(map[string]any)["id"].(string)
	task := c.must(200, "GET", "/api/tasks", nil).JSON()["items"].([]any)[0].(map[string]any)["id"].(string)
	c.must(201, "POST", "/api/knowledge/documents", map[string]any{"collection": "runbooks", "name": "disk-full.md", "content": "# Disk full\nclean /var/log"})
	c.must(201, "POST", "/api/changes", map[string]any{"title": "deploy api v1.4.2", "kind": "deploy", "service": "api"})
	c.must(201, "POST", "/api/org-rules", map[string]any{"kind": "must_never", "tool": "run_command", "match_type": "command", "pattern": "rm -rf *", "description": "never wipe a filesystem"})
	c.must(201, "POST", "/api/connectors", map[string]any{"name": "web-1", "labels": map[string]string{"env": "prod"}})
	u, _ := env.DB.FindUserByEmail(context.Background(), c.Email)
	s := &store.AgentSession{OrgID: u.CurrentOrgID, ProjectID: c.Project, Source: "webchat", Status: "completed", Title: "disk cleanup on db-1", TokensIn: 1200, TokensOut: 300, Cost: 0.42}
	if err := env.DB.Write(context.Background(), func(tx *store.Tx) error { return store.CreateAgentSessionTx(context.Background(), tx, s) }); err != nil {
		t.Fatal(err)
	}

	pages := []string{"/dashboard", "/account"}
	ctx, cancel := walkBrowser(t, 9*time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 900)); err != nil {
		t.Fatal(err)
	}
	signIn(t, ctx, env.URL, "op@example.com")
	waitJS(t, ctx, "signed in", `!!document.querySelector('#nav .nav-group a')`)
	hrefs, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#nav .nav-group a')].map(a => a.getAttribute('href'))`))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, hrefs...)
	pages = append(pages, "/incidents/"+incident, "/sessions/"+s.ID, "/webhooks/"+task, "/chat/"+s.ID)
	// Tabs and pages no navigation link opens.
	pages = append(pages, "/organization?tab=orgs", "/organization?tab=rules", "/organization?tab=retention", "/organization?tab=branding",
		"/settings?tab=rules", "/accept-invite?token=walk")

	dir := os.Getenv("OPSAGENT_SCREENSHOT_DIR")
	for _, size := range shotSizes {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(size.w, size.h)); err != nil {
			t.Fatal(err)
		}
		for _, p := range pages {
			name := strings.NewReplacer("/", "-", "?tab=", "-", "?token=", "-", incident, "one", s.ID, "one", task, "one").Replace(strings.TrimPrefix(p, "/"))
			if err := chromedp.Do(ctx, chromedp.Navigate(env.URL+p)); err != nil {
				t.Fatalf("open %s: %v", p, err)
			}
			waitJS(t, ctx, "the page "+p, `!!document.querySelector('#view h1')`)
			for _, theme := range []string{"light", "dark"} {
				colorScheme(t, ctx, map[string]string{"light": "", "dark": "dark"}[theme])
				waitSettled(t, ctx)
				label := name + " " + size.name + " " + theme
				checkA11y(t, ctx, label)
				if p := placeholders(t, ctx); len(p) > 0 {
					t.Errorf("%s shows placeholder text: %v", label, p)
				}
				if dir != "" {
					png, err := chromedp.Run(ctx, chromedp.FullScreenshot(90))
					if err != nil {
						t.Fatalf("screenshot %s: %v", label, err)
					}
					if err := os.WriteFile(filepath.Join(dir, "page-"+name+"-"+size.name+"-"+theme+".png"), png, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			colorScheme(t, ctx, "")
			if f := failedRequests(t, ctx); len(f) > 0 {
				t.Errorf("%s at %s made failed requests: %v", p, size.name, f)
			}
			if pr := consoleProblems(t, ctx); len(pr) > 0 {
				t.Errorf("%s at %s logged errors: %v", p, size.name, pr)
			}
		}
	}
}
