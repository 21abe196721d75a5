package server_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// trackFetches records, for click, when the page last changed: the
// fetches in flight (window.__fetching) and the time of the last fetch's
// end or DOM mutation (window.__changedAt). Event streams (Accept:
// text/event-stream) stay open for a whole run and are not counted. It runs
// before the console's own scripts in every document.
const trackFetches = `(() => {
  if (window.__fetching !== undefined) return;
  window.__fetching = 0;
  window.__changedAt = performance.now();
  const changed = () => { window.__changedAt = performance.now(); };
  new MutationObserver(changed).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  const orig = window.fetch.bind(window);
  window.fetch = (input, init) => {
    const h = (init && init.headers) || {};
    const accept = typeof h.get === 'function' ? (h.get('Accept') || '') : (h.Accept || h.accept || '');
    if (accept.includes('text/event-stream')) return orig(input, init);
    window.__fetching++;
    changed();
    let done = false;
    const end = () => { if (!done) { done = true; window.__fetching--; changed(); } };
    // A call counts until its body is read (or it failed): the page renders
    // the data after that.
    return orig(input, init).then((r) => {
      for (const m of ['text', 'json', 'blob', 'arrayBuffer']) {
        const f = r[m].bind(r);
        r[m] = () => f().finally(end);
      }
      if (r.status === 204 || !r.body) end();
      // A body never read (the 401 before a refresh) holds clicks 1 s at most.
      setTimeout(end, 1000);
      return r;
    }, (e) => { end(); throw e; });
  };
})()`

// installFetchTracker adds trackFetches to every document the tab opens.
func installFetchTracker(ctx context.Context) error {
	return chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: trackFetches})
		return err
	}))
}

// settledJS holds when sel's element is where a click will land: it is
// visible, no fetch is in flight, neither a fetch nor the DOM changed in
// the last 100 ms, its place on the page is the one of the previous poll,
// and the element at its centre is it (or inside it), not something
// covering it. chromedp.Click reads the position once and then sends the
// mouse events there: content arriving in between (a list loading above
// a button) moved the button and the click landed on empty space.
func settledJS(sel string) string {
	return `(() => {
  const sel = ` + jsString(sel) + `;
  const el = document.querySelector(sel);
  if (!el) return false;
  let r = el.getBoundingClientRect();
  if (r.width === 0 || r.height === 0) return false;
  if (r.top < 0 || r.bottom > window.innerHeight || r.left < 0 || r.right > window.innerWidth) {
    el.scrollIntoView({block: 'center', inline: 'center'});
    r = el.getBoundingClientRect();
  }
  const key = sel + '@' + [r.left + scrollX, r.top + scrollY, r.width, r.height].join(',');
  const same = window.__settleKey === key;
  window.__settleKey = key;
  if (!same || (window.__fetching || 0) > 0 || performance.now() - (window.__changedAt || 0) < 100) return false;
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return !!hit && (hit === el || el.contains(hit));
})()`
}

// click is chromedp.Click on sel once the page has settled (settledJS).
// It waits generously (a loaded CI machine renders slowly) and then fails
// saying what blocked the click.
func click(sel string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if _, err := chromedp.Poll[bool](settledJS(sel), chromedp.WithPollingInterval(20*time.Millisecond))(pctx, tg); err != nil {
			state, _ := chromedp.Evaluate[string](`JSON.stringify({fetching: window.__fetching, key: window.__settleKey, quietMs: performance.now() - window.__changedAt,
				exists: !!document.querySelector(`+jsString(sel)+`)})`)(ctx, tg)
			return chromedp.Void{}, fmt.Errorf("%s never settled for a click (%s): %w", sel, state, err)
		}
		return chromedp.Click(chromedp.CSS(sel))(ctx, tg)
	}
}

// settledPageJS holds when no fetch is in flight and neither a fetch nor
// the DOM changed for 100 ms, checked on at least the third animation
// frame of this wait (a redraw that a resize or a theme change starts
// runs within the next frame).
func settledPageJS(id string) string {
	return `(() => {
  const w = window.__settleWait && window.__settleWait.id === ` + jsString(id) + ` ? window.__settleWait : (window.__settleWait = {id: ` + jsString(id) + `, n: 0});
  w.n++;
  return w.n >= 3 && (window.__fetching || 0) === 0 && performance.now() - (window.__changedAt || 0) >= 100;
})()`
}

// waitSettled waits until the page has settled (settledPageJS): the data
// it loads has arrived and it has drawn it, so a check of what it shows
// (axe, widths, a screenshot) sees the finished page.
func waitSettled(t *testing.T, ctx context.Context) {
	t.Helper()
	id := fmt.Sprint(time.Now().UnixNano())
	pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if ok, err := chromedp.Run(pctx, chromedp.Poll[bool](settledPageJS(id))); err != nil || !ok {
		state, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify({fetching: window.__fetching, quietMs: performance.now() - window.__changedAt})`))
		t.Fatalf("the page never settled: %v %v (%s)", ok, err, state)
	}
}
