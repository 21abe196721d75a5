// Chat: POST /api/chat and render its event stream as it arrives. A turn
// that stops for approval can be decided here; the resumed turn is then
// followed with GET /api/sessions/{id}/events?after=<last id>.

import { stream } from './api.js';
import { h, put, alertBox, money } from './dom.js';
import { decisionForm, describeCall } from './decision.js';
import { transcriptInto } from './transcript.js';
import { api } from './api.js';

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
    if (!text) return;
    const body = { message: text };
    if (sessionId) body.session_id = sessionId; else body.agent_type = agent.value;
    log.append(h('div', { class: 'msg user' }, h('span', { class: 'who' }, 'You'), h('div', { class: 'text' }, text)));
    message.value = '';
    agentLabel.hidden = true;
    status.textContent = 'Working…';
    run(stream('/api/chat', { method: 'POST', body, project: true, signal: ctx.signal }));
  });
  message.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) form.requestSubmit();
  });
  message.focus();
}

// renderer turns chat events into the log. onApproved runs when an
// approval was decided inline, to follow the resumed turn.
function renderer(log, status, onApproved) {
  const bubbles = new Map(); // step -> text element of the assistant's answer
  const calls = new Map(); // call_id -> tool card
  function bubble(step) {
    let t = bubbles.get(step);
    if (!t) {
      t = h('div', { class: 'text' });
      log.append(h('div', { class: 'msg assistant' }, h('span', { class: 'who' }, 'Agent'), t));
      bubbles.set(step, t);
    }
    return t;
  }
  function card(d) {
    let c = calls.get(d.call_id);
    if (!c) {
      c = h('div', { class: 'tool', dataset: { callId: d.call_id || '' } },
        h('div', { class: 'tool-head' }, h('span', { class: 'tool-name' }, d.name), ' tool call'),
        h('pre', { class: 'args' }, describeCall(d.arguments)));
      log.append(c);
      calls.set(d.call_id, c);
    }
    return c;
  }
  return {
    handle(ev) {
      const d = ev.data || {};
      switch (ev.type) {
        case 'session':
          bubbles.clear();
          status.textContent = 'Turn ' + d.turn + ' running…';
          break;
        case 'message.delta':
          bubble(d.step).textContent += d.text;
          break;
        case 'message':
          if (d.content) bubble(d.step).textContent = d.content;
          break;
        case 'usage':
          status.textContent = 'Working… ' + (d.total ? d.total.input_tokens + d.total.output_tokens : 0) + ' tokens, ' + money(d.cost);
          break;
        case 'tool.call':
          card(d);
          break;
        case 'tool.result': {
          const c = card(d);
          c.classList.toggle('failed', !!d.is_error);
          put(c, h('pre', { class: 'output' + (d.is_error ? ' is-error' : '') }, d.output || '(no output)'),
            d.blocked ? h('p', { class: 'muted' }, 'Blocked by policy or an operator.') : null);
          break;
        }
        case 'approval.required': {
          const c = card(d);
          c.classList.add('waiting');
          put(c, h('p', { class: 'reason' }, 'Approval required: ', d.reason || 'this call needs a person'),
            d.approval_id ? decisionForm(d.approval_id, (a) => { if (a.status === 'approved' || a.status === 'denied') onApproved(); }) : null);
          break;
        }
        case 'error':
          log.append(alertBox((d.code ? d.code + ': ' : '') + (d.message || 'the turn failed')));
          break;
        case 'done':
          status.textContent = d.waiting_approval
            ? 'Waiting for approval.'
            : 'Done (' + (d.agent_status || d.status) + '). Session cost ' + money(d.session_cost) + '.';
          break;
      }
    },
  };
}
