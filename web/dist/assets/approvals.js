// Approvals: pending first (the server sorts), each pending one with its
// approve / deny control. Keyboard: j or ↓ next, k or ↑ previous, a
// approve, d deny (with what the comment field holds), c comment.

import { api } from './api.js';
import { h, badge, when, alertBox } from './dom.js';
import { decisionForm, describeCall } from './decision.js';

const statuses = ['', 'pending', 'approved', 'denied', 'expired'];

export async function render(view, ctx) {
  const filter = h('select', { name: 'status' }, statuses.map((s) => h('option', { value: s }, s || 'any status')));
  const list = h('div', { id: 'approvals-list' });
  const keys = h('p', { class: 'muted keys', id: 'approvals-keys' }, 'Keyboard: ', h('kbd', {}, 'j'), ' / ', h('kbd', {}, '↓'), ' next · ',
    h('kbd', {}, 'k'), ' / ', h('kbd', {}, '↑'), ' previous · ', h('kbd', {}, 'a'), ' approve · ', h('kbd', {}, 'd'), ' deny · ', h('kbd', {}, 'c'), ' comment');
  view.append(h('h1', {}, 'Approvals'), h('div', { class: 'filters' }, h('label', { class: 'inline' }, 'Status ', filter)), keys, list);
  let sel = -1;
  const pending = () => [...list.querySelectorAll('article.approval')].filter((a) => a.querySelector('.decision button.approve:not(:disabled)'));
  function select(i) {
    const items = pending();
    for (const a of list.querySelectorAll('article.approval.selected')) a.classList.remove('selected');
    if (!items.length) { sel = -1; return; }
    sel = Math.max(0, Math.min(items.length - 1, i));
    items[sel].classList.add('selected');
    items[sel].focus({ preventScroll: true });
    items[sel].scrollIntoView({ block: 'nearest' });
  }
  function onKey(e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const typing = e.target.closest && e.target.closest('input, textarea, select, [contenteditable]');
    if (typing) { if (e.key === 'Escape') e.target.blur(); return; }
    const items = pending();
    const cur = items[sel];
    if (e.key === 'j' || e.key === 'ArrowDown') { e.preventDefault(); select(sel + 1); }
    else if (e.key === 'k' || e.key === 'ArrowUp') { e.preventDefault(); select(sel - 1); }
    else if (cur && (e.key === 'a' || e.key === 'd')) {
      e.preventDefault();
      const next = sel;
      cur.querySelector(e.key === 'a' ? '.decision button.approve' : '.decision button.danger').click();
      // Once decided, the next pending one is selected.
      const wait = () => { if (!cur.querySelector('.decision button.approve')) select(next); else if (!ctx.signal.aborted) setTimeout(wait, 50); };
      setTimeout(wait, 50);
    } else if (cur && e.key === 'c') { e.preventDefault(); cur.querySelector('.decision input[name=comment]')?.focus(); }
  }
  document.addEventListener('keydown', onKey);
  ctx.signal.addEventListener('abort', () => document.removeEventListener('keydown', onKey));
  async function load() {
    const p = new URLSearchParams({ limit: '100' });
    if (filter.value) p.set('status', filter.value);
    try {
      const page = await api('/api/approvals?' + p, { project: true, signal: ctx.signal });
      list.replaceChildren(...(page.items.length ? page.items.map(item) : [h('div', { class: 'empty-state' }, h('p', { class: 'empty empty-title' }, 'Nothing to decide.'),
        h('p', {}, 'Commands the agent wants to run wait here when a rule asks for a person. From the command line: '), h('pre', { class: 'cli' }, 'opsagent approvals list\nopsagent approvals approve <id>'))]));
      select(0);
    } catch (e) {
      if (!ctx.signal.aborted) list.replaceChildren(alertBox(e.message));
    }
  }
  function item(a) {
    const s = a.subject || {};
    const what = a.kind === 'tool_call' ? describeCall(s) : JSON.stringify(s, null, 2);
    const status = h('span', { class: 'approval-status' }, badge(a.status));
    return h('article', { class: 'card approval', tabindex: -1, dataset: { approvalId: a.id } },
      h('header', { class: 'row' }, h('h2', {}, a.title || (s.tool ? s.tool : a.kind)), status),
      h('pre', { class: 'args', tabindex: 0 }, what),
      a.reason ? h('p', {}, a.reason) : null,
      h('p', { class: 'muted' },
        'Opened ' + when(a.created_at),
        a.status === 'pending' ? ' · expires ' + when(a.expires_at) : ' · decided ' + when(a.decided_at),
        a.session_id ? [' · ', h('a', { href: '/sessions/' + a.session_id, 'data-link': true }, 'session')] : null),
      a.comment ? h('p', {}, 'Comment: ', a.comment) : null,
      a.status === 'pending' ? decisionForm(a.id, (d) => status.replaceChildren(badge(d.status)), a.kind === 'tool_call' ? s : null) : null);
  }
  filter.addEventListener('change', load);
  await load();
}
