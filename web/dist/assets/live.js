// The live view of an agent run, shared by the chat, the session page and
// the incident page: the answer as it streams, each tool call as a compact
// card (tool, target, status, duration, exit code, output folded with a
// copy button, live tool.output streaming into it), approvals inline with
// approve, deny with a comment, and approve and remember.
// Cards keep their size while they stream (the output box scrolls), so the
// page never jumps.

import { h, put, alertBox, money } from './dom.js';
import { decisionForm, describeCall } from './decision.js';
import { copyText } from './ui.js';

function parseArgs(a) {
  if (typeof a !== 'string') return a || {};
  try { return JSON.parse(a); } catch { return {}; }
}

// toolCard builds an empty card for a call; update() fills it.
export function toolCard(call) {
  const args = parseArgs(call.arguments);
  const target = args.target || args.host || args.cluster || args.context || '';
  const status = h('span', { class: 'badge badge-running tool-status' }, 'running');
  const meta = h('span', { class: 'tool-meta muted' });
  const out = h('pre', { class: 'output', tabindex: 0 });
  const lines = h('span', { class: 'muted tool-lines' });
  const copy = h('button', { type: 'button', class: 'secondary copy', 'aria-label': 'Copy the output of ' + call.name }, 'Copy');
  copy.addEventListener('click', async () => { await copyText(out.textContent); copy.textContent = 'Copied'; setTimeout(() => { copy.textContent = 'Copy'; }, 1500); });
  const details = h('details', { class: 'tool-out', hidden: true }, h('summary', {}, 'Output ', lines), out, h('div', { class: 'actions' }, copy));
  const extra = h('div', { class: 'tool-extra' });
  const el = h('div', { class: 'tool', dataset: { callId: call.call_id || call.id || '' } },
    h('div', { class: 'tool-head' }, h('span', { class: 'tool-name' }, call.name), target ? h('span', { class: 'tool-target' }, 'on ' + target) : null, status, meta),
    h('pre', { class: 'args', tabindex: 0 }, describeCall(call.arguments)), details, extra);
  const card = {
    el,
    subject: { tool: call.name, command: typeof args.command === 'string' ? args.command : '' },
    // stream appends live output (tool.output).
    stream(text) {
      if (el.classList.contains('waiting')) { // approved: it runs now
        el.classList.remove('waiting');
        status.className = 'badge badge-running tool-status';
        status.textContent = 'running';
      }
      details.hidden = false;
      if (!details.open) details.open = true;
      out.textContent += text;
      out.scrollTop = out.scrollHeight;
      lines.textContent = '(' + out.textContent.split('\n').filter(Boolean).length + ' lines, live)';
    },
    // result sets the final output and status (tool.result or a transcript's tool message).
    result({ output, is_error, blocked, duration_ms }) {
      const text = output || '';
      out.textContent = text;
      details.hidden = !text;
      const n = text.split('\n').filter(Boolean).length;
      lines.textContent = '(' + n + ' line' + (n === 1 ? '' : 's') + ')';
      details.open = !!is_error && n <= 20;
      const exit = /exit code (-?\d+)/.exec(text);
      const s = blocked ? 'blocked' : is_error ? 'failed' : 'completed';
      status.className = 'badge tool-status badge-' + s;
      status.textContent = blocked ? 'blocked' : is_error ? 'failed' : 'ok';
      meta.textContent = [typeof duration_ms === 'number' ? fmtDuration(duration_ms) : '', exit ? 'exit ' + exit[1] : ''].filter(Boolean).join(' · ');
      el.classList.toggle('failed', !!is_error || !!blocked);
      el.classList.remove('waiting');
      if (blocked) extra.replaceChildren(h('p', { class: 'muted' }, 'Blocked by policy or an operator.'));
      else extra.replaceChildren();
    },
    // waiting shows the inline decision for an approval.
    waiting(reason, approvalId, onDecided) {
      el.classList.add('waiting');
      status.className = 'badge tool-status badge-waiting';
      status.textContent = 'needs approval';
      put(extra.replaceChildren() || extra, h('p', { class: 'reason' }, 'Approval required: ', reason || 'this call needs a person'),
        approvalId ? decisionForm(approvalId, onDecided, card.subject.command ? card.subject : null) : null);
    },
  };
  return card;
}

export function fmtDuration(ms) {
  if (ms < 1000) return ms + ' ms';
  if (ms < 60000) return (ms / 1000).toFixed(1) + ' s';
  return Math.floor(ms / 60000) + ' min ' + Math.round((ms % 60000) / 1000) + ' s';
}

// renderer turns a run's events into the log. onApproved runs when an
// approval was decided inline, to follow the resumed turn.
export function renderer(log, status, onApproved) {
  const bubbles = new Map(); // step -> text element of the assistant's answer
  const whos = new Map(); // step -> its "Agent" label, which names the model that answered
  const calls = new Map(); // call_id -> tool card
  function bubble(step) {
    let t = bubbles.get(step);
    if (!t) {
      t = h('div', { class: 'text' });
      const who = h('span', { class: 'who' }, 'Agent');
      log.append(h('div', { class: 'msg assistant' }, who, t));
      bubbles.set(step, t);
      whos.set(step, who);
    }
    return t;
  }
  function card(d) {
    let c = calls.get(d.call_id);
    if (!c) {
      c = toolCard(d);
      log.append(c.el);
      calls.set(d.call_id, c);
    }
    return c;
  }
  const say = (t) => { if (status) status.textContent = t; };
  return {
    handle(ev) {
      const d = ev.data || {};
      switch (ev.type) {
        case 'session':
          bubbles.clear();
          say('Turn ' + d.turn + ' running…');
          break;
        case 'message.delta':
          bubble(d.step).textContent += d.text;
          break;
        case 'message':
          if (d.content) bubble(d.step).textContent = d.content;
          if (d.model && whos.has(d.step)) whos.get(d.step).textContent = 'Agent · ' + d.model;
          break;
        case 'model.failover':
          log.append(h('p', { class: 'muted note' }, 'Model ' + d.from + ' failed (' + d.class + '); asked ' + d.to + ' instead.'));
          break;
        case 'context':
          log.append(h('p', { class: 'muted note' }, d.action === 'summarized'
            ? 'Context: ' + d.summarized + ' earlier messages summarized to fit the model\'s window (' + money(d.cost || 0) + ').'
            : d.action === 'compacted' ? 'Context: ' + d.compacted + ' older tool results compacted to fit the model\'s window.'
              : 'Context: ' + (d.message || d.action)));
          break;
        case 'output.invalid':
          log.append(h('p', { class: 'muted note' }, 'The model\'s output was malformed: ' + d.reason));
          break;
        case 'usage':
          say('Working… ' + (d.total ? d.total.input_tokens + d.total.output_tokens : 0) + ' tokens, ' + money(d.cost));
          break;
        case 'tool.call':
          card(d);
          break;
        case 'tool.output':
          card(d).stream(d.dropped ? '\n[… output past the live cap left out …]\n' : d.text || '');
          break;
        case 'tool.result':
          card(d).result(d);
          break;
        case 'approval.required':
          card(d).waiting(d.reason, d.approval_id, (a) => { if (a.status === 'approved' || a.status === 'denied') onApproved && onApproved(); });
          break;
        case 'error':
          log.append(alertBox((d.code ? d.code + ': ' : '') + (d.message || 'the turn failed')));
          break;
        case 'done':
          say(d.waiting_approval ? 'Waiting for approval.'
            : 'Done (' + (d.agent_status || d.status) + '). Session cost ' + money(d.session_cost) + '.');
          break;
      }
    },
  };
}
