// Routing rules of a webhook, in evaluation order: create, edit in place,
// enable, delete, and the chat each rule's approvals and runs post to. A
// condition is compiled by the server on save; its error (422) is shown
// beside the condition field.

import { html, useState, useLoad, Loaded, Form, Field, Button, Badge, ErrorLine, when, pj } from './ui.js';
import { ChatTarget } from './chat_target.js';

const help = 'An expression over event, provider, alert (labels, severity, status), alerts, payload and headers, e.g. alert.severity == "critical" && provider == "alertmanager".';

export function RoutingRules({ taskId }) {
  const base = '/api/tasks/' + taskId + '/webhook/rules';
  const r = useLoad((signal) => Promise.all([pj(base, { signal }), pj('/api/tasks?limit=100', { signal }),
    pj('/api/tasks/' + taskId + '/webhook/events?limit=20', { signal })]), [taskId]);
  const [editing, setEditing] = useState(null);
  function body(d) {
    return { name: d.name, condition: d.condition, priority: d.priority ?? 100, requires_approval: d.requires_approval, enabled: d.enabled,
      target_task_id: d.target_task_id || null };
  }
  return html`<section class="card" id="routing-rules" aria-labelledby="rr-title"><h2 id="rr-title">Routing rules</h2>
    <p class="muted">Without rules every event starts this task. ${help}</p>
    <${Loaded} r=${r}>${([rules, tasks, events]) => html`
      ${rules.length === 0 ? html`<p class="empty">No routing rules.</p>` : html`<ol class="rules">${rules.map((x) => html`<li class="rule" data-rule-id=${x.id}>
        ${editing === x.id ? html`<${RuleForm} events=${events.items} taskId=${taskId} id="routing-rule-edit" rule=${x} tasks=${tasks.items} submit="Save rule"
            onSubmit=${async (d) => { await pj(base + '/' + x.id, { method: 'PATCH', body: body(d) }); setEditing(null); r.reload(); }} onCancel=${() => setEditing(null)} />`
        : html`<div class="row"><strong>${x.name}</strong> <${Badge} s=${x.enabled ? 'enabled' : 'disabled'} />${x.requires_approval ? html` <span class="badge badge-waiting">asks a person</span>` : null}</div>
          <code>${x.condition || 'always'}</code><span class="muted"> · priority ${x.priority} · runs ${(tasks.items.find((t) => t.id === x.target_task_id) || {}).name || 'this task'}</span>
          <div class="actions"><button type="button" class="secondary" onClick=${() => setEditing(x.id)}>Edit<span class="visually-hidden"> ${x.name}</span></button>
            <${Button} class="danger" confirm=${'Delete rule ' + x.name + '?'} onClick=${async () => { await pj(base + '/' + x.id, { method: 'DELETE' }); r.reload(); }}>Delete<span class="visually-hidden"> ${x.name}</span></${Button}></div>
          <${ChatTarget} id=${'rule-channel-' + x.id} taskId=${taskId} ruleId=${x.id} what=${'the approvals and runs of ' + x.name} />`}
        </li>`)}</ol>`}
      <details><summary>Add a routing rule</summary>
        <${RuleForm} events=${events.items} taskId=${taskId} id="routing-rule-create" tasks=${tasks.items} submit="Add rule" reset
          onSubmit=${async (d) => { await pj(base, { method: 'POST', body: body(d) }); r.reload(); }} /></details>`}</${Loaded}></section>`;
}

function RuleForm({ id, rule = {}, taskId, events, tasks, submit, onSubmit, onCancel, reset }) {
  return html`<${Form} id=${id} onSubmit=${onSubmit} label=${submit} reset=${reset}>
    <${Field} label="Name" name="name" required maxlength="120" defaultValue=${rule.name || ''} />
    <label>Condition<textarea name="condition" rows="2" maxlength="1024" class="mono" placeholder='alert.severity == "critical"' defaultValue=${rule.condition || ''}></textarea></label>
    ${events.length ? html`<${TryOnEvent} taskId=${taskId} events=${events} />` : html`<p class="muted">Once events arrive, a condition can be tried on one here.</p>`}
    <${Field} label="Priority (lower runs first)" name="priority" type="number" min="0" max="10000" defaultValue=${rule.priority ?? 100} />
    <label>Run task<select name="target_task_id">${tasks.map((t) => html`<option value=${t.id} selected=${t.id === (rule.target_task_id || taskId)}>${t.name}</option>`)}</select></label>
    <label class="check"><input type="checkbox" name="requires_approval" defaultChecked=${!!rule.requires_approval} /> Ask a person before running</label>
    <label class="check"><input type="checkbox" name="enabled" defaultChecked=${rule.enabled !== false} /> Enabled</label>
    <div class="actions"><button type="submit">${submit}</button>${onCancel ? html`<button type="button" class="secondary" onClick=${onCancel}>Cancel</button>` : null}</div>
  </${Form}>`;
}

// TryOnEvent evaluates the form's condition on a stored event on the
// server (POST …/events/{id}/match): nothing is dispatched.
function TryOnEvent({ taskId, events }) {
  const [ev, setEv] = useState(events[0].id);
  const [out, setOut] = useState(null);
  const [err, setErr] = useState(null);
  async function tryIt(e) {
    setErr(null); setOut(null);
    const condition = e.currentTarget.form.elements.condition.value.trim() || 'true';
    try { setOut(await pj('/api/tasks/' + taskId + '/webhook/events/' + ev + '/match', { method: 'POST', body: { condition } })); } catch (x) { setErr(x); }
  }
  return html`<div class="try-event filters"><label class="inline">Event <select value=${ev} onChange=${(e) => setEv(e.target.value)}>
      ${events.map((x) => html`<option value=${x.id}>${x.type} · ${when(x.received_at)}</option>`)}</select></label>
    <button type="button" class="secondary try" onClick=${tryIt}>Test against this event</button>
    <span role="status" class="try-result">${out ? (out.matched ? 'Matches this event.' : 'Does not match this event.') + (out.error ? ' (' + out.error + ')' : '') : ''}</span>
    <${ErrorLine} error=${err} /></div>`;
}
