// Incidents: open ones first (the server sorts); acknowledge, or resolve
// with a summary that goes to the project's incidents knowledge.

import { api } from './api.js';
import { h, badge, when, alertBox, busy } from './dom.js';
import { wireForm } from './forms.js';

const statuses = ['', 'triggered', 'acknowledged', 'resolved'];

export async function render(view, ctx) {
  const filter = h('select', { name: 'status' }, statuses.map((s) => h('option', { value: s }, s || 'any status')));
  const list = h('div', { id: 'incidents-list' });
  view.append(h('h1', {}, 'Incidents'), h('div', { class: 'filters' }, h('label', { class: 'inline' }, 'Status ', filter)), list);
  async function load() {
    const p = new URLSearchParams({ limit: '100' });
    if (filter.value) p.set('status', filter.value);
    try {
      const page = await api('/api/incidents?' + p, { project: true, signal: ctx.signal });
      list.replaceChildren(...(page.items.length ? page.items.map(item) : [h('p', { class: 'empty' }, 'No incidents.')]));
    } catch (e) {
      if (!ctx.signal.aborted) list.replaceChildren(alertBox(e.message));
    }
  }
  function item(i) {
    const errors = h('div');
    const ack = h('button', { type: 'button', class: 'secondary' }, 'Acknowledge');
    const summary = h('textarea', { name: 'summary', rows: 2, maxlength: 4000 });
    const resolve = h('button', { type: 'submit' }, 'Resolve');
    ack.addEventListener('click', () => busy(ack, () => act('acknowledge', undefined)));
    const form = h('form', { class: 'resolve' }, h('label', {}, 'Resolution summary', summary), resolve);
    wireForm(form, errors, async () => {
      await api('/api/incidents/' + i.id + '/resolve', { method: 'POST', body: summary.value.trim() ? { summary: summary.value.trim() } : {}, project: true });
      await load();
    });
    async function act(action, body) {
      errors.replaceChildren();
      try {
        await api('/api/incidents/' + i.id + '/' + action, { method: 'POST', body, project: true });
        await load();
      } catch (e) { errors.replaceChildren(alertBox(e.message)); }
    }
    return h('article', { class: 'card incident sev-' + String(i.severity || '').replace(/[^a-z]/g, ''), dataset: { incidentId: i.id } },
      h('header', { class: 'row' }, h('h2', {}, h('a', { href: '/incidents/' + i.id, 'data-link': true }, i.title)), badge(i.status)),
      h('p', { class: 'muted' }, [i.severity, i.provider, i.alert_count + ' alert' + (i.alert_count === 1 ? '' : 's'), 'opened ' + when(i.opened_at)].filter(Boolean).join(' · '),
        i.session_id ? [' · ', h('a', { href: '/sessions/' + i.session_id, 'data-link': true }, 'investigation')] : null),
      i.summary ? h('p', {}, i.summary) : null,
      i.status === 'triggered' ? h('div', { class: 'actions' }, ack) : null,
      i.status !== 'resolved' ? form : null,
      errors);
  }
  filter.addEventListener('change', load);
  await load();
}
