// Sessions: the index (GET /api/sessions/index) and one session with its
// transcript; a running session is followed live and redrawn when its turn
// ends.

import { api, stream } from './api.js';
import { h, put, badge, when, money, alertBox } from './dom.js';
import { transcriptInto } from './transcript.js';
import { decisionForm, describeCall } from './decision.js';

const statuses = ['', 'pending', 'running', 'completed', 'failed', 'cancelled', 'timeout'];

export async function render(view, ctx) {
  if (ctx.id) return renderOne(view, ctx);
  const filter = h('select', { id: 'session-status', name: 'status' }, statuses.map((s) => h('option', { value: s }, s || 'any status')));
  const q = h('input', { type: 'search', name: 'q', maxlength: 200 });
  const body = h('div');
  const form = h('form', { class: 'filters', role: 'search' },
    h('label', { class: 'inline' }, 'Search ', q), h('label', { class: 'inline' }, 'Status ', filter), h('button', { type: 'submit' }, 'Filter'));
  view.append(h('h1', {}, 'Sessions'), form, body);
  async function load() {
    const p = new URLSearchParams({ limit: '50' });
    if (filter.value) p.set('status', filter.value);
    if (q.value.trim()) p.set('q', q.value.trim());
    try {
      const page = await api('/api/sessions/index?' + p, { project: true, signal: ctx.signal });
      body.replaceChildren(table(page));
    } catch (e) {
      if (!ctx.signal.aborted) body.replaceChildren(alertBox(e.message));
    }
  }
  form.addEventListener('submit', (e) => { e.preventDefault(); load(); });
  filter.addEventListener('change', load);
  await load();
}

function table(page) {
  if (!page.items.length) return h('p', { class: 'empty' }, 'No sessions yet. Start one from the chat.');
  return h('table', { id: 'sessions-table' },
    h('caption', { class: 'muted' }, page.total + ' session' + (page.total === 1 ? '' : 's')),
    h('thead', {}, h('tr', {}, ['Session', 'Status', 'Source', 'Last activity', 'Turns', 'Cost'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, page.items.map((s) => h('tr', {},
      h('td', {}, h('a', { href: '/sessions/' + s.id, 'data-link': true }, s.title || s.name || s.first_prompt || s.id)),
      h('td', {}, badge(s.status), s.waiting_approval ? h('span', { class: 'badge badge-waiting' }, 'waiting approval') : null),
      h('td', {}, s.source + (s.task_name ? ' · ' + s.task_name : '')),
      h('td', {}, when(s.last_activity)),
      h('td', { class: 'num' }, s.turns),
      h('td', { class: 'num' }, money(s.cost))))));
}

async function renderOne(view, ctx) {
  const id = ctx.id;
  const opts = { project: true, signal: ctx.signal };
  const [d, t] = await Promise.all([api('/api/sessions/detail/' + id, opts), api('/api/sessions/' + id + '/transcript', opts)]);
  const log = h('div', { id: 'session-log', class: 'log', role: 'log', 'aria-label': 'Transcript' });
  transcriptInto(log, t);
  const actions = h('div', { class: 'actions' },
    h('a', { href: '/chat/' + id, 'data-link': true, class: 'button' }, 'Continue in chat'),
    ['pending', 'running'].includes(d.status) ? h('button', { type: 'button', class: 'danger', onclick: (e) => cancel(e.target) }, 'Cancel session') : null);
  const errors = h('div');
  put(view,
    h('p', {}, h('a', { href: '/sessions', 'data-link': true }, '← Sessions')),
    h('h1', {}, d.title || d.name || 'Session'),
    h('dl', { class: 'facts' },
      fact('Status', h('span', { id: 'session-status-value' }, badge(d.status), d.waiting_approval ? ' waiting for approval' : '')),
      fact('Agent', d.agent_type), fact('Source', d.source + ' / ' + d.trigger_source), fact('Model', d.model),
      fact('Started', when(d.started_at || d.created_at)), fact('Turns', d.turns), fact('Tool calls', d.tool_calls),
      fact('Tokens', d.total_tokens), fact('Cost', money(d.cost))),
    ['failed', 'cancelled', 'timeout'].includes(d.status) && d.reason ? h('p', { class: 'error session-reason' }, d.reason) : null,
    actions, errors, log);
  if (t.pending && d.waiting_approval) {
    const p = t.pending;
    log.append(h('div', { class: 'tool waiting' },
      h('div', { class: 'tool-head' }, h('span', { class: 'tool-name' }, p.call.name), ' waiting for approval'),
      h('pre', { class: 'args' }, describeCall(p.call.arguments)),
      h('p', { class: 'reason' }, p.reason),
      pendingDecision(id, ctx)));
  }
  async function cancel(btn) {
    btn.disabled = true;
    try { await api('/api/sessions/' + id + '/cancel', { method: 'POST', project: true }); ctx.reload(); } catch (e) { errors.replaceChildren(alertBox(e.message)); btn.disabled = false; }
  }
  if (['pending', 'running'].includes(d.status) && !d.waiting_approval) live(id, ctx);
}

// pendingDecision finds the approval opened for the waiting call.
function pendingDecision(sessionId, ctx) {
  const box = h('div');
  api('/api/approvals?status=pending&session_id=' + sessionId, { project: true, signal: ctx.signal }).then((page) => {
    const a = page.items[0];
    if (a) box.append(decisionForm(a.id, () => setTimeout(ctx.reload, 300), a.kind === 'tool_call' ? a.subject : null));
    else box.append(h('p', { class: 'muted' }, 'See the approvals page.'));
  }).catch((e) => box.append(alertBox(e.message)));
  return box;
}

// live follows the running turn and redraws the page once the session is
// no longer running (or stops to wait for a person).
async function live(id, ctx) {
  let after = 0;
  while (!ctx.signal.aborted) {
    try {
      for await (const ev of stream('/api/sessions/' + id + '/events?after=' + after, { project: true, signal: ctx.signal })) {
        if (ev.id) after = ev.id;
      }
      const d = await api('/api/sessions/detail/' + id, { project: true, signal: ctx.signal });
      if (!['pending', 'running'].includes(d.status) || d.waiting_approval) { ctx.reload(); return; }
    } catch {
      if (ctx.signal.aborted) return;
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}

function fact(k, v) { return [h('dt', {}, k), h('dd', {}, v === undefined || v === null || v === '' ? '—' : v)]; }
