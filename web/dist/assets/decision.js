// The approve / deny control shared by the chat, the session view and the
// approvals page: an optional comment and two buttons. A decision is single
// use on the server (409 once decided or expired); its detail is shown.

import { api } from './api.js';
import { h, alertBox } from './dom.js';

// decisionForm renders the control for approval id. onDecided receives the
// updated approval after a successful decision.
export function decisionForm(id, onDecided) {
  const comment = h('input', { name: 'comment', maxlength: 2000, autocomplete: 'off' });
  const result = h('p', { role: 'status', class: 'muted' });
  const errors = h('div');
  const approve = h('button', { type: 'button', class: 'approve' }, 'Approve');
  const deny = h('button', { type: 'button', class: 'danger' }, 'Deny');
  const form = h('div', { class: 'decision', dataset: { approvalId: id } },
    h('label', {}, 'Comment (optional) ', comment),
    h('div', { class: 'actions' }, approve, deny),
    errors, result);
  async function decide(action) {
    approve.disabled = deny.disabled = true;
    errors.replaceChildren();
    try {
      const body = comment.value.trim() ? { comment: comment.value.trim() } : {};
      const a = await api('/api/approvals/' + id + '/' + action, { method: 'POST', body, project: true });
      result.textContent = (a.status === 'approved' ? 'Approved' : 'Denied') + (a.comment ? ': ' + a.comment : '.');
      form.replaceChildren(result);
      if (onDecided) onDecided(a);
    } catch (e) {
      errors.replaceChildren(alertBox(e.message));
      approve.disabled = deny.disabled = false;
    }
  }
  approve.addEventListener('click', () => decide('approve'));
  deny.addEventListener('click', () => decide('deny'));
  return form;
}

// describeCall renders a tool call's arguments: a command line when there
// is one, else the JSON.
export function describeCall(args) {
  let v = args;
  if (typeof v === 'string') { try { v = JSON.parse(v); } catch { return v; } }
  if (v && typeof v.command === 'string') return v.command + (v.target && v.target !== 'server' ? '  (on ' + v.target + ')' : '');
  return JSON.stringify(v, null, 2);
}
