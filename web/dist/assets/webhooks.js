// Webhooks: every task with its receiver (or a link to set one up), the
// provider, whether it is on, and how many deliveries failed verification.

import { html, mount, useLoad, Loaded, Link, Badge, when, pj } from './ui.js';

export function render(view, ctx) { mount(view, html`<${Webhooks} />`); }

async function load(signal) {
  const [tasks, hooks] = await Promise.all([pj('/api/tasks?limit=100', { signal }), pj('/api/webhooks?limit=200', { signal })]);
  const byTask = new Map(hooks.items.map((w) => [w.task_id, w]));
  return tasks.items.map((t) => ({ task: t, hook: byTask.get(t.id) || null }));
}

function Webhooks() {
  const r = useLoad(load);
  return html`<div class="page"><h1>Webhooks</h1>
    <p class="muted">Each task can have one receiver. Alerts that arrive there start the task, open incidents and follow the routing rules.</p>
    <${Loaded} r=${r} isEmpty=${(d) => d.length === 0} empty=${html`No tasks yet. <${Link} href="/tasks">Create a task</${Link}> first; its webhook starts it.`}>${(rows) => html`
      <table id="webhooks-table"><thead><tr><th scope="col">Task</th><th scope="col">Provider</th><th scope="col">State</th><th scope="col">Verification failures</th><th scope="col"><span class="visually-hidden">Action</span></th></tr></thead>
      <tbody>${rows.map(({ task, hook }) => html`<tr data-task-id=${task.id}>
        <td>${task.name}</td>
        <td>${hook ? hook.provider : html`<span class="muted">none</span>`}</td>
        <td>${hook ? html`<${Badge} s=${hook.enabled ? 'enabled' : 'disabled'} />` : '—'}</td>
        <td class="num">${hook ? (hook.verification_failures?.count || 0) + (hook.verification_failures?.last_at ? ' (last ' + when(hook.verification_failures.last_at) + ')' : '') : '—'}</td>
        <td><${Link} href=${'/webhooks/' + task.id} class="button secondary">${hook ? 'Open' : 'Set up'}<span class="visually-hidden"> ${task.name}</span></${Link}></td></tr>`)}</tbody></table>`}</${Loaded}></div>`;
}
