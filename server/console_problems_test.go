package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// trackProblems records, in every document the tab opens, what a person
// would see go wrong: console errors, uncaught exceptions and refused
// promises (window.__problems). Failed requests come from the resource
// timing entries (their responseStatus), so every fetch and image counts.
const trackProblems = `(() => {
  if (window.__problems) return;
  window.__problems = [];
  performance.setResourceTimingBufferSize(100000);
  const orig = console.error.bind(console);
  console.error = (...a) => { window.__problems.push('console.error: ' + a.map(String).join(' ')); orig(...a); };
  addEventListener('error', (e) => window.__problems.push('error: ' + (e.message || (e.target && e.target.src) || 'unknown')), true);
  addEventListener('unhandledrejection', (e) => window.__problems.push('unhandled rejection: ' + (e.reason && e.reason.message || e.reason)));
})()`

// problemBrowser is browser with trackProblems installed.
func problemBrowser(t *testing.T) (context.Context, context.CancelFunc) {
	t.Helper()
	ctx, cancel := browser(t)
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: trackProblems})
		return err
	}))
	if err != nil {
		cancel()
		t.Fatalf("install the problem tracker: %v", err)
	}
	return ctx, cancel
}

// failedRequests lists the requests of this document that answered 400 or
// more, as "STATUS path", leaving out those whose path matches one of
// expected (substrings: the requests the page means to fail).
func failedRequests(t *testing.T, ctx context.Context, expected ...string) []string {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`performance.getEntriesByType('resource')
		.filter(e => e.responseStatus >= 400).map(e => e.responseStatus + ' ' + new URL(e.name).pathname + new URL(e.name).search)`))
	if err != nil {
		t.Fatalf("read the failed requests: %v", err)
	}
	var out []string
next:
	for _, g := range got {
		for _, x := range expected {
			if strings.Contains(g, x) {
				continue next
			}
		}
		out = append(out, g)
	}
	return out
}

// forgetRequests starts failedRequests afresh (after the sign-in, whose
// first "who am I" is meant to answer 401).
func forgetRequests(t *testing.T, ctx context.Context) {
	t.Helper()
	js(t, ctx, `performance.clearResourceTimings()`)
}

// consoleProblems returns what trackProblems recorded.
func consoleProblems(t *testing.T, ctx context.Context) []string {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.__problems || []`))
	if err != nil {
		t.Fatalf("read the console problems: %v", err)
	}
	return got
}

// placeholderJS finds text no person should read: the words a missing
// value turns into ("null", "undefined", "NaN", "[object Object]",
// "Invalid Date") as whole words of the page's visible text.
const placeholderJS = `(() => {
  const text = document.body.innerText;
  const out = [];
  for (const w of ['null', 'undefined', 'NaN', '[object Object]', 'Invalid Date']) {
    const re = new RegExp('(^|[^A-Za-z0-9_])' + w.replace(/[[\]]/g, '\\$&') + '($|[^A-Za-z0-9_])');
    const m = text.match(re);
    if (m) out.push(JSON.stringify(w) + ' in ' + JSON.stringify(text.slice(Math.max(0, m.index - 60), m.index + 60)));
  }
  return out;
})()`

// placeholders returns the placeholder words visible on the page.
func placeholders(t *testing.T, ctx context.Context) []string {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](placeholderJS))
	if err != nil {
		t.Fatalf("read the page text: %v", err)
	}
	return got
}

// checkClean fails when the page shows a placeholder, had a failed request
// (other than expected) or logged an error.
func checkClean(t *testing.T, ctx context.Context, name string, expected ...string) {
	t.Helper()
	waitSettled(t, ctx)
	if p := placeholders(t, ctx); len(p) > 0 {
		t.Errorf("%s shows placeholder text: %v", name, p)
	}
	if f := failedRequests(t, ctx, expected...); len(f) > 0 {
		t.Errorf("%s made failed requests: %v", name, f)
	}
	if p := consoleProblems(t, ctx); len(p) > 0 {
		t.Errorf("%s logged errors: %v", name, p)
	}
}
