package server_test

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// signIn signs in through the console's form.
func signIn(t *testing.T, ctx context.Context, url, email string) {
	t.Helper()
	err := chromedp.Do(ctx,
		chromedp.Navigate(url+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#login`)),
		chromedp.SendKeys(chromedp.CSS(`#login input[name=email]`), email),
		chromedp.SendKeys(chromedp.CSS(`#login input[name=password]`), "correct horse battery"),
		click(`#login button`),
	)
	if err != nil {
		t.Fatalf("sign in: %v", err)
	}
}

// Open sign-up: a visitor creates an account from the console and lands
// signed in. A second account with a second factor is asked for it, and a
// backup code lets it in; a wrong code is refused with the server's detail.
func TestConsoleRegisterAndSecondFactor(t *testing.T) {
	env := newEnv(t, allowLocal) // allowLocal also opens sign-up
	ctx, cancel := browser(t)
	defer cancel()
	q := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }

	err := chromedp.Do(ctx,
		chromedp.Navigate(env.URL+"/"),
		chromedp.WaitVisible(q(`#signup-offer`)),
		click(`#signup-offer a`),
		chromedp.WaitVisible(q(`#register`)),
		chromedp.SendKeys(q(`#register input[name=name]`), "New Person"),
		chromedp.SendKeys(q(`#register input[name=email]`), "new@example.com"),
		chromedp.SendKeys(q(`#register input[name=password]`), "correct horse battery"),
		click(`#register button[type=submit]`),
		chromedp.WaitVisible(q(`#me`)),
	)
	if err != nil {
		t.Fatalf("register: %v", err)
	}
	waitJS(t, ctx, "signed in as the new account", textHas(`#who`, "new@example.com"))
	if err := chromedp.Do(ctx, click(`#logout`), chromedp.WaitVisible(q(`#login`))); err != nil {
		t.Fatalf("sign out: %v", err)
	}

	c := env.register("mfa@example.com")
	_, backup := enrolTOTP(t, env, c)
	signIn(t, ctx, env.URL, "mfa@example.com")
	err = chromedp.Do(ctx,
		chromedp.WaitVisible(q(`#mfa`)),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#mfa select[name=method]').value = 'backup_code'`),
		chromedp.SendKeys(q(`#mfa input[name=code]`), "not-a-code"),
		click(`#mfa button[type=submit]`),
	)
	if err != nil {
		t.Fatalf("second factor form: %v", err)
	}
	waitJS(t, ctx, "a wrong code is refused", `document.querySelector('#mfa-error').textContent.length > 0`)
	err = chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#mfa input[name=code]').value = ''`),
		chromedp.SendKeys(q(`#mfa input[name=code]`), backup[0]),
		click(`#mfa button[type=submit]`),
		chromedp.WaitVisible(q(`#me`)),
	)
	if err != nil {
		t.Fatalf("backup code: %v", err)
	}
	waitJS(t, ctx, "signed in after the second factor", textHas(`#who`, "mfa@example.com"))
}

// Tasks: create one from a template, disable and enable it, run it now and
// follow the run to the agent's answer.
func TestConsoleTasks(t *testing.T) {
	fake := llmfake.New(t, llmfake.Always(llmfake.Text("All checks passed.")))
	env := newEnv(t, withLLM(fake))
	c := env.register("op@example.com")
	withProject(t, env, c)
	ctx, cancel := browser(t)
	defer cancel()
	q := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }

	signIn(t, ctx, env.URL, "op@example.com")
	err := chromedp.Do(ctx,
		chromedp.WaitVisible(q(`#nav`)),
		click(`#nav a[href="/tasks"]`),
		chromedp.WaitVisible(q(`#task-create`)),
		chromedp.Evaluate[chromedp.Void](`(() => { const s = document.querySelector('#template-select'); s.value = s.querySelector('optgroup option').value; s.dispatchEvent(new Event('change')); })()`),
		chromedp.SendKeys(q(`#task-create input[name=name]`), "nightly check"),
		click(`#task-create button[type=submit]`),
	)
	if err != nil {
		t.Fatalf("create a task: %v", err)
	}
	waitJS(t, ctx, "the task is listed", textHas(`#tasks-table`, "nightly check"))
	visit(t, ctx, "tasks-new", 1400, 900)
	tasks := c.must(200, "GET", "/api/tasks", nil).JSON()["items"].([]any)
	if len(tasks) != 1 {
		t.Fatalf("tasks: %v", tasks)
	}
	task := tasks[0].(map[string]any)
	id := task["id"].(string)
	row := `#tasks-table tr[data-task-id="` + id + `"]`
	for _, want := range []bool{!task["enabled"].(bool), task["enabled"].(bool)} {
		if err := chromedp.Do(ctx, click(row+` button[aria-pressed]`)); err != nil {
			t.Fatal(err)
		}
		waitJS(t, ctx, "the toggle flips", `document.querySelector(`+jsString(row+` button[aria-pressed]`)+`)?.getAttribute('aria-pressed') === `+jsString(map[bool]string{true: "true", false: "false"}[want]))
		if got := c.must(200, "GET", "/api/tasks/"+id, nil).JSON()["enabled"]; got != want {
			t.Fatalf("enabled is %v after the click, want %v", got, want)
		}
	}
	if !task["enabled"].(bool) {
		if err := chromedp.Do(ctx, click(row+` button[aria-pressed]`)); err != nil {
			t.Fatal(err)
		}
		waitJS(t, ctx, "enabled for the run", `document.querySelector(`+jsString(row+` button[aria-pressed]`)+`)?.getAttribute('aria-pressed') === 'true'`)
	}
	err = chromedp.Do(ctx, click(row+` button:not([aria-pressed])`))
	if err != nil {
		t.Fatalf("run now: %v", err)
	}
	waitJS(t, ctx, "the run is linked", `!!document.querySelector('#view [role=status] a[href^="/sessions/"]')`)
	if err := chromedp.Do(ctx, click(`#view [role=status] a[href^="/sessions/"]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the run's answer", textHas(`#session-log`, "All checks passed."))
	waitJS(t, ctx, "the run completed", textHas(`#session-status-value`, "completed"))

	// Details: the editor previews the next five fires of a new schedule,
	// saves it; a clone appears and is bulk-deleted.
	err = chromedp.Do(ctx,
		chromedp.Navigate(env.URL+"/tasks"),
		chromedp.WaitVisible(q(row+` button.open`)),
		click(row+` button.open`),
		chromedp.WaitVisible(q(`#task-edit`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	js(t, ctx, `(() => { const f = document.querySelector('#task-edit'); f.elements.schedule.value = '30 2 * * *'; f.elements.timezone.value = 'Europe/Paris'; })()`)
	if err := chromedp.Do(ctx, click(`#task-edit button.preview`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "five next fires", `document.querySelectorAll('#task-edit .next-runs li').length === 5 && document.querySelector('#task-edit .next-runs li').textContent.includes('T02:30:00')`)
	if err := chromedp.Do(ctx, click(`#task-edit button[type=submit]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "saved", textHas(`#tasks-notice`, "Saved"))
	if got := c.must(200, "GET", "/api/tasks/"+id, nil).JSON(); got["schedule"] != "30 2 * * *" || got["timezone"] != "Europe/Paris" {
		t.Fatalf("task after the edit: %v", got)
	}
	checkA11y(t, ctx, "tasks")
	if err := chromedp.Do(ctx, click(`#task-clone`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the clone", `document.querySelectorAll('#tasks-table tbody tr').length === 2`)
	js(t, ctx, `document.querySelectorAll('#tasks-table tbody tr').forEach(r => { if (r.dataset.taskId !== `+jsString(id)+`) r.querySelector('input[type=checkbox]').click(); })`)
	js(t, ctx, `window.confirm = () => true`)
	if err := chromedp.Do(ctx, click(`#tasks-bulk-delete`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the clone deleted", `document.querySelectorAll('#tasks-table tbody tr').length === 1`)

	// The incidents page answers for a project that has none.
	if err := chromedp.Do(ctx, click(`#nav a[href="/incidents"]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "an empty incidents list", textHas(`#incidents-list`, "No incidents."))
}
