package server_test

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"
)

// isMember reports whether email is a member of orgID, as its owner reads it.
func isMember(owner *client, orgID, email string) bool {
	for _, m := range owner.must(200, "GET", "/api/organizations/"+orgID+"/members", nil).List() {
		if m["email"] == email {
			return true
		}
	}
	return false
}

// The invitation link's page. Signed out, a new address chooses a password
// (a short one is refused beside the field) and lands in the console as a
// member, on the projects page (not the wizard that sets up a new org). An address that has an account is told so in the server's words,
// signs in from the same page and accepts; a link sent to someone else is
// refused with the server's reason.
func TestConsoleInvitationLink(t *testing.T) {
	env := newEnv(t, openSignup)
	owner := env.register("owner@example.com")
	org := orgOf(t, owner)
	env.register("old@example.com")
	invite := func(email string) string {
		owner.must(201, "POST", "/api/organizations/"+org+"/invitations", map[string]any{"email": email, "role": "member"})
		return env.outboxToken(t, email, "invited")
	}

	ctx, cancel := browser(t)
	defer cancel()
	err := chromedp.Do(ctx, chromedp.Navigate(env.URL+"/accept-invite?token="+invite("new@example.com")),
		chromedp.WaitVisible(chromedp.CSS(`#invite-signup`)))
	if err != nil {
		t.Fatal(err)
	}
	setField(t, ctx, `#invite-signup input[name=name]`, "New Person")
	setField(t, ctx, `#invite-signup input[name=password]`, "short")
	if err := chromedp.Do(ctx, click(`#invite-signup button[type=submit]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the short password refused beside it", fieldErrorJS(`#invite-signup input[name=password]`, "8"))
	checkA11y(t, ctx, "accept-invite signed out, a field refused")
	setField(t, ctx, `#invite-signup input[name=password]`, "correct horse battery")
	if err := chromedp.Do(ctx, click(`#invite-signup button[type=submit]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "signed in as the new member", `location.pathname === '/projects' && !document.getElementById('nav').hidden && `+textHas(`#who`, "new@example.com"))
	if !isMember(owner, org, "new@example.com") {
		t.Fatal("the account made on the invitation page is not a member")
	}

	// An existing account: told to sign in, signs in on the page, accepts.
	if err := chromedp.Do(ctx, click(`#logout`)); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx, chromedp.Navigate(env.URL+"/accept-invite?token="+invite("old@example.com")),
		chromedp.WaitVisible(chromedp.CSS(`#invite-signup`)))
	if err != nil {
		t.Fatal(err)
	}
	setField(t, ctx, `#invite-signup input[name=password]`, "correct horse battery")
	if err := chromedp.Do(ctx, click(`#invite-signup button[type=submit]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the server's account_exists detail", textHas(`#invite-signup [role=alert]`, "sign in and accept the invitation again"))
	if err := chromedp.Do(ctx, click(`#invite-sign-in`)); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#login`)),
		chromedp.SendKeys(chromedp.CSS(`#login input[name=email]`), "old@example.com"),
		chromedp.SendKeys(chromedp.CSS(`#login input[name=password]`), "correct horse battery"),
		click(`#login button`))
	if err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the join page, signed in", textHas(`#invite-page`, "old@example.com"))
	checkA11y(t, ctx, "accept-invite signed in")
	if err := chromedp.Do(ctx, click(`#invite-accept`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "joined and switched", `location.pathname === '/dashboard'`)
	if !isMember(owner, org, "old@example.com") {
		t.Fatal("accepting on the page did not add the signed-in account")
	}
	if u, _ := env.DB.FindUserByEmail(context.Background(), "old@example.com"); u.CurrentOrgID != org {
		t.Fatalf("current org after accepting: got %s, want %s", u.CurrentOrgID, org)
	}
	waitJS(t, ctx, "the header in the new org", `document.getElementById('org-select').value === `+jsString(org))

	// A link sent to another address: the server's reason, nobody joins.
	err = chromedp.Do(ctx, chromedp.Navigate(env.URL+"/accept-invite?token="+invite("third@example.com")))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, click(`#invite-accept`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the mismatch refused", textHas(`#invite-page [role=alert]`, "sent to another address"))
	checkClean(t, ctx, "accept-invite", "403 /api/auth/accept-invite")
}

// Verification mail again: from the account page of an unverified address,
// and from the page an expired or spent verification link lands on. Each
// sends one more mail to the address.
func TestConsoleResendVerification(t *testing.T) {
	env := newEnv(t)
	env.register("op@example.com")
	const subject = "Verify your opsagent address"
	n0 := len(env.mailTokens("op@example.com", subject))
	ctx, cancel := browser(t)
	defer cancel()
	signIn(t, ctx, env.URL, "op@example.com")
	clickNav(t, ctx, "/account")
	if err := chromedp.Do(ctx, click(`#verify-resend button`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the server's answer", textHas(`#verify-resend-msg`, "a message is on its way"))
	if n := len(env.mailTokens("op@example.com", subject)); n != n0+1 {
		t.Fatalf("verification mails after the account page's resend: got %d, want %d", n, n0+1)
	}

	err := chromedp.Do(ctx, chromedp.Navigate(env.URL+"/verify-email?token=spent"), chromedp.WaitVisible(chromedp.CSS(`#verify-resend-form`)))
	if err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the address filled in", `document.querySelector('#verify-resend-form input[name=email]').value === 'op@example.com'`)
	checkA11y(t, ctx, "verify-email failed")
	if err := chromedp.Do(ctx, click(`#verify-resend-form button[type=submit]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the server's answer", textHas(`#verify-resend-result`, "a message is on its way"))
	if n := len(env.mailTokens("op@example.com", subject)); n != n0+2 {
		t.Fatalf("verification mails after the link page's resend: got %d, want %d", n, n0+2)
	}
	tok := env.lastMailToken("op@example.com", subject)
	if err := chromedp.Do(ctx, chromedp.Navigate(env.URL+"/verify-email?token="+tok)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "verified", textHas(`#view`, "Your address is verified.")+` && !document.getElementById('verify-resend-form')`)
}
