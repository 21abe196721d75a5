// The invitation link's page, /accept-invite?token=... (the mail links
// here). Signed out: create the invited account (its address is the
// invitation's) and join; if that address has an account, sign in and the
// same page comes back signed in. Signed in: join as yourself (the
// invitation must have been sent to your address); the session moves to
// the new organization.

import { html, mount, Form, Field, Button, ErrorLine, api } from './ui.js';
import { setProject } from './api.js';

// render draws the page; ctx: {app, signedIn, showLogin, loadContext, go}.
export function render(view, ctx) { mount(view, html`<${Invite} ctx=${ctx} />`); }

function Invite({ ctx }) {
  const token = new URLSearchParams(location.search).get('token') || '';
  if (!token) {
    return html`<section class="card narrow" id="invite-page"><h1>Join an organization</h1>
      <${ErrorLine} error="This link carries no invitation. Open the link in the invitation mail again, or ask for a new invitation." /></section>`;
  }
  return ctx.app.user ? html`<${Join} ctx=${ctx} token=${token} />` : html`<${SignUp} ctx=${ctx} token=${token} />`;
}

function Join({ ctx, token }) {
  const u = ctx.app.user;
  async function accept() {
    await api('/api/auth/accept-invite', { method: 'POST', body: { token } });
    setProject('');
    await ctx.loadContext();
    ctx.go('/dashboard');
  }
  return html`<section class="card narrow" id="invite-page"><h1>Join an organization</h1>
    <p>You were invited to an organization on opsagent. Accepting adds <strong>${u.email}</strong> to it with the role the invitation names, and switches you there.</p>
    <p class="muted">The invitation works only for the address it was sent to. Another address? Sign out and open the link again.</p>
    <div class="actions"><${Button} id="invite-accept" onClick=${accept}>Accept the invitation</${Button}>
      <a href="/dashboard" data-link>Not now</a></div></section>`;
}

function SignUp({ ctx, token }) {
  async function create(d) {
    const body = { token, password: d.password };
    if (d.name) body.name = d.name;
    await api('/api/auth/accept-invite', { method: 'POST', body });
    // The projects page, not the set-up wizard: the organization exists
    // already, and it says which of its projects the new member sees.
    history.replaceState(null, '', '/projects');
    ctx.signedIn();
  }
  return html`<section class="card narrow" id="invite-page"><h1>Join an organization</h1>
    <p>You were invited to an organization on opsagent. Choose a password to create your account with the address the invitation was sent to.</p>
    <${Form} id="invite-signup" label="Create your account and join" onSubmit=${create}>
      <${Field} label="Name (optional)" name="name" maxlength="120" autocomplete="name" />
      <input type="text" name="username" autocomplete="username" hidden />
      <${Field} label="Password" name="password" type="password" required autocomplete="new-password" hint="At least 8 characters." />
      <button type="submit">Create my account and join</button></${Form}>
    <p>Already have an account with that address? <button type="button" class="link" id="invite-sign-in" onClick=${ctx.showLogin}>Sign in</button>, and this page comes back to accept it.</p></section>`;
}
