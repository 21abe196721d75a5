// Console entry point: who is signed in, which org and project, and the
// client-side router (the server answers index.html for every non-API path).

import { api, setProject, currentProject, onSignedOut } from './api.js';
import { $, h, alertBox } from './dom.js';
import { wireAuth, showAuth, hideAuth, showGrant, hideGrant, verifyEmail, resendVerifyForm, VERIFIED } from './auth.js';
import * as chat from './chat.js';
import * as sessions from './sessions.js';
import * as tasks from './tasks.js';
import * as approvals from './approvals.js';
import * as incidents from './incidents.js';
import * as projects from './projects.js';
import * as dashboard from './dashboard.js';
import * as onboarding from './onboarding.js';
import * as webhooks from './webhooks.js';
import * as webhook from './webhook.js';
import * as incident from './incident.js';
import * as projectSettings from './settings_project.js';
import * as orgSettings from './settings_org.js';
import * as audit from './audit.js';
import * as account from './account.js';
import * as knowledge from './knowledge.js';
import * as channels from './channels.js';
import * as billing from './billing.js';
import * as heartbeats from './heartbeats.js';
import * as maintenance from './maintenance.js';
import * as postmortems from './postmortems.js';
import * as rulesWhatIf from './rules_whatif.js';
import * as changes from './changes.js';
import * as usage from './usage.js';
import * as evals from './evals.js';
import * as invite from './invite.js';
import { unmount } from './ui.js';
import { drawNav, markNav, refreshCounts, crumbs } from './nav.js';
import { wireSearch } from './search.js';

const PROJECT_PREF = 'console.project';

// Routes: a path pattern, the view module, whether it needs a project.
const ID = '([0-9a-f-]{36})';
const routes = [
  { re: /^\/(?:dashboard)?$/, view: dashboard, project: true, nav: '/dashboard' },
  { re: /^\/welcome$/, view: onboarding, project: false, nav: null },
  { re: /^\/chat$/, view: chat, project: true, nav: '/chat' },
  { re: /^\/chat\/([0-9a-f-]{36})$/, view: chat, project: true, nav: '/chat', detail: 'Conversation' },
  { re: /^\/sessions$/, view: sessions, project: true, nav: '/sessions' },
  { re: /^\/sessions\/([0-9a-f-]{36})$/, view: sessions, project: true, nav: '/sessions', detail: 'Session' },
  { re: /^\/tasks$/, view: tasks, project: true, nav: '/tasks' },
  { re: /^\/approvals$/, view: approvals, project: true, nav: '/approvals' },
  { re: /^\/incidents$/, view: incidents, project: true, nav: '/incidents' },
  { re: new RegExp('^/incidents/' + ID + '$'), view: incident, project: true, nav: '/incidents', detail: 'Incident' },
  { re: /^\/projects$/, view: projects, project: false, nav: '/projects' },
  { re: /^\/webhooks$/, view: webhooks, project: true, nav: '/webhooks' },
  { re: new RegExp('^/webhooks/' + ID + '$'), view: webhook, project: true, nav: '/webhooks', detail: 'Webhook' },
  { re: /^\/knowledge$/, view: knowledge, project: true, nav: '/knowledge' },
  { re: /^\/channels$/, view: channels, project: true, nav: '/channels' },
  { re: /^\/heartbeats$/, view: heartbeats, project: true, nav: '/heartbeats' },
  { re: /^\/maintenance$/, view: maintenance, project: true, nav: '/maintenance' },
  { re: /^\/postmortems$/, view: postmortems, project: true, nav: '/postmortems' },
  { re: /^\/rules-what-if$/, view: rulesWhatIf, project: true, nav: '/rules-what-if' },
  { re: /^\/settings(?:\/project)?$/, view: projectSettings, project: true, nav: '/settings' },
  { re: /^\/connectors$/, view: projectSettings, project: true, nav: '/connectors', tab: 'connectors' },
  { re: /^\/integrations$/, view: projectSettings, project: true, nav: '/integrations', tab: 'integrations' },
  { re: /^\/members$/, view: orgSettings, project: false, nav: '/members', tab: 'members' },
  { re: /^\/api-keys$/, view: orgSettings, project: false, nav: '/api-keys', tab: 'keys' },
  { re: /^\/changes$/, view: changes, project: true, nav: '/changes' },
  { re: /^\/usage$/, view: usage, project: true, nav: '/usage' },
  { re: /^\/evals$/, view: evals, project: false, nav: '/evals' },
  { re: /^\/organization$/, view: orgSettings, project: false, nav: '/organization' },
  { re: /^\/audit$/, view: audit, project: false, nav: '/audit' },
  { re: /^\/billing$/, view: billing, project: false, nav: '/billing' },
  { re: /^\/account$/, view: account, project: false, nav: '/account' },
];

const app = { user: null, config: null, orgs: [], projects: [], prefs: [], nav: null };

// go navigates inside the console without reloading the page.
export function go(path) {
  history.pushState(null, '', path);
  render().then(() => {
    // Keyboard and screen-reader users continue from the new page's top.
    const main = $('app');
    if (!main.contains(document.activeElement) || document.activeElement === document.body) main.focus({ preventScroll: true });
  });
}

async function loadConfig() {
  try { app.config = await api('/api/auth/config'); } catch { app.config = {}; }
}

async function whoami() {
  try { return await api('/api/auth/me'); } catch { return null; }
}

// loadContext reads the orgs and projects and picks the remembered project.
export async function loadContext() {
  app.orgs = await api('/api/auth/orgs');
  app.projects = await api('/api/projects');
  // The whole list: asking for one preference never set answers 404.
  try { app.prefs = await api('/api/me/preferences'); } catch { app.prefs = []; }
  let want = currentProject();
  if (!want) want = (app.prefs.find((p) => p.key === PROJECT_PREF) || {}).value || '';
  const found = app.projects.find((p) => p.id === want) || app.projects[0];
  setProject(found ? found.id : '');
  fillSelects();
}

function fillSelects() {
  const os = $('org-select');
  os.replaceChildren(...app.orgs.map((o) => h('option', { value: o.id, selected: o.current }, o.name)));
  const ps = $('project-select');
  if (app.projects.length === 0) ps.replaceChildren(h('option', { value: '' }, 'No project yet'));
  else ps.replaceChildren(...app.projects.map((p) => h('option', { value: p.id, selected: p.id === currentProject() }, p.name)));
  ps.disabled = app.projects.length === 0;
  os.disabled = app.orgs.length < 2;
  drawNav(app.prefs);
}

// chooseProject makes id the current project and remembers it.
export async function chooseProject(id) {
  setProject(id);
  try { await api('/api/me/preferences/' + PROJECT_PREF, { method: 'PUT', body: { value: id } }); } catch { /* a preference is a convenience */ }
  fillSelects();
}

function wireContext() {
  $('org-select').addEventListener('change', async (e) => {
    try {
      await api('/api/auth/switch-org/' + e.target.value, { method: 'POST' });
      setProject('');
      await loadContext();
      render();
    } catch (err) {
      showError(err.message);
    }
  });
  $('project-select').addEventListener('change', async (e) => {
    await chooseProject(e.target.value);
    render();
  });
  $('logout').addEventListener('click', async () => {
    try { await api('/api/auth/logout', { method: 'POST' }); } catch { /* cookies are cleared anyway */ }
    app.user = null;
    setProject('');
    history.pushState(null, '', '/');
    render();
  });
  document.addEventListener('click', (e) => {
    const a = e.target.closest('a[data-link]');
    if (!a || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey) return;
    e.preventDefault();
    go(a.getAttribute('href'));
  });
  window.addEventListener('popstate', render);
  // On a phone the sidebar is a menu opened from the top bar.
  $('nav-toggle').addEventListener('click', () => {
    const open = document.body.classList.toggle('nav-open');
    $('nav-toggle').setAttribute('aria-expanded', open ? 'true' : 'false');
  });
}

function showError(msg) {
  const v = $('view');
  v.hidden = false;
  v.replaceChildren(alertBox(msg));
}

function signedInChrome(on) {
  $('me').hidden = !on;
  $('nav').hidden = !on;
  $('nav-toggle').hidden = !on;
  $('search-open').hidden = !on;
  if (!on) $('crumbs').hidden = true;
  $('context').hidden = !on;
  if (on && app.user) $('who').textContent = app.user.name ? app.user.name + ' <' + app.user.email + '>' : app.user.email;
}

let current = null; // AbortController of the view on screen

// render draws the page the URL names.
export async function render() {
  if (current) current.abort();
  current = new AbortController();
  const signal = current.signal;
  const path = location.pathname.replace(/\/+$/, '') || '/';
  $('status').hidden = true;
  hideGrant();
  const view = $('view');
  view.hidden = true;
  unmount(view);
  view.replaceChildren();

  if (path === '/verify-email') {
    hideAuth();
    view.hidden = false;
    view.replaceChildren(h('section', { class: 'card narrow' }, h('h1', {}, 'Verify your address'), h('p', { role: 'status' }, 'Checking…')));
    const said = await verifyEmail();
    view.querySelector('p').textContent = said;
    if (said !== VERIFIED) view.querySelector('section').append(resendVerifyForm(app.user && app.user.email));
    return;
  }
  if (path === '/accept-invite') {
    // The invitation link works signed out (create the account) and in (join).
    hideAuth();
    signedInChrome(!!app.user);
    if (app.user) setNav(null);
    view.hidden = false;
    invite.render(view, { app, signedIn, go, loadContext, showLogin: () => { unmount(view); view.hidden = true; showAuth('login', app.config); } });
    return;
  }
  if (!app.user) {
    signedInChrome(false);
    if (path === '/register' && app.config.signup_enabled) showAuth('register', app.config);
    else if (path === '/forgot-password') showAuth('forgot', app.config);
    else if (path === '/reset-password') showAuth('reset', app.config);
    else showAuth('login', app.config);
    return;
  }
  hideAuth();
  signedInChrome(true);
  if (path === '/cli-grant') { setNav(null); showGrant(); return; }

  let route = null;
  let m = null;
  for (const r of routes) { m = path.match(r.re); if (m) { route = r; break; } }
  view.hidden = false;
  if (!route) {
    setNav(null);
    view.replaceChildren(h('h1', {}, 'Not found'), h('p', {}, 'There is no page here. ', h('a', { href: '/', 'data-link': true }, 'Go to the dashboard')));
    return;
  }
  setNav(route.nav, route.detail);
  if (route.project && !currentProject()) {
    view.replaceChildren(h('h1', {}, 'Choose a project'),
      h('p', {}, 'Everything the agent does happens inside a project. ', h('a', { href: '/projects', 'data-link': true }, 'Create or pick a project'), ' first.'));
    return;
  }
  try {
    await route.view.render(view, { id: m[1], path, signal, go, reload: render, app, chooseProject, loadContext, tab: route.tab, markNav, refreshCounts });
  } catch (e) {
    if (!signal.aborted) view.append(alertBox(e.message));
  }
}

function setNav(active, detail) {
  markNav(active);
  crumbs(active, detail);
  refreshCounts();
}

async function signedIn() {
  app.user = await whoami();
  if (app.user) {
    try { await loadContext(); } catch (e) { showError(e.message); }
  }
  const p = location.pathname;
  if (['/register', '/forgot-password', '/reset-password'].includes(p)) history.replaceState(null, '', '/');
  if (app.user && app.projects.length === 0 && ['/', '/dashboard'].includes(location.pathname)) {
    // A new account lands in the set-up wizard instead of an empty page.
    try {
      const ob = await api('/api/onboarding/status');
      if (ob.status === 'pending') history.replaceState(null, '', '/welcome');
    } catch { /* the wizard is a convenience */ }
  }
  render();
}

onSignedOut(() => {
  if (!app.user) return;
  app.user = null;
  render();
});

// reportErrors sends uncaught errors, failed promises and CSP refusals to
// the server (scrubbed there), at most 10 per page load.
function reportErrors() {
  let left = 10;
  const send = (message, stack, extra) => {
    if (left-- <= 0) return;
    fetch('/api/observability/client-errors', { method: 'POST', headers: { 'Content-Type': 'application/json' }, credentials: 'same-origin',
      body: JSON.stringify({ message: String(message).slice(0, 1000), stack: String(stack || '').slice(0, 4000), url: location.pathname, user_agent: navigator.userAgent, extra }) }).catch(() => {});
  };
  window.addEventListener('error', (e) => send(e.message, e.error && e.error.stack, { source: e.filename, line: e.lineno }));
  window.addEventListener('unhandledrejection', (e) => send(e.reason && e.reason.message || e.reason, e.reason && e.reason.stack));
  document.addEventListener('securitypolicyviolation', (e) => send('CSP refused ' + e.violatedDirective, '', { blocked: e.blockedURI, source: e.sourceFile, line: e.lineNumber }));
}

async function start() {
  reportErrors();
  wireAuth(signedIn);
  wireContext();
  wireSearch(go, () => !!app.user);
  await loadConfig();
  await signedIn();
}

start();
