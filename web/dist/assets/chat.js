// Chat: POST /api/chat and render its event stream as it arrives. A turn
// that stops for approval can be decided here; the resumed turn is then
// followed with GET /api/sessions/{id}/events?after=<last id>.

import { stream } from './api.js';
import { h, alertBox } from './dom.js';
import { renderer } from './live.js';
import { transcriptInto } from './transcript.js';
import { api } from './api.js';
import { newKey } from './forms.js';

const agentTypes = ['general', 'sre', 'security', 'cost', 'kubernetes', 'database'];

// render draws the chat; ctx.id continues an existing session.
export async function render(view, ctx) {
  let sessionId = ctx.id || '';
  let lastId = 0;
  const log = h('div', { id: 'chat-log', class: 'log', role: 'log', 'aria-live': 'polite', 'aria-label': 'Conversation' });
  const status = h('p', { id: 'chat-status', class: 'muted', role: 'status' });
  const message = h('textarea', { id: 'chat-message', name: 'message', rows: 3, required: true, maxlength: 32000 });
  const agent = h('select', { name: 'agent_type' }, agentTypes.map((t) => h('option', { value: t }, t)));
  const agentLabel = h('label', { class: 'inline' }, 'Agent ', agent);
  const send = h('button', { type: 'submit', id: 'chat-send' }, 'Send');
  const form = h('form', { id: 'chat-form', class: 'composer' },
    h('label', {}, 'Message', message), h('div', { class: 'actions' }, agentLabel, send));
  const newChat = h('a', { href: '/chat', 'data-link': true, class: 'button secondary' }, 'New chat');
  view.append(h('div', { class: 'heading' }, h('h1', {}, 'Chat'), newChat), log, status, form);

  if (sessionId) {
    agentLabel.hidden = true;
    try { transcriptInto(log, await api('/api/sessions/' + sessionId + '/transcript', { project: true, signal: ctx.signal })); } catch (e) { log.append(alertBox(e.message)); }
  }

  const r = renderer(log, status, () => follow());
  async function consume(events) {
    for await (const ev of events) {
      if (ev.id) lastId = ev.id;
      if (ev.type === 'session' && ev.data.session_id && !sessionId) {
        sessionId = ev.data.session_id;
        history.replaceState(null, '', '/chat/' + sessionId);
      }
      r.handle(ev);
    }
  }
  async function run(events) {
    send.disabled = true;
    try { await consume(events); } catch (e) { if (!ctx.signal.aborted) log.append(alertBox(e.message)); } finally { send.disabled = false; }
  }
  function follow() {
    return run(stream('/api/sessions/' + sessionId + '/events?after=' + lastId, { project: true, signal: ctx.signal }));
  }
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const text = message.value.trim();
    if (!text || send.disabled) return; // a turn is still streaming: Ctrl-Enter twice sends once
    const body = { message: text };
    if (sessionId) body.session_id = sessionId; else body.agent_type = agent.value;
    log.append(h('div', { class: 'msg user' }, h('span', { class: 'who' }, 'You'), h('div', { class: 'text' }, text)));
    message.value = '';
    agentLabel.hidden = true;
    status.textContent = 'Working…';
    // The key makes a resent turn (a retry of this very request) the same turn.
    run(stream('/api/chat', { method: 'POST', body, project: true, signal: ctx.signal, headers: { 'Idempotency-Key': newKey() } }));
  });
  message.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) form.requestSubmit();
  });
  message.focus();
}
