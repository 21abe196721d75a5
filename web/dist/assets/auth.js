// The signed-out screens (sign in, register, second factor, password reset,
// address verification) and the /cli-grant page. The markup is static in
// index.html; this module only wires it.

import { api } from './api.js';
import { $, h } from './dom.js';
import { showErrors, clearErrors, wireForm } from './forms.js';
import { getAssertion } from './webauthn.js';

const forms = ['login', 'register', 'mfa', 'forgot', 'reset'];
let mfaToken = '';

// showAuth displays one of the signed-out forms.
export function showAuth(which, config) {
  $('auth').hidden = false;
  for (const f of forms) $(f).hidden = f !== which;
  const open = !!(config && config.signup_enabled);
  $('signup-offer').hidden = !open;
  $('forgot-offer').hidden = !(config && config.password_reset_enabled);
  const first = $(which).querySelector('input');
  if (first) first.focus();
}

export function hideAuth() { $('auth').hidden = true; }

// submit sends a form once at a time; the server's 422 messages land beside
// their fields (forms.js), anything else in errorEl.
async function submit(form, errorEl, fn) {
  const btn = form.querySelector('button[type=submit]');
  if (btn.disabled) return; // the first submission is still in flight
  btn.disabled = true;
  errorEl.textContent = '';
  clearErrors(form);
  try { await fn(new FormData(form)); } catch (e) { errorEl.textContent = showErrors(form, e); } finally { btn.disabled = false; }
}

// wireAuth connects the forms; signedIn runs after any successful sign-in.
export function wireAuth(signedIn) {
  $('login').addEventListener('submit', (e) => {
    e.preventDefault();
    submit(e.target, $('error'), async (f) => {
      const body = await api('/api/auth/login', { method: 'POST', body: { email: f.get('email'), password: f.get('password') } });
      if (body && body.mfa_required) {
        mfaToken = body.mfa_token;
        const methods = body.mfa_methods || [];
        for (const o of $('mfa').method.options) o.disabled = methods.length > 0 && !methods.includes(o.value);
        const usable = [...$('mfa').method.options].find((o) => !o.disabled);
        if (usable) $('mfa').method.value = usable.value;
        $('mfa-key-offer').hidden = !methods.includes('webauthn') || !window.PublicKeyCredential;
        showAuth('mfa');
        return;
      }
      e.target.reset();
      signedIn();
    });
  });
  $('mfa').addEventListener('submit', (e) => {
    e.preventDefault();
    submit(e.target, $('mfa-error'), async (f) => {
      await api('/api/auth/mfa/challenge', { method: 'POST', body: { mfa_token: mfaToken, method: f.get('method'), code: f.get('code').trim() } });
      mfaToken = '';
      e.target.reset();
      signedIn();
    });
  });
  $('mfa-webauthn').addEventListener('click', (e) => {
    submit($('mfa'), $('mfa-error'), async () => {
      const opts = await api('/api/auth/mfa/webauthn/auth/options', { method: 'POST', body: { mfa_token: mfaToken } });
      const credential = await getAssertion(opts);
      await api('/api/auth/mfa/challenge', { method: 'POST', body: { mfa_token: mfaToken, method: 'webauthn', credential } });
      mfaToken = '';
      $('mfa').reset();
      signedIn();
    });
  });
  $('register').addEventListener('submit', (e) => {
    e.preventDefault();
    submit(e.target, $('register-error'), async (f) => {
      const body = { email: f.get('email'), password: f.get('password') };
      if (f.get('name')) body.name = f.get('name');
      await api('/api/auth/register', { method: 'POST', body });
      e.target.reset();
      history.replaceState(null, '', '/');
      signedIn();
    });
  });
  $('forgot').addEventListener('submit', (e) => {
    e.preventDefault();
    submit(e.target, $('forgot-result'), async (f) => {
      const r = await api('/api/auth/forgot-password', { method: 'POST', body: { email: f.get('email') } });
      $('forgot-result').textContent = (r && r.detail) || 'If the address has an account, a link is on its way.';
    });
  });
  $('reset').addEventListener('submit', (e) => {
    e.preventDefault();
    submit(e.target, $('reset-result'), async (f) => {
      const token = new URLSearchParams(location.search).get('token') || '';
      await api('/api/auth/reset-password', { method: 'POST', body: { token, new_password: f.get('new_password') } });
      $('reset-result').textContent = 'Password changed. You can sign in now.';
    });
  });
  wireGrant();
}

export const VERIFIED = 'Your address is verified.';

// verifyEmail spends the mailed token of /verify-email?token=...
export async function verifyEmail() {
  const token = new URLSearchParams(location.search).get('token') || '';
  try {
    await api('/api/auth/verify-email', { method: 'POST', body: { token } });
    return VERIFIED;
  } catch (e) {
    return e.message;
  }
}

// resendVerifyForm asks for a new verification mail where an expired or
// spent link lands; the server answers the same whether or not the
// address has an account.
export function resendVerifyForm(email) {
  const result = h('div', { role: 'status', id: 'verify-resend-result' });
  const form = h('form', { id: 'verify-resend-form', 'aria-label': 'Mail a new verification link' },
    h('label', {}, 'Email ', h('input', { name: 'email', type: 'email', autocomplete: 'username', required: true, value: email || null })),
    h('button', { type: 'submit' }, 'Mail me a new link'), result);
  wireForm(form, result, async () => {
    const r = await api('/api/auth/resend-verify', { method: 'POST', body: { email: form.email.value } });
    result.textContent = (r && r.detail) || 'If the address needs it, a new link is on its way.';
  });
  return form;
}

// showGrant opens /cli-grant, looking the code up when the URL carries it.
export function showGrant() {
  $('grant').hidden = false;
  const code = new URLSearchParams(location.search).get('user_code');
  if (code) { $('grant-lookup').user_code.value = code; lookup(code); }
}

export function hideGrant() { $('grant').hidden = true; }

async function lookup(code) {
  try {
    const body = await api('/api/auth/cli-grant/info?user_code=' + encodeURIComponent(code));
    $('grant-client').textContent = body.client_name || 'A command-line client';
    $('grant-ip').textContent = body.ip;
    $('grant-ua').textContent = body.user_agent;
    $('grant-info').hidden = body.status !== 'pending';
    $('grant-result').textContent = body.status === 'pending' ? '' : 'This request is already ' + body.status + '.';
  } catch (e) {
    $('grant-info').hidden = true;
    $('grant-result').textContent = e.status === 404 ? 'Unknown or expired code' : e.message;
  }
}

async function decide(action) {
  const code = $('grant-lookup').user_code.value;
  try {
    await api({ redeem: '/api/auth/cli-grant/redeem', deny: '/api/auth/cli-grant/deny' }[action], { method: 'POST', body: { user_code: code } });
    $('grant-result').textContent = action === 'redeem' ? 'Approved: you can return to your terminal.' : 'Denied.';
  } catch (e) {
    $('grant-result').textContent = e.message;
  }
  $('grant-info').hidden = true;
}

function wireGrant() {
  $('grant-lookup').addEventListener('submit', (e) => { e.preventDefault(); lookup(e.target.user_code.value); });
  $('grant-approve').addEventListener('click', () => decide('redeem'));
  $('grant-deny').addEventListener('click', () => decide('deny'));
}
