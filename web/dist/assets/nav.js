// The sidebar: pages grouped by the job a person is doing (respond,
// automate, know, connect, administer), each group collapsible and the
// choice remembered per person (preference console.nav); counts of what
// waits on Approvals and Incidents; breadcrumbs above every page.

import { api, currentProject } from './api.js';
import { h, $ } from './dom.js';

export const NAV_PREF = 'console.nav';

export const groups = [
  { id: 'respond', label: 'Respond', links: [['/incidents', 'Incidents'], ['/approvals', 'Approvals'], ['/chat', 'Chat'], ['/sessions', 'Sessions']] },
  { id: 'automate', label: 'Automate', links: [['/tasks', 'Tasks'], ['/webhooks', 'Webhooks'], ['/heartbeats', 'Heartbeats'], ['/maintenance', 'Maintenance'], ['/rules-what-if', 'Rules and what-if']] },
  { id: 'know', label: 'Know', links: [['/knowledge', 'Knowledge'], ['/postmortems', 'Postmortems'], ['/changes', 'Changes']] },
  { id: 'connect', label: 'Connect', links: [['/connectors', 'Connectors'], ['/channels', 'Channels'], ['/integrations', 'Integrations']] },
  { id: 'admin', label: 'Admin', links: [['/projects', 'Projects'], ['/settings', 'Project settings'], ['/organization', 'Organization'], ['/members', 'Members'],
    ['/api-keys', 'API keys'], ['/audit', 'Audit log'], ['/billing', 'Billing'], ['/usage', 'Usage'], ['/evals', 'Evaluations']] },
];

// where names the group and label of a navigation path (for breadcrumbs).
export function where(path) {
  for (const g of groups) for (const [href, label] of g.links) if (href === path) return { group: g, label };
  if (path === '/dashboard') return { group: null, label: 'Dashboard' };
  if (path === '/account') return { group: null, label: 'Your account' };
  return null;
}

const state = { collapsed: new Set(), active: null };

// drawNav builds the sidebar once per sign-in; prefs is the person's
// preference list (GET /api/me/preferences).
export function drawNav(prefs) {
  const pref = (prefs || []).find((p) => p.key === NAV_PREF);
  state.collapsed = new Set((pref && Array.isArray(pref.value?.collapsed)) ? pref.value.collapsed : []);
  const nav = $('nav');
  const link = (href, label, count) => h('a', { href, 'data-link': true }, h('span', { class: 'nav-label' }, label),
    count ? h('span', { class: 'nav-count', id: 'count-' + href.slice(1), hidden: true }) : null);
  nav.replaceChildren(
    h('div', { class: 'nav-top' }, link('/dashboard', 'Dashboard')),
    ...groups.map((g) => {
      const open = !state.collapsed.has(g.id);
      const list = h('div', { class: 'nav-links', id: 'nav-group-' + g.id, hidden: !open },
        g.links.map(([href, label]) => link(href, label, href === '/approvals' || href === '/incidents')));
      const toggle = h('button', { type: 'button', class: 'nav-group-toggle', 'aria-expanded': open ? 'true' : 'false', 'aria-controls': 'nav-group-' + g.id,
        onclick: () => toggleGroup(g.id, toggle, list) }, g.label);
      return h('section', { class: 'nav-group', dataset: { group: g.id } }, toggle, list);
    }),
    h('div', { class: 'nav-bottom' }, link('/account', 'Your account')));
  markNav(state.active);
}

function toggleGroup(id, toggle, list) {
  const open = list.hidden;
  list.hidden = !open;
  toggle.setAttribute('aria-expanded', open ? 'true' : 'false');
  if (open) state.collapsed.delete(id); else state.collapsed.add(id);
  api('/api/me/preferences/' + NAV_PREF, { method: 'PUT', body: { value: { collapsed: [...state.collapsed] } } }).catch(() => { /* a convenience */ });
}

// markNav highlights the current page's link and opens its group.
export function markNav(active) {
  state.active = active;
  for (const a of $('nav').querySelectorAll('a')) {
    if (a.getAttribute('href') === active) {
      a.setAttribute('aria-current', 'page');
      const list = a.closest('.nav-links');
      if (list && list.hidden) { list.hidden = false; list.previousElementSibling?.setAttribute('aria-expanded', 'true'); }
    } else a.removeAttribute('aria-current');
  }
  document.body.classList.remove('nav-open');
  $('nav-toggle')?.setAttribute('aria-expanded', 'false');
}

// refreshCounts puts what waits for a person next to Approvals (pending)
// and Incidents (not resolved). A failure leaves the counts out.
export async function refreshCounts() {
  if (!currentProject()) return setCounts({});
  const total = (q) => api(q, { project: true }).then((p) => p.total);
  try {
    const [approvals, triggered, acked] = await Promise.all([total('/api/approvals?status=pending&limit=1'),
      total('/api/incidents?status=triggered&limit=1'), total('/api/incidents?status=acknowledged&limit=1')]);
    setCounts({ approvals: [approvals, ' pending'], incidents: [triggered + acked, ' open'] });
  } catch { setCounts({}); }
}

function setCounts(c) {
  for (const k of ['approvals', 'incidents']) {
    const el = $('count-' + k);
    if (!el) continue;
    const [n, label] = c[k] || [0, ''];
    el.replaceChildren(n > 99 ? '99+' : String(n), h('span', { class: 'visually-hidden' }, label));
    el.hidden = !n;
  }
}

// crumbs draws the breadcrumbs of a page: its group, its page and, on a
// detail page, the item (detail is the item's kind, e.g. "Incident").
export function crumbs(nav, detail) {
  const el = $('crumbs');
  const w = nav && where(nav);
  if (!w) { el.hidden = true; el.replaceChildren(); return; }
  const items = [];
  if (w.group) items.push(h('li', {}, w.group.label));
  items.push(h('li', {}, detail ? h('a', { href: nav, 'data-link': true }, w.label) : h('span', { 'aria-current': 'page' }, w.label)));
  if (detail) items.push(h('li', {}, h('span', { 'aria-current': 'page' }, detail)));
  el.replaceChildren(h('ol', {}, items));
  el.hidden = false;
}
