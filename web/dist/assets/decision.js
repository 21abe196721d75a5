// The approve / deny control shared by the chat, the session view and the
// approvals page: an optional comment and two buttons. A decision is single
// use on the server (409 once decided or expired); its detail is shown.

import { api } from './api.js';
import { h, alertBox } from './dom.js';
import { showErrors, clearErrors } from './forms.js';

// decisionForm renders the control for approval id. onDecided receives the
// updated approval after a successful decision. With the tool call's
// subject, it also offers approve-and-remember, showing the rule it will
// create before anything is sent.
export function decisionForm(id, onDecided, subject) {
  const comment = h('input', { name: 'comment', maxlength: 2000, autocomplete: 'off' });
  const result = h('p', { role: 'status', class: 'muted' });
  const errors = h('div');
  const approve = h('button', { type: 'button', class: 'approve' }, 'Approve');
  const deny = h('button', { type: 'button', class: 'danger' }, 'Deny');
  const remember = subject && subject.command ? h('button', { type: 'button', class: 'secondary remember' }, 'Approve and remember…') : null;
  const preview = h('div', { class: 'remember-preview' });
  const form = h('div', { class: 'decision', dataset: { approvalId: id } },
    h('label', {}, 'Comment (optional) ', comment),
    h('div', { class: 'actions' }, approve, deny, remember),
    preview, errors, result);
  if (remember) {
    remember.addEventListener('click', () => {
      const rule = rememberedRule(subject);
      const confirm = h('button', { type: 'button', class: 'approve confirm-remember' }, 'Approve and add this rule');
      confirm.addEventListener('click', () => decide('approve-and-remember'));
      preview.replaceChildren(h('p', {}, 'This adds a project rule that pre-approves exactly this command from now on:'),
        h('dl', { class: 'facts rule-preview' }, ...Object.entries(rule).flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, h('code', {}, v))])),
        h('div', { class: 'actions' }, confirm, h('button', { type: 'button', class: 'secondary', onclick: () => preview.replaceChildren() }, 'Cancel')));
      confirm.focus();
    });
  }
  async function decide(action) {
    if (approve.disabled) return; // a decision is in flight: a double click sends one
    approve.disabled = deny.disabled = true;
    errors.replaceChildren();
    clearErrors(form);
    try {
      const body = comment.value.trim() ? { comment: comment.value.trim() } : {};
      let a = await api('/api/approvals/' + id + { approve: '/approve', deny: '/deny', 'approve-and-remember': '/approve-and-remember' }[action], { method: 'POST', body, project: true });
      let added = '';
      if (a.approval) { added = ' A rule now pre-approves it.'; a = a.approval; }
      result.textContent = (a.status === 'approved' ? 'Approved' : 'Denied') + (a.comment ? ': ' + a.comment : '.') + added;
      form.replaceChildren(result);
      if (onDecided) onDecided(a);
    } catch (e) {
      const msg = showErrors(form, e); // a refused comment is marked beside it
      if (msg) errors.replaceChildren(alertBox(msg));
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

// rememberedRule is the rule approve-and-remember creates (see
// handleApproveAndRemember): a must_always allow on this tool whose glob is
// the command with its wildcard characters escaped.
export function rememberedRule(subject) {
  return { kind: 'must_always', effect: 'allow', tool: subject.tool || 'run_command', match: 'glob',
    pattern: String(subject.command).replace(/\*/g, '[*]').replace(/\?/g, '[?]') };
}
