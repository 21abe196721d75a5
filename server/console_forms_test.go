package server_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// Bad input in the browser: the server's 422 messages sit beside the fields
// they name (aria-invalid, aria-describedby, the first one focused), a form
// submitted twice makes one task, and "Run now" retried after a lost answer
// sends the same Idempotency-Key, so the server answers with the first run;
// a 409 shows the server's detail.
func TestConsoleFormsFieldErrorsAndDoubleSubmit(t *testing.T) {
	fake := llmfake.New(t, llmfake.Always(llmfake.Text("All checks passed.")))
	env := newEnv(t, withLLM(fake))
	c := env.register("op@example.com")
	withProject(t, env, c)
	ctx, cancel := browser(t)
	defer cancel()
	q := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 900)); err != nil {
		t.Fatal(err)
	}
	signIn(t, ctx, env.URL, "op@example.com")
	const form = `#task-create-scratch`
	err := chromedp.Do(ctx,
		click(`#nav a[href="/tasks"]`),
		chromedp.WaitVisible(q(`#task-create`)),
		click(`input[type=radio][name=mode]:not(:checked)`),
		chromedp.WaitVisible(q(form)),
		chromedp.SendKeys(q(form+` input[name=name]`), "nightly check"),
		chromedp.SendKeys(q(form+` textarea[name=prompt]`), "check the disks"),
		chromedp.SendKeys(q(form+` input[name=schedule]`), "every tuesday"),
		click(form+` button[type=submit]`),
	)
	if err != nil {
		t.Fatal(err)
	}
	field := form + ` input[name=schedule]`
	waitJS(t, ctx, "the schedule marked invalid", `document.querySelector(`+jsString(field)+`)?.getAttribute('aria-invalid') === 'true'`)
	type marked struct {
		Msg, Focused, FormLine string
		InLabel                bool
	}
	at, err := chromedp.Run(ctx, chromedp.Evaluate[marked](`(() => {
		const f = document.querySelector(`+jsString(field)+`);
		const note = document.getElementById(f.getAttribute('aria-describedby').split(' ').pop());
		return {msg: note ? note.textContent : '', inLabel: !!note && f.closest('label').contains(note),
			focused: document.activeElement === f ? 'schedule' : (document.activeElement?.name || ''),
			formLine: document.querySelector(`+jsString(form+` [role=alert]`)+`)?.textContent || ''};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if at.Msg == "" || !at.InLabel {
		t.Fatalf("the schedule's message is not beside it: %+v", at)
	}
	if at.Focused != "schedule" {
		t.Errorf("focus is on %q, want the invalid schedule field", at.Focused)
	}
	if at.FormLine == "" {
		t.Errorf("the form line says nothing about the marked field")
	}
	visit(t, ctx, "tasks-field-error", 1400, 900)
	if n := len(c.must(200, "GET", "/api/tasks", nil).JSON()["items"].([]any)); n != 0 {
		t.Fatalf("a refused form made %d task(s)", n)
	}

	// Editing the field clears its mark; then the form is submitted twice
	// in a row (a double click lands both before the page redraws).
	js(t, ctx, `(() => { const f = document.querySelector(`+jsString(field)+`); f.value = ''; f.dispatchEvent(new Event('input', {bubbles: true})); })()`)
	waitJS(t, ctx, "the mark cleared", `!document.querySelector(`+jsString(field)+`).hasAttribute('aria-invalid') && !document.querySelector('.field-error')`)
	js(t, ctx, `(() => { const f = document.querySelector(`+jsString(form)+`); f.requestSubmit(); f.requestSubmit(); })()`)
	waitJS(t, ctx, "the task is listed", textHas(`#tasks-table`, "nightly check"))
	waitSettled(t, ctx)
	items := c.must(200, "GET", "/api/tasks", nil).JSON()["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("a double submit made %d tasks, want 1", len(items))
	}
	id := items[0].(map[string]any)["id"].(string)

	// The first "Run now" answer is lost on the way back (the run started);
	// clicking again must send the same key and get that run back.
	js(t, ctx, `(() => {
		window.__runs = [];
		const real = window.__realFetch = window.fetch;
		window.fetch = async (input, init) => {
			const url = String(input.url || input);
			if (!url.endsWith('/trigger')) return real(input, init);
			const r = await real(input, init);
			const body = await r.clone().json().catch(() => ({}));
			window.__runs.push({key: (init.headers || {})['Idempotency-Key'] || '', session: body.session_id || '', replayed: !!body.replayed});
			if (window.__runs.length === 1) throw new TypeError('Failed to fetch');
			return r;
		};
	})()`)
	row := `#tasks-table tr[data-task-id="` + id + `"] button.run`
	if err := chromedp.Do(ctx, click(row)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the lost answer shown", `window.__runs.length === 1 && !!document.querySelector('#tasks-table [role=alert]')`)
	if err := chromedp.Do(ctx, click(row)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the retried run", `window.__runs.length === 2`)
	type run struct {
		Key, Session string
		Replayed     bool
	}
	runs, err := chromedp.Run(ctx, chromedp.Evaluate[[]run](`window.__runs`))
	if err != nil {
		t.Fatal(err)
	}
	if runs[0].Key == "" || runs[0].Key != runs[1].Key {
		t.Fatalf("the retry sent key %q after %q, want the same key", runs[1].Key, runs[0].Key)
	}
	if runs[1].Session != runs[0].Session || !runs[1].Replayed {
		t.Fatalf("the retry started another run: %+v", runs)
	}

	// A refused action says why in the server's words: Run now on a task
	// disabled meanwhile is a 409 whose detail appears beside the button.
	c.must(200, "PATCH", "/api/tasks/"+id, map[string]any{"enabled": false})
	detail := c.must(409, "POST", "/api/tasks/"+id+"/trigger", nil).JSON()["detail"].(string)
	js(t, ctx, `window.fetch = window.__realFetch || window.fetch`)
	if err := chromedp.Do(ctx, click(row)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the 409's detail", textHas(`#tasks-table [role=alert]`, detail))
}
