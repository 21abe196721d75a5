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
    if (u) $('who').textContent = u.name ? u.name + ' <' + u.email + '>' : u.email;
  }
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
