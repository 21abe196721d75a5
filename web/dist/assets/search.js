// Global search (Ctrl-K or ⌘K, or the search button of the top bar): one
// box over incidents, sessions, tasks, runbooks and the console's pages.
// Arrow keys move, Enter opens, Escape closes.

import { api, currentProject } from './api.js';
import { h, $ } from './dom.js';
import { groups } from './nav.js';

let box = null;

function pages(q) {
  const all = [['/dashboard', 'Dashboard', ''], ['/account', 'Your account', '']];
  for (const g of groups) for (const [href, label] of g.links) all.push([href, label, g.label]);
  return all.filter(([, label, group]) => (label + ' ' + group).toLowerCase().includes(q))
    .slice(0, 6).map(([href, label, group]) => ({ kind: 'Page', title: label, note: group, href }));
}

async function find(q, signal) {
  const lq = q.toLowerCase();
  const out = pages(lq);
  if (!currentProject() || q.length < 2) return out;
  const o = { project: true, signal };
  const safe = (p) => p.catch(() => null);
  const [inc, ses, tasks, kb] = await Promise.all([
    safe(api('/api/incidents?limit=200', o)),
    safe(api('/api/sessions/index?limit=8&q=' + encodeURIComponent(q), o)),
    safe(api('/api/tasks?limit=8&search=' + encodeURIComponent(q), o)),
    safe(api('/api/knowledge/search?limit=8&collection=runbooks&q=' + encodeURIComponent(q), o)),
  ]);
  for (const i of (inc?.items || []).filter((i) => i.title.toLowerCase().includes(lq)).slice(0, 8)) out.push({ kind: 'Incident', title: i.title, note: i.status, href: '/incidents/' + i.id });
  for (const s of ses?.items || []) out.push({ kind: 'Session', title: s.title || s.name || s.first_prompt || s.id, note: s.status, href: '/sessions/' + s.id });
  for (const t of tasks?.items || []) out.push({ kind: 'Task', title: t.name, note: t.schedule || 'no schedule', href: '/tasks' });
  const seen = new Set();
  for (const k of kb?.hits || kb?.items || []) {
    if (seen.has(k.name)) continue;
    seen.add(k.name);
    out.push({ kind: 'Runbook', title: k.title || k.name, note: k.heading || k.name, href: '/knowledge' });
  }
  return out;
}

// openSearch shows the search box; go navigates inside the console.
export function openSearch(go) {
  if (box) { box.input.focus(); return; }
  const input = h('input', { type: 'search', id: 'search-input', 'aria-label': 'Search incidents, sessions, tasks, runbooks and pages', placeholder: 'Search incidents, sessions, tasks, runbooks, pages…',
    autocomplete: 'off', role: 'combobox', 'aria-expanded': 'true', 'aria-controls': 'search-results', maxlength: 200 });
  const list = h('ul', { id: 'search-results', role: 'listbox', 'aria-label': 'Results' });
  const status = h('p', { class: 'muted', role: 'status', id: 'search-status' });
  const panel = h('div', { class: 'search-panel', role: 'dialog', 'aria-modal': 'true', 'aria-label': 'Search' }, input, status, list,
    h('p', { class: 'muted search-keys' }, '↑ ↓ to move · Enter to open · Esc to close'));
  const backdrop = h('div', { class: 'search-backdrop', id: 'search' }, panel);
  let items = [];
  let sel = 0;
  let ac = null;
  let timer = 0;
  const before = document.activeElement;
  function draw() {
    list.replaceChildren(...items.map((it, i) => h('li', { role: 'option', id: 'search-opt-' + i, 'aria-selected': i === sel ? 'true' : 'false', class: 'search-item',
      onmousedown: (e) => { e.preventDefault(); pick(i); } },
      h('span', { class: 'badge' }, it.kind), ' ', h('span', { class: 'search-title' }, it.title), it.note ? h('span', { class: 'muted' }, ' · ' + it.note) : null)));
    if (items.length) input.setAttribute('aria-activedescendant', 'search-opt-' + sel); else input.removeAttribute('aria-activedescendant');
  }
  function close() {
    if (ac) ac.abort();
    backdrop.remove();
    box = null;
    if (before && before.focus) before.focus();
  }
  function pick(i) {
    const it = items[i];
    if (!it) return;
    close();
    go(it.href);
  }
  async function search() {
    const q = input.value.trim();
    if (ac) ac.abort();
    ac = new AbortController();
    const signal = ac.signal;
    if (!q) { items = []; status.textContent = ''; draw(); return; }
    status.textContent = 'Searching…';
    const found = await find(q, signal);
    if (signal.aborted) return;
    items = found; sel = 0;
    status.textContent = found.length ? found.length + ' result' + (found.length === 1 ? '' : 's') : 'Nothing matches "' + q + '".';
    draw();
  }
  input.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(search, 150); });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'ArrowDown') { e.preventDefault(); sel = Math.min(items.length - 1, sel + 1); draw(); }
    else if (e.key === 'ArrowUp') { e.preventDefault(); sel = Math.max(0, sel - 1); draw(); }
    else if (e.key === 'Enter') { e.preventDefault(); pick(sel); }
    else if (e.key === 'Escape') { e.preventDefault(); close(); }
  });
  backdrop.addEventListener('mousedown', (e) => { if (e.target === backdrop) close(); });
  document.body.append(backdrop);
  box = { input };
  input.focus();
}

// wireSearch listens for Ctrl-K / ⌘K everywhere and for the top bar's button.
export function wireSearch(go, signedIn) {
  document.addEventListener('keydown', (e) => {
    if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === 'k' && signedIn()) { e.preventDefault(); openSearch(go); }
  });
  $('search-open')?.addEventListener('click', () => openSearch(go));
}
