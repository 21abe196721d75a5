package server_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// pageProblems collects what a page reports as broken: uncaught
// exceptions, console errors and browser log errors (CSP violations, failed
// loads).
type pageProblems struct {
	mu   sync.Mutex
	seen []string
}

func watchProblems(t *testing.T, ctx context.Context) *pageProblems {
	t.Helper()
	p := &pageProblems{}
	err := chromedp.Listen(ctx, func(ev any) {
		var msg string
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			msg = "exception: " + e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				msg += " " + e.ExceptionDetails.Exception.Description
			}
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				for _, a := range e.Args {
					msg += " " + string(a.Value) + a.Description
				}
				msg = "console.error:" + msg
			}
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError {
				msg = "log: " + e.Entry.Text + " " + e.Entry.URL
			}
		}
		if msg != "" {
			p.mu.Lock()
			p.seen = append(p.seen, msg)
			p.mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, log.Enable, cdp.Empty{})
		return err
	}))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *pageProblems) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.seen
	p.seen = nil
	return out
}

// A person starts an evaluation from the console by uploading a scenario
// file, sees it complete, and opens its HTML report: both pages render
// with no console error and no serious accessibility issue.
func TestConsoleEvaluationAndItsReport(t *testing.T) {
	fake := llmfake.New(t)
	fake.Respond(func(r llmfake.Request) (llmfake.Turn, bool) {
		if len(r.Messages) == 1 {
			return llmfake.ToolCall("report_finding", `{"summary":"/var on db-1 is full: log rotation broke","hypotheses":[{"cause":"log rotation of postgres logs broke","confidence":"high","evidence":["ev1"]}],"impact":"db-1 stops writing","next_steps":[]}`), true
		}
		return llmfake.Text("Log rotation broke on db-1."), true
	})
	env, base := consoleEnv(t, withLLM(fake))
	env.register("evals@example.com")
	ctx, cancel := browser(t)
	defer cancel()
	problems := watchProblems(t, ctx)
	signIn(t, ctx, base, "evals@example.com")
	scenario, _ := filepath.Abs("../testdata/evals/disk-full.yaml")
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#me`))); err != nil {
		t.Fatal(err)
	}
	problems.take() // the signed-out page's expected 401s (who am I, refresh)
	err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/evals"),
		chromedp.WaitVisible(chromedp.CSS(`#eval-start`)),
		chromedp.SetUploadFiles(chromedp.CSS(`#eval-start input[name=scenarios]`), []string{scenario}),
		click(`#eval-start button[type=submit]`),
		chromedp.WaitVisible(chromedp.CSS(`#evals-list tbody tr`)),
	)
	if err != nil {
		t.Fatalf("start an evaluation in the console: %v", err)
	}
	// It completes in the background; the list shows its report link then.
	ok, err := chromedp.Run(ctx, chromedp.Poll[bool](`(async () => {
		const b = document.querySelector('#evals-list button.secondary'); if (b) b.click();
		return !!document.querySelector('#evals-list a[href$="/report.html"]'); })()`, chromedp.WithPollingTimeout(60e9)))
	if err != nil || !ok {
		t.Fatalf("the evaluation never showed its report link: %v", err)
	}
	waitSettled(t, ctx)
	checkA11y(t, ctx, "evaluations")
	href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#evals-list a[href$="/report.html"]').getAttribute('href')`))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(base+href), chromedp.WaitVisible(chromedp.CSS(`main h1`))); err != nil {
		t.Fatalf("open the report: %v", err)
	}
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`main`)))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Side by side", "disk-full", "100%"} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q:\n%s", want, text)
		}
	}
	for _, bad := range []string{"undefined", "NaN", "[object Object]", "<nil>"} {
		if strings.Contains(text, bad) {
			t.Errorf("the report shows %q", bad)
		}
	}
	checkA11y(t, ctx, "evaluation report")
	colorScheme(t, ctx, "dark")
	checkA11y(t, ctx, "evaluation report (dark)")
	colorScheme(t, ctx, "")
	if got := problems.take(); len(got) > 0 {
		t.Fatalf("the pages reported problems:\n%s", strings.Join(got, "\n"))
	}
}
