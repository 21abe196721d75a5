// Approvals: pending first (the server sorts), each pending one with its
// approve / deny control.

import { api } from './api.js';
import { h, badge, when, alertBox } from './dom.js';
import { decisionForm, describeCall } from './decision.js';

const statuses = ['', 'pending', 'approved', 'denied', 'expired'];

export async function render(view, ctx) {
  const filter = h('select', { name: 'status' }, statuses.map((s) => h('option', { value: s }, s || 'any status')));
  const list = h('div', { id: 'approvals-list' });
  view.append(h('h1', {}, 'Approvals'), h('div', { class: 'filters' }, h('label', { class: 'inline' }, 'Status ', filter)), list);
  async function load() {
    const p = new URLSearchParams({ limit: '100' });
    if (filter.value) p.set('status', filter.value);
    try {
      const page = await api('/api/approvals?' + p, { project: true, signal: ctx.signal });
      list.replaceChildren(...(page.items.length ? page.items.map(item) : [h('p', { class: 'empty' }, 'Nothing to decide.')]));
    } catch (e) {
      if (!ctx.signal.aborted) list.replaceChildren(alertBox(e.message));
    }
  }
  function item(a) {
    const s = a.subject || {};
    const what = a.kind === 'tool_call' ? describeCall(s) : JSON.stringify(s, null, 2);
    const status = h('span', { class: 'approval-status' }, badge(a.status));
    return h('article', { class: 'card approval', dataset: { approvalId: a.id } },
      h('header', { class: 'row' }, h('h2', {}, a.title || (s.tool ? s.tool : a.kind)), status),
      h('pre', { class: 'args' }, what),
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
