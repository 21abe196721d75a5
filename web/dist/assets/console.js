// Minimal console: sign in, show who is signed in, sign out. It talks to the
// same API as every other client, with the HttpOnly cookies the server sets.
(function () {
  const $ = (id) => document.getElementById(id);
  async function me() {
    const r = await fetch('/api/auth/me', { credentials: 'same-origin' });
    if (r.status === 401) {
      const rr = await fetch('/api/auth/refresh', { method: 'POST', credentials: 'same-origin' });
      if (rr.ok) return me();
      return null;
    }
    return r.ok ? r.json() : null;
  }
  async function show() {
    const u = await me();
    $('status').hidden = true;
    $('login').hidden = !!u;
    $('me').hidden = !u;
    $('grant').hidden = !u || location.pathname !== '/cli-grant';
    if (u) $('who').textContent = u.name ? u.name + ' <' + u.email + '>' : u.email;
    if (u && location.pathname === '/cli-grant') {
      const code = new URLSearchParams(location.search).get('user_code');
      if (code) { $('grant-lookup').user_code.value = code; lookup(code); }
    }
  }
  function detail(body, fallback) { return typeof body.detail === 'string' ? body.detail : fallback; }
  async function lookup(code) {
    const r = await fetch('/api/auth/cli-grant/info?user_code=' + encodeURIComponent(code), { credentials: 'same-origin' });
    const body = await r.json().catch(() => ({}));
    if (!r.ok) { $('grant-info').hidden = true; $('grant-result').textContent = detail(body, 'Unknown or expired code'); return; }
    $('grant-client').textContent = body.client_name || 'A command-line client';
    $('grant-ip').textContent = body.ip;
    $('grant-ua').textContent = body.user_agent;
    $('grant-info').hidden = body.status !== 'pending';
    $('grant-result').textContent = body.status === 'pending' ? '' : 'This request is already ' + body.status + '.';
  }
  async function decide(action) {
    const code = $('grant-lookup').user_code.value;
    const r = await fetch('/api/auth/cli-grant/' + action, {
      method: 'POST', credentials: 'same-origin', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ user_code: code }),
    });
    const body = r.status === 204 ? {} : await r.json().catch(() => ({}));
    $('grant-info').hidden = true;
    $('grant-result').textContent = r.ok ? (action === 'redeem' ? 'Approved: you can return to your terminal.' : 'Denied.') : detail(body, 'Failed');
  }
  $('grant-lookup').addEventListener('submit', (e) => { e.preventDefault(); lookup(e.target.user_code.value); });
  $('grant-approve').addEventListener('click', () => decide('redeem'));
  $('grant-deny').addEventListener('click', () => decide('deny'));
  $('login').addEventListener('submit', async (e) => {
    e.preventDefault();
    const f = new FormData(e.target);
    const r = await fetch('/api/auth/login', {
      method: 'POST', credentials: 'same-origin', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: f.get('email'), password: f.get('password') }),
    });
    const body = await r.json().catch(() => ({}));
    if (!r.ok) { $('error').textContent = typeof body.detail === 'string' ? body.detail : 'Sign-in failed'; return; }
    if (body.mfa_required) { $('error').textContent = 'A second factor is required; use the CLI or API for now.'; return; }
    $('error').textContent = '';
    show();
  });
  $('logout').addEventListener('click', async () => {
    await fetch('/api/auth/logout', { method: 'POST', credentials: 'same-origin' });
    show();
  });
  show();
})();
