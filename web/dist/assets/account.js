// Account: profile and avatar, password, second factors (TOTP with a QR
// code, security keys, backup codes), sign-in sessions, preferences and
// command-line grants.

import { html, mount, useState, useLoad, Loaded, Form, Field, Button, Badge, Copyable, Link, when, api } from './ui.js';
import { createCredential } from './webauthn.js';

export function render(view, ctx) { mount(view, html`<${Account} ctx=${ctx} />`); }

function Account({ ctx }) {
  return html`<div class="page" id="account-page"><h1>Your account</h1>
    <${Profile} ctx=${ctx} /><${Password} /><${Factors} /><${Sessions} /><${Preferences} /><${DeleteAccount} />
    <section class="card"><h2>Command line</h2><p>To sign the CLI in, run <code>opsagent login</code> and approve its code at <${Link} href="/cli-grant">the grant page</${Link}>.</p></section></div>`;
}

function Profile({ ctx }) {
  const u = ctx.app.user;
  const [v, setV] = useState(0);
  async function upload(e) {
    const f = e.target.files[0];
    if (!f) return;
    const fd = new FormData();
    fd.append('file', f);
    const r = await fetch('/api/auth/me/avatar', { method: 'POST', body: fd, credentials: 'same-origin' });
    const body = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(body.detail || 'Upload failed');
    ctx.app.user = body;
    setV(v + 1);
  }
  async function remove() {
    ctx.app.user = await api('/api/auth/me/avatar', { method: 'DELETE' });
    setV(v + 1);
  }
  return html`<section class="card" aria-labelledby="profile-title"><h2 id="profile-title">Profile</h2>
    <div class="row"><${Avatar} user=${ctx.app.user} v=${v} />
      <label>Avatar (PNG, JPEG or GIF, up to 2 MiB)<input type="file" accept="image/png,image/jpeg,image/gif" onChange=${(e) => upload(e).catch((x) => alert(x.message))} /></label>
      ${ctx.app.user.avatar_url ? html`<${Button} class="secondary" id="avatar-remove" onClick=${remove}>Remove avatar</${Button}>` : null}</div>
    <${Form} id="profile-form" label="Profile" onSubmit=${async (d) => { ctx.app.user = await api('/api/auth/me', { method: 'PATCH', body: { name: d.name } }); document.getElementById('who').textContent = ctx.app.user.name + ' <' + ctx.app.user.email + '>'; }}>
      <${Field} label="Name" name="name" defaultValue=${u.name} maxlength="120" required autocomplete="name" />
      <p class="muted">Email: ${u.email} ${u.email_verified ? '(verified)' : '(not verified)'}</p><button type="submit">Save profile</button></${Form}>
    ${u.email_verified ? null : html`<${ResendVerify} email=${u.email} />`}</section>`;
}

// ResendVerify mails the address's verification link again (the first
// may have expired or gone to spam); the server answers the same either way.
function ResendVerify({ email }) {
  const [msg, setMsg] = useState('');
  return html`<div class="row" id="verify-resend"><${Button} class="secondary" onClick=${async () => {
    const out = await api('/api/auth/resend-verify', { method: 'POST', body: { email } });
    setMsg((out && out.detail) || 'If the address still needs it, a new link is on its way.'); }}>Mail the verification link again</${Button}>
    <span role="status" id="verify-resend-msg">${msg}</span></div>`;
}

// Avatar is the uploaded picture, or the person's initials when there is
// none (asking for a picture that does not exist drew a broken image).
export function Avatar({ user, v }) {
  if (user.avatar_url) return html`<img class="avatar" src=${user.avatar_url + (user.avatar_url.includes('?') ? '&' : '?') + 'v=' + (v || 0)} alt="" width="48" height="48" />`;
  return html`<span class="avatar avatar-initials" aria-hidden="true">${initials(user)}</span>`;
}

export function initials(user) {
  const words = String(user.name || user.email || '?').split(/[\s@._-]+/).filter(Boolean);
  return ((words[0] || '?')[0] + (words.length > 1 ? words[1][0] : '')).toUpperCase();
}

function Password() {
  const [msg, setMsg] = useState('');
  return html`<section class="card" aria-labelledby="pw-title"><h2 id="pw-title">Password</h2>
    <${Form} id="password-form" label="Change password" reset onSubmit=${async (d) => { await api('/api/auth/change-password', { method: 'POST', body: d }); setMsg('Password changed; your other sessions were signed out.'); }}>
      <input type="text" name="username" autocomplete="username" hidden />
      <${Field} label="Current password" name="current_password" type="password" required autocomplete="current-password" />
      <${Field} label="New password" name="new_password" type="password" required minlength="8" autocomplete="new-password" />
      <button type="submit">Change password</button></${Form}><p role="status">${msg}</p></section>`;
}

function Factors() {
  const r = useLoad((signal) => api('/api/auth/mfa/methods', { signal }));
  const [totp, setTotp] = useState(null);
  const [codes, setCodes] = useState(null);
  async function verifyTotp(d) {
    const out = await api('/api/auth/mfa/totp/verify', { method: 'POST', body: { setup_token: totp.setup_token, code: d.code, name: d.name || 'Authenticator app' } });
    setTotp(null); if (out.backup_codes?.length) setCodes(out.backup_codes); r.reload();
  }
  async function addKey(d) {
    const opts = await api('/api/auth/mfa/webauthn/register/options', { method: 'POST' });
    const credential = await createCredential(opts);
    const out = await api('/api/auth/mfa/webauthn/register/verify', { method: 'POST', body: { credential, name: d.name || 'Security key' } });
    if (out.backup_codes?.length) setCodes(out.backup_codes); r.reload();
  }
  async function regenerate(d) {
    setCodes((await api('/api/auth/mfa/backup-codes/regenerate', { method: 'POST', body: { method: d.method, code: d.code } })).codes);
  }
  return html`<section class="card" aria-labelledby="mfa-title" id="mfa-section"><h2 id="mfa-title">Second factors</h2>
    ${codes ? html`<div class="secret-once card" id="backup-codes"><h3>Backup codes (shown once)</h3><p>Each works once if you lose your other factors. Store them somewhere safe.</p>
      <ul class="codes">${codes.map((c) => html`<li><code>${c}</code></li>`)}</ul><${Copyable} label="All codes" id="backup-codes-text" value=${codes.join('\n')} multiline />
      <button type="button" class="secondary" onClick=${() => setCodes(null)}>I have saved them</button></div>` : null}
    <${Loaded} r=${r} isEmpty=${(d) => d.length === 0} empty="No second factor yet.">${(ms) => html`<ul id="mfa-methods">${ms.map((m) => html`<li data-kind=${m.kind}><${Badge} s=${m.kind} /> ${m.name}
      <span class="muted"> added ${when(m.created_at)}${m.remaining_codes != null ? ', ' + m.remaining_codes + ' codes left' : ''}</span>
      ${m.kind !== 'backup_code' ? html`<${Button} class="danger" confirm=${'Remove ' + m.name + '?'} onClick=${async () => { await api('/api/auth/mfa/' + m.id, { method: 'DELETE' }); r.reload(); }}>Remove<span class="visually-hidden"> ${m.name}</span></${Button}>` : null}</li>`)}</ul>`}</${Loaded}>
    <h3>Authenticator app</h3>
    ${totp ? html`<div id="totp-setup"><img class="qr" src=${totp.qr_code} alt="QR code to scan with an authenticator app" />
        <${Copyable} label="Or type this key" id="totp-secret" value=${totp.secret} />
        <${Form} id="totp-verify" label="Confirm the app" onSubmit=${verifyTotp}>
          <${Field} label="Code from the app" name="code" required inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" />
          <${Field} label="Name" name="name" defaultValue="Authenticator app" maxlength="120" /><button type="submit">Confirm</button></${Form}></div>`
      : html`<${Button} id="totp-start" onClick=${async () => setTotp(await api('/api/auth/mfa/totp/setup', { method: 'POST' }))}>Set up an authenticator app</${Button}>`}
    <h3>Security key</h3>
    ${window.PublicKeyCredential ? html`<${Form} id="webauthn-add" label="Add a security key" reset onSubmit=${addKey}>
        <div class="filters"><label class="inline">Name <input name="name" defaultValue="Security key" maxlength="120" /></label><button type="submit">Add a security key</button></div></${Form}>`
      : html`<p class="muted">This browser cannot use security keys here (it needs HTTPS or localhost).</p>`}
    <details><summary>New backup codes</summary><${Form} id="backup-regenerate" label="New backup codes" reset onSubmit=${regenerate}>
      <p class="muted">Prove a current factor; the old codes stop working.</p>
      <div class="filters"><label class="inline">Method <select name="method"><option value="totp">Authenticator code</option><option value="backup_code">Backup code</option></select></label>
        <label class="inline">Code <input name="code" required autocomplete="one-time-code" /></label><button type="submit">Replace codes</button></div></${Form}></details></section>`;
}

function Sessions() {
  const r = useLoad((signal) => api('/api/auth/sessions', { signal }));
  return html`<section class="card" aria-labelledby="ss-title"><h2 id="ss-title">Where you are signed in</h2>
    <${Loaded} r=${r}>${(ss) => html`<table id="login-sessions"><thead><tr><th scope="col">Device</th><th scope="col">Kind</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Revoke</span></th></tr></thead>
      <tbody>${ss.map((s) => html`<tr><td>${s.user_agent || 'unknown'}<br /><span class="muted">${s.ip}</span></td><td>${s.kind}</td><td>${when(s.last_used_at)}</td>
        <td>${s.current ? html`<${Badge} s="current" />` : html`<${Button} class="danger" onClick=${async () => { await api('/api/auth/sessions/' + s.id, { method: 'DELETE' }); r.reload(); }}>Revoke</${Button}>`}</td></tr>`)}</tbody></table>
      <${Button} class="danger" confirm="Sign out everywhere, including here?" onClick=${async () => { await api('/api/auth/logout-all', { method: 'POST' }); location.assign('/'); }}>Sign out everywhere</${Button}>`}</${Loaded}></section>`;
}

// DeleteAccount asks for the password again (POST /api/auth/reauthenticate)
// and then requests the account's erasure.
function DeleteAccount() {
  const [msg, setMsg] = useState('');
  async function erase(d) {
    if (!window.confirm('Erase your account? This cannot be undone.')) return;
    await api('/api/auth/reauthenticate', { method: 'POST', body: { password: d.password } });
    const out = await api('/api/auth/me/account', { method: 'DELETE' });
    setMsg(out.detail || 'Erasure requested.');
  }
  return html`<section class="card danger-zone" aria-labelledby="delete-title"><h2 id="delete-title">Delete the account</h2>
    <p class="muted">Your personal data is erased; organizations you own alone must be handed over or deleted first (the server says which).</p>
    <details><summary>Erase my account</summary><${Form} id="account-delete" label="Erase my account" reset onSubmit=${erase}>
      <input type="text" name="username" autocomplete="username" hidden />
      <${Field} label="Your password" name="password" type="password" required autocomplete="current-password" />
      <button type="submit" class="danger">Erase my account</button></${Form}></details><p role="status">${msg}</p></section>`;
}

function Preferences() {
  const r = useLoad((signal) => api('/api/me/preferences', { signal }));
  return html`<section class="card" aria-labelledby="pref-title"><h2 id="pref-title">Preferences</h2>
    <p class="muted">The theme follows your system's light or dark setting.</p>
    <${Loaded} r=${r} isEmpty=${(d) => (d.items || d).length === 0} empty="No saved preferences.">${(d) => html`<ul>${(d.items || d).map((p) => html`<li><code>${p.key}</code> = <code>${JSON.stringify(p.value)}</code>
      <${Button} class="secondary" onClick=${async () => { await api('/api/me/preferences/' + encodeURIComponent(p.key), { method: 'DELETE' }); r.reload(); }}>Forget<span class="visually-hidden"> ${p.key}</span></${Button}></li>`)}</ul>`}</${Loaded}></section>`;
}
