package server_test

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"
)

// fieldErrorJS holds when the control sel is marked invalid and the
// message beside it (its aria-describedby) contains want.
func fieldErrorJS(sel, want string) string {
	return `(() => { const f = document.querySelector(` + jsString(sel) + `);
  if (!f || f.getAttribute('aria-invalid') !== 'true') return false;
  const note = document.getElementById((f.getAttribute('aria-describedby') || '').split(' ').pop());
  return !!note && note.classList.contains('field-error') && note.textContent.includes(` + jsString(want) + `); })()`
}

// setField replaces a control's value as typing would (input events fire,
// so a mark on it clears).
func setField(t *testing.T, ctx context.Context, sel, value string) {
	t.Helper()
	js(t, ctx, `(() => { const f = document.querySelector(`+jsString(sel)+`); f.value = `+jsString(value)+`;
		f.dispatchEvent(new Event('input', {bubbles: true})); f.dispatchEvent(new Event('change', {bubbles: true})); })()`)
}

// openDetails opens the <details> around sel.
func openDetails(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	js(t, ctx, `document.querySelector(`+jsString(sel)+`).closest('details').open = true`)
}

// The Organization page's "Organizations" tab: a person creates an
// organization (a blank name is refused beside the field), switches to it,
// is refused with the server's words when leaving the org they alone own,
// and leaves an org they were a member of.
func TestConsoleOrganizationsCreateSwitchLeave(t *testing.T) {
	env := newEnv(t, openSignup)
	c := env.register("op@example.com")
	lead := env.register("lead@example.com")
	shared := lead.must(201, "POST", "/api/organizations", map[string]any{"name": "Shared ops"}).JSON()["id"].(string)
	ctxb := context.Background()
	me, _ := env.DB.FindUserByEmail(ctxb, c.Email)
	personal := me.CurrentOrgID
	if err := env.DB.AddMember(ctxb, shared, me.ID, "member"); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := browser(t)
	defer cancel()
	signIn(t, ctx, env.URL, "op@example.com")
	clickNav(t, ctx, "/organization")
	forgetRequests(t, ctx) // the sign-in's first "who am I" answers 401
	if err := chromedp.Do(ctx, click(`#tab-orgs`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the organizations", textHas(`#orgs-table`, "Shared ops"))
	js(t, ctx, `window.confirm = () => true`)

	openDetails(t, ctx, `#org-create`)
	setField(t, ctx, `#org-create input[name=name]`, "   ")
	if err := chromedp.Do(ctx, click(`#org-create button[type=submit]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the blank name refused beside it", fieldErrorJS(`#org-create input[name=name]`, ""))
	setField(t, ctx, `#org-create input[name=name]`, "Platform team")
	if err := chromedp.Do(ctx, click(`#org-create button[type=submit]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the new organization listed", textHas(`#orgs-table`, "Platform team"))
	var created string
	for _, o := range c.must(200, "GET", "/api/organizations", nil).List() {
		if o["name"] == "Platform team" {
			created = o["id"].(string)
		}
	}
	if created == "" {
		t.Fatal("the console's create made no organization")
	}

	if err := chromedp.Do(ctx, click(`#orgs-table tr[data-org-id="`+created+`"] button.switch`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "switched", `document.getElementById('org-select').value === `+jsString(created)+
		` && !!document.querySelector('#orgs-table tr[data-org-id="`+created+`"] .badge-current')`)
	if u, _ := env.DB.FindUserByEmail(ctxb, c.Email); u.CurrentOrgID != created {
		t.Fatalf("current org after Switch: got %s, want %s", u.CurrentOrgID, created)
	}

	// The personal org has one owner: the server refuses, the page says why.
	if err := chromedp.Do(ctx, click(`#orgs-table tr[data-org-id="`+personal+`"] button.leave`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the last-owner refusal", textHas(`#orgs-table tr[data-org-id="`+personal+`"] [role=alert]`, "last owner"))

	if err := chromedp.Do(ctx, click(`#orgs-table tr[data-org-id="`+shared+`"] button.leave`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "left", textHas(`#orgs-msg`, "You left Shared ops")+` && !document.querySelector('#orgs-table tr[data-org-id="`+shared+`"]')`)
	for _, m := range lead.must(200, "GET", "/api/organizations/"+shared+"/members", nil).List() {
		if m["email"] == c.Email {
			t.Fatalf("still a member of the org left in the console: %v", m)
		}
	}
	checkClean(t, ctx, "organizations tab", "422 /api/organizations", "409 /api/organizations/"+personal+"/leave")
}

// Org rules, retention and branding on the Organization page: each form
// writes what the API then reads back, and the server's 422 lands beside
// the field it names.
func TestConsoleOrgRulesRetentionBranding(t *testing.T) {
	env := newEnv(t)
	c := env.register("op@example.com")
	org := orgOf(t, c)
	ctx, cancel := browser(t)
	defer cancel()
	signIn(t, ctx, env.URL, "op@example.com")
	clickNav(t, ctx, "/organization")
	forgetRequests(t, ctx) // the sign-in's first "who am I" answers 401
	js(t, ctx, `window.confirm = () => true`)

	// Rules: add, edit (a bad tool name refused beside it), delete.
	if err := chromedp.Do(ctx, click(`#tab-rules`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the empty org rules", `!!document.getElementById('org-rules-empty')`)
	openDetails(t, ctx, `#org-rule-create`)
	setField(t, ctx, `#org-rule-create select[name=match_type]`, "command")
	setField(t, ctx, `#org-rule-create input[name=pattern]`, "rm -rf *")
	setField(t, ctx, `#org-rule-create input[name=description]`, "never wipe a filesystem")
	if err := chromedp.Do(ctx, click(`#org-rule-create button[type=submit]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the org rule listed", textHas(`#org-rules-list`, "never wipe a filesystem"))
	rules := c.must(200, "GET", "/api/org-rules", nil).JSON()["items"].([]any)
	if len(rules) != 1 {
		t.Fatalf("org rules after the console's add: %v", rules)
	}
	rule := rules[0].(map[string]any)
	if rule["pattern"] != "rm -rf *" || rule["match_type"] != "command" || rule["kind"] != "must_never" || rule["scope"] != "org" {
		t.Fatalf("the console made %v", rule)
	}
	id := rule["id"].(string)

	if err := chromedp.Do(ctx, click(`#org-rules-list li[data-rule-id="`+id+`"] button.edit`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the edit form", `!!document.querySelector('#org-rule-edit input[name=description]')`)
	setField(t, ctx, `#org-rule-edit input[name=tool]`, "run command")
	if err := chromedp.Do(ctx, click(`#org-rule-edit button[type=submit]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the bad tool refused beside it", fieldErrorJS(`#org-rule-edit input[name=tool]`, ""))
	checkA11y(t, ctx, "org rule edit, a field refused")
	setField(t, ctx, `#org-rule-edit input[name=tool]`, "run_command")
	setField(t, ctx, `#org-rule-edit input[name=description]`, "never wipe anything")
	if err := chromedp.Do(ctx, click(`#org-rule-edit button[type=submit]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the edited rule", textHas(`#org-rules-list`, "never wipe anything"))
	if got := c.must(200, "GET", "/api/org-rules/"+id, nil).JSON()["description"]; got != "never wipe anything" {
		t.Fatalf("description after the console's edit: %v", got)
	}
	if err := chromedp.Do(ctx, click(`#org-rules-list li[data-rule-id="`+id+`"] button.delete`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the rule gone", `!!document.getElementById('org-rules-empty')`)
	c.must(404, "GET", "/api/org-rules/"+id, nil)

	// Retention: out of range refused beside the field, then 30 days saved.
	if err := chromedp.Do(ctx, click(`#tab-retention`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the retention form", `!!document.querySelector('#retention-form input[name=transcripts_days]')`)
	setField(t, ctx, `#retention-form input[name=transcripts_days]`, "-1")
	if err := chromedp.Do(ctx, click(`#retention-form button[type=submit]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the range refused beside it", fieldErrorJS(`#retention-form input[name=transcripts_days]`, "36500"))
	setField(t, ctx, `#retention-form input[name=transcripts_days]`, "30")
	if err := chromedp.Do(ctx, click(`#retention-form button[type=submit]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the saved retention", textHas(`#retention-facts`, "30 days (set here)"))
	ret := c.must(200, "GET", "/api/organizations/"+org+"/retention", nil).JSON()
	src := ret["source"].(map[string]any)
	if ret["transcripts_days"] != float64(30) || src["transcripts_days"] != "org" || src["sessions_days"] != "default" {
		t.Fatalf("retention after the console's save: %v", ret)
	}

	// Branding: a colour that is not #rrggbb refused beside it, then saved.
	if err := chromedp.Do(ctx, click(`#tab-branding`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the branding form", `!!document.querySelector('#branding-form input[name=primary_color]')`)
	setField(t, ctx, `#branding-form input[name=display_name]`, "Acme Operations")
	setField(t, ctx, `#branding-form input[name=primary_color]`, "blue")
	if err := chromedp.Do(ctx, click(`#branding-form button[type=submit]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the colour refused beside it", fieldErrorJS(`#branding-form input[name=primary_color]`, ""))
	setField(t, ctx, `#branding-form input[name=primary_color]`, "#1f6feb")
	if err := chromedp.Do(ctx, click(`#branding-form button[type=submit]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the saved branding", textHas(`#branding-preview`, "Acme Operations")+` && `+textHas(`#branding-preview`, "#1f6feb"))
	b := c.must(200, "GET", "/api/organizations/"+org, nil).JSON()["branding"].(map[string]any)
	if b["primary_color"] != "#1f6feb" || b["display_name"] != "Acme Operations" {
		t.Fatalf("branding after the console's save: %v", b)
	}
	visit(t, ctx, "organization-branding", 1400, 900)
	checkClean(t, ctx, "organization tabs", "422 /api/org-rules/"+id, "422 /api/organizations/"+org+"/retention", "422 /api/organizations/"+org+"/branding")
}
