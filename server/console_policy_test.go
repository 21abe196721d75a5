package server_test

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// The postmortem template on the Postmortems page: a heading with # is
// refused beside that heading's field; an added section, moved up one
// place, is what the API then reads.
func TestConsolePostmortemTemplate(t *testing.T) {
	env := newEnv(t)
	c := env.register("op@example.com")
	withProject(t, env, c)
	before := anyStrings(c.must(200, "GET", "/api/postmortem-template", nil).JSON()["sections"])
	n := len(before)
	if n < 2 {
		t.Fatalf("default template: %v", before)
	}
	ctx, cancel := browser(t)
	defer cancel()
	signIn(t, ctx, env.URL, "op@example.com")
	clickNav(t, ctx, "/postmortems")
	forgetRequests(t, ctx)
	if err := chromedp.Do(ctx, click(`#pm-template > summary`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the template's sections", `document.querySelectorAll('#pm-sections input').length === `+itoa(n))

	setField(t, ctx, `#pm-sections input[name="sections.0"]`, "Impact #1")
	if err := chromedp.Do(ctx, click(`#pm-template-form button[type=submit]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the # refused beside its heading", fieldErrorJS(`#pm-sections input[name="sections.0"]`, "without #"))
	setField(t, ctx, `#pm-sections input[name="sections.0"]`, before[0])

	if err := chromedp.Do(ctx, click(`#pm-section-add`)); err != nil {
		t.Fatal(err)
	}
	last := `#pm-sections input[name="sections.` + itoa(n) + `"]`
	waitJS(t, ctx, "a new section", `!!document.querySelector(`+jsString(last)+`)`)
	setField(t, ctx, last, "Customer impact")
	if err := chromedp.Do(ctx, click(`#pm-sections li:last-child button:first-of-type`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "moved up", `document.querySelector('#pm-sections input[name="sections.`+itoa(n-1)+`"]').value === 'Customer impact'`)
	if err := chromedp.Do(ctx, click(`#pm-template-form button[type=submit]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "saved", textHas(`#pm-template-msg`, "Saved"))
	got := anyStrings(c.must(200, "GET", "/api/postmortem-template", nil).JSON()["sections"])
	want := append(append(append([]string{}, before[:n-1]...), "Customer impact"), before[n-1])
	if len(got) != len(want) {
		t.Fatalf("template after the console's save: got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("template after the console's save: got %v, want %v", got, want)
		}
	}
	visit(t, ctx, "postmortems-template", 1400, 900)
	checkClean(t, ctx, "postmortem template", "422 /api/postmortem-template")
}

// The command policy under the project's rules: auto-allow, an added
// read-only pattern, a pattern added to a built-in category and a new
// category reach the API; a category name the catalog refuses is marked on
// the field for new categories.
func TestConsoleCommandPolicy(t *testing.T) {
	env := newEnv(t)
	c := env.register("op@example.com")
	withProject(t, env, c)
	ctx, cancel := browser(t)
	defer cancel()
	signIn(t, ctx, env.URL, "op@example.com")
	clickNav(t, ctx, "/settings")
	forgetRequests(t, ctx)
	if err := chromedp.Do(ctx, click(`#tab-rules`)); err != nil {
		t.Fatal(err)
	}
	const form = `#command-policy-form`
	waitJS(t, ctx, "the command policy", `!!document.querySelector('`+form+` textarea[name="effects.deletes_files"]')`)
	setField(t, ctx, form+` input[name=new_category]`, "Touches-Payments")
	setField(t, ctx, form+` textarea[name=new_patterns]`, "payctl *")
	if err := chromedp.Do(ctx, click(form+` button[type=submit]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the bad category refused beside its field", fieldErrorJS(form+` input[name=new_category]`, "lower case"))

	js(t, ctx, `document.querySelector('`+form+` input[name=auto_allow_read_only]').checked = true`)
	setField(t, ctx, form+` input[name=new_category]`, "touches_payments")
	setField(t, ctx, form+` textarea[name=read_only_commands]`, "mytool status *\n")
	setField(t, ctx, form+` textarea[name="effects.deletes_files"]`, "purge-cache *")
	if err := chromedp.Do(ctx, click(form+` button[type=submit]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "saved", textHas(`#command-policy-msg`, "Saved"))
	p := c.must(200, "GET", "/api/command-policy", nil).JSON()
	if p["auto_allow_read_only"] != true || len(anyStrings(p["read_only_commands"])) != 1 || anyStrings(p["read_only_commands"])[0] != "mytool status *" {
		t.Fatalf("policy after the console's save: %v", p)
	}
	added := map[string][]string{}
	for _, x := range p["categories"].([]any) {
		cat := x.(map[string]any)
		added[cat["name"].(string)] = anyStrings(cat["added"])
	}
	if a := added["deletes_files"]; len(a) != 1 || a[0] != "purge-cache *" {
		t.Fatalf("deletes_files additions: %v", added)
	}
	if a := added["touches_payments"]; len(a) != 1 || a[0] != "payctl *" {
		t.Fatalf("the new category: %v", added)
	}
	waitJS(t, ctx, "the new category listed", `!!document.querySelector('#cp-categories tr[data-category=touches_payments]')`)
	visit(t, ctx, "settings-rules-command-policy", 1400, 900)
	checkClean(t, ctx, "command policy", "422 /api/command-policy")
}

// A connector's name, labels and allow-list edited on the Connectors page
// (a label the server refuses is marked on the labels field), and the
// project's command limit (0 refused beside it, 600 saved).
func TestConsoleConnectorEditAndLimits(t *testing.T) {
	env := newEnv(t)
	c := env.register("op@example.com")
	withProject(t, env, c)
	id := c.must(201, "POST", "/api/connectors", map[string]any{"name": "web-1"}).JSON()["id"].(string)
	ctx, cancel := browser(t)
	defer cancel()
	signIn(t, ctx, env.URL, "op@example.com")
	clickNav(t, ctx, "/connectors")
	forgetRequests(t, ctx)
	row := `#connectors-table tr[data-connector-id="` + id + `"]`
	if err := chromedp.Do(ctx, click(row+` button.edit`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the edit form", `!!document.querySelector('#connector-edit input[name=labels]')`)
	setField(t, ctx, `#connector-edit input[name=name]`, "web-2")
	setField(t, ctx, `#connector-edit input[name=labels]`, "env=pr od")
	if err := chromedp.Do(ctx, click(`#connector-edit button[type=submit]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the bad label refused beside the labels", fieldErrorJS(`#connector-edit input[name=labels]`, "label"))
	checkA11y(t, ctx, "connector edit, a field refused")
	setField(t, ctx, `#connector-edit input[name=labels]`, "env=prod, role=web")
	setField(t, ctx, `#connector-edit textarea[name=allow_list]`, "systemctl status *")
	if err := chromedp.Do(ctx, click(`#connector-edit button[type=submit]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the edited connector", textHas(row, "web-2")+` && `+textHas(row, "env=prod")+` && !document.getElementById('connector-edit')`)
	x := c.must(200, "GET", "/api/connectors/"+id, nil).JSON()
	sl := x["server_labels"].(map[string]any)
	if x["name"] != "web-2" || sl["env"] != "prod" || sl["role"] != "web" || len(anyStrings(x["allow_list"])) != 1 {
		t.Fatalf("connector after the console's edit: %v", x)
	}

	const limits = `#connector-settings-form input[name=command_timeout_max_seconds]`
	waitJS(t, ctx, "the command limit", `!!document.querySelector('`+limits+`')`)
	setField(t, ctx, limits, "0")
	if err := chromedp.Do(ctx, click(`#connector-settings-form button[type=submit]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "0 refused beside the limit", fieldErrorJS(limits, "86400"))
	setField(t, ctx, limits, "600")
	if err := chromedp.Do(ctx, click(`#connector-settings-form button[type=submit]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the limit saved", textHas(`#connector-settings-msg`, "600 s"))
	if got := c.must(200, "GET", "/api/connector-settings", nil).JSON()["command_timeout_max_seconds"]; got != float64(600) {
		t.Fatalf("limit after the console's save: %v", got)
	}
	checkClean(t, ctx, "connectors", "422 /api/connectors/"+id, "422 /api/connector-settings")
}
