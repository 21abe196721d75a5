// Tasks: the project's agent runs on a schedule, on demand or from a
// webhook. Create from a template or from scratch, edit with a preview of
// the next fires, clone, delete one or many, run now (idempotent), and
// each task's run history.

import { html, mount, useState, useRef, useLoad, Loaded, Form, Button, Badge, Link, when, money, api, pj } from './ui.js';
import { TaskForm, draftBody } from './task_form.js';
import { newKey } from './forms.js';
import { ChatTarget } from './chat_target.js';

// Stats: the project's tasks at a glance (GET /api/tasks/stats).
function Stats() {
  const r = useLoad((signal) => pj('/api/tasks/stats?days=7', { signal }));
  return html`<${Loaded} r=${r}>${(s) => html`<ul class="tiles" id="task-stats" aria-label="Tasks at a glance">
    <li class="tile"><span class="tile-value">${s.enabled} of ${s.total}</span><span class="tile-label">enabled (${s.scheduled} on a schedule)</span></li>
    <li class="tile"><span class="tile-value">${s.runs}</span><span class="tile-label">runs in ${s.window_days} days</span></li>
    <li class="tile"><span class="tile-value">${s.failed}</span><span class="tile-label">failed or timed out</span></li>
    <li class="tile"><span class="tile-value">${s.success_rate == null ? '—' : Math.round(s.success_rate * 100) + '%'}</span><span class="tile-label">success rate</span></li>
    <li class="tile"><span class="tile-value">${s.running + s.pending}</span><span class="tile-label">running or waiting</span></li>
    <li class="tile"><span class="tile-value">${s.next_run_at ? when(s.next_run_at) : '—'}</span><span class="tile-label">${s.next_task_name ? 'next: ' + s.next_task_name : 'nothing scheduled'}</span></li>
  </ul>`}</${Loaded}>`;
}

// NextRun: what the saved task's next run will do (GET /api/tasks/{id}/preview):
// its fires, the prompt as the agent receives it, the rules and budget.
function NextRun({ id }) {
  const r = useLoad((signal) => pj('/api/tasks/' + id + '/preview?count=5', { signal }), [id]);
  return html`<details class="card" id="task-next-run"><summary>What the next run will do</summary><${Loaded} r=${r}>${(p) => html`
    <h3>Next fires (${p.timezone})</h3>${p.next_runs.length ? html`<ol class="next-runs">${p.next_runs.map((n) => html`<li><time datetime=${n.at}>${n.local}</time></li>`)}</ol>` : html`<p class="muted">On demand only.</p>`}
    ${p.warnings?.length ? html`<ul class="warnings">${p.warnings.map((w) => html`<li class="error">${w}</li>`)}</ul>` : null}
    <h3>Prompt the agent receives</h3><pre class="task-prompt">${p.prompt}</pre>
    <p class="muted">Budget per run: ${p.budget.max_steps} steps, ${p.budget.timeout_seconds} s, ${money(p.budget.max_cost_usd)}. ${p.rules.length ? p.rules.length + ' rule(s) apply:' : 'No rules apply.'}</p>
    ${p.rules.length ? html`<ul>${p.rules.map((x) => html`<li><${Badge} s=${x.kind} /> ${x.text} <span class="muted">(${x.scope})</span></li>`)}</ul>` : null}`}</${Loaded}></details>`;
}

export function render(view) { mount(view, html`<${Tasks} />`); }

function Tasks() {
  const r = useLoad((signal) => Promise.all([pj('/api/tasks?limit=100&sort=name_asc', { signal }), api('/api/task-templates', { signal })]));
  const [notice, setNotice] = useState(null);
  const [open, setOpen] = useState(null);
  const [picked, setPicked] = useState(new Set());
  function pick(id, on) { const n = new Set(picked); if (on) n.add(id); else n.delete(id); setPicked(n); }
  async function bulkDelete() {
    const out = await pj('/api/tasks/bulk-delete', { method: 'POST', body: { ids: [...picked] } });
    setNotice('Deleted ' + (out.deleted_count) + ' task(s).'); setPicked(new Set()); setOpen(null); r.reload();
  }
  return html`<div class="page" id="tasks-page"><h1>Tasks</h1>
    <${Loaded} r=${r}>${([page, templates]) => html`
      <${Stats} key=${page.total} />
      <${Create} templates=${templates} onMade=${(t) => { setNotice('Created ' + t.name + (t.enabled ? '.' : ' (disabled).')); r.reload(); }} />
      <div role="status" class="muted" id="tasks-notice">${notice}</div>
      ${page.items.length === 0 ? html`<p class="empty">No tasks yet. Create one from a template above.</p>` : html`
        <div class="filters"><${Button} class="danger" id="tasks-bulk-delete" confirm=${'Delete ' + picked.size + ' task(s)? Their past runs stay.'} onClick=${bulkDelete}>Delete selected (${picked.size})</${Button}></div>
        <table id="tasks-table"><thead><tr><th scope="col"><span class="visually-hidden">Select</span></th><th scope="col">Task</th><th scope="col">Schedule</th><th scope="col">Enabled</th><th scope="col">Last run</th><th scope="col">Next run</th><th scope="col">Actions</th></tr></thead>
        <tbody>${page.items.map((t) => html`<${Row} t=${t} key=${t.id} picked=${picked.has(t.id)} onPick=${pick} onOpen=${() => setOpen(open === t.id ? null : t.id)} open=${open === t.id} setNotice=${setNotice} reload=${r.reload} />`)}</tbody></table>`}
      ${open ? html`<${Detail} id=${open} key=${open} onChanged=${(m) => { setNotice(m); r.reload(); }} onDeleted=${(m) => { setNotice(m); setOpen(null); r.reload(); }} />` : null}`}</${Loaded}></div>`;
}

function Row({ t, picked, onPick, onOpen, open, setNotice, reload }) {
  async function toggle() {
    await pj('/api/tasks/' + t.id, { method: 'PATCH', body: { enabled: !t.enabled } });
    setNotice((t.enabled ? 'Disabled ' : 'Enabled ') + t.name + '.'); reload();
  }
  // One key per intended run: a retry after a lost answer returns the same run.
  const runKey = useRef(null);
  async function run() {
    runKey.current = runKey.current || newKey();
    const x = await pj('/api/tasks/' + t.id + '/trigger', { method: 'POST', headers: { 'Idempotency-Key': runKey.current } });
    runKey.current = null;
    setNotice(html`Started ${t.name}: <${Link} href=${'/sessions/' + x.session_id}>follow the run</${Link}>.`);
  }
  return html`<tr data-task-id=${t.id}>
    <td><input type="checkbox" aria-label=${'Select ' + t.name} checked=${picked} onChange=${(e) => onPick(t.id, e.target.checked)} /></td>
    <td><strong>${t.name}</strong>${t.description ? html`<div class="muted">${t.description}</div>` : null}</td>
    <td><code>${t.schedule || 'manual'}</code>${t.schedule && t.timezone ? html`<div class="muted">${t.timezone}</div>` : null}</td>
    <td><${Badge} s=${t.enabled ? 'enabled' : 'disabled'} /></td>
    <td>${t.last_status ? html`<${Badge} s=${t.last_status} />` : '—'} ${t.last_session_id ? html`<${Link} href=${'/sessions/' + t.last_session_id}>${when(t.last_run_at)}</${Link}>` : null}
      ${t.last_error ? html`<div class="error">${t.last_error}</div>` : null}</td>
    <td>${when(t.next_run_at) || '—'}</td>
    <td class="actions"><button type="button" class="secondary" aria-pressed=${String(t.enabled)} onClick=${toggle}>${t.enabled ? 'Disable' : 'Enable'}</button>
      <${Button} class="run" onClick=${run}>Run now</${Button}>
      <button type="button" class="secondary open" aria-expanded=${open ? 'true' : 'false'} onClick=${onOpen}>Details<span class="visually-hidden"> of ${t.name}</span></button></td></tr>`;
}

function Create({ templates, onMade }) {
  const [mode, setMode] = useState('template');
  const [tpl, setTpl] = useState('');
  const about = templates.find((x) => x.id === tpl);
  const groups = [...new Set(templates.map((t) => t.category || 'other'))];
  async function fromTemplate(d) {
    const body = { template_id: d.template_id };
    if (d.name.trim()) body.name = d.name.trim();
    onMade(await pj('/api/tasks', { method: 'POST', body }));
    setTpl('');
  }
  return html`<section class="card" aria-labelledby="new-task"><h2 id="new-task">New task</h2>
    <div class="filters" role="radiogroup" aria-label="Start from">
      <label class="inline"><input type="radio" name="mode" checked=${mode === 'template'} onChange=${() => setMode('template')} /> a template</label>
      <label class="inline"><input type="radio" name="mode" checked=${mode === 'scratch'} onChange=${() => setMode('scratch')} /> scratch</label></div>
    ${mode === 'template' ? html`<${Form} id="task-create" label="New task from a template" reset onSubmit=${fromTemplate}>
      <label>Template <select id="template-select" name="template_id" required value=${tpl} onChange=${(e) => setTpl(e.target.value)}>
        <option value="">Choose a template…</option>${groups.map((g) => html`<optgroup label=${g}>${templates.filter((t) => (t.category || 'other') === g).map((t) => html`<option value=${t.id}>${t.name}</option>`)}</optgroup>`)}</select></label>
      ${about ? html`<p class="muted">${about.description}${about.schedule ? ' Schedule: ' + about.schedule + '.' : ''}</p>` : null}
      <label>Name <input name="name" maxlength="120" placeholder="defaults to the template name" /></label>
      <button type="submit">Create task</button></${Form}>`
    : html`<${TaskForm} id="task-create-scratch" submit="Create task" onSubmit=${async (d) => onMade(await pj('/api/tasks', { method: 'POST', body: draftBody(d) }))} />`}
  </section>`;
}

function Detail({ id, onChanged, onDeleted }) {
  const r = useLoad((signal) => Promise.all([pj('/api/tasks/' + id, { signal }), pj('/api/sessions/index?limit=10&q=' + id, { signal })]), [id]);
  return html`<section class="card" id="task-detail" aria-label="Task details"><${Loaded} r=${r}>${([t, runs]) => html`
    <header class="row"><h2>${t.name}</h2><div class="actions">
      <${Button} class="secondary" id="task-clone" onClick=${async () => { const c = await pj('/api/tasks/' + id + '/clone', { method: 'POST' }); onChanged('Cloned as ' + c.name + ' (disabled).'); }}>Clone</${Button}>
      <${Link} href=${'/webhooks/' + id} class="button secondary">Webhook</${Link}>
      <${Button} class="danger" id="task-delete" confirm=${'Delete ' + t.name + '? Its past runs stay.'} onClick=${async () => { await pj('/api/tasks/' + id, { method: 'DELETE' }); onDeleted('Deleted ' + t.name + '.'); }}>Delete</${Button}></div></header>
    <${NextRun} id=${id} key=${t.updated_at} />
    <${ChatTarget} id="task-channel" taskId=${id} what="this task's approvals and outcomes" />
    <${TaskForm} id="task-edit" task=${t} submit="Save changes" onSubmit=${async (d) => { await pj('/api/tasks/' + id, { method: 'PATCH', body: draftBody(d) }); onChanged('Saved ' + d.name + '.'); r.reload(); }} />
    <h3>Recent runs</h3>
    ${runs.items.length === 0 ? html`<p class="empty">No runs yet.</p>` : html`<table id="task-runs"><thead><tr><th scope="col">Run</th><th scope="col">Trigger</th><th scope="col">Outcome</th><th scope="col">Cost</th></tr></thead>
      <tbody>${runs.items.map((s) => html`<tr><td><${Link} href=${'/sessions/' + s.id}>${when(s.created_at)}</${Link}></td><td>${s.trigger_source}</td><td><${Badge} s=${s.status} />${s.reason ? html`<div class="muted">${s.reason}</div>` : null}</td><td class="num">${money(s.cost)}</td></tr>`)}</tbody></table>`}`}</${Loaded}></section>`;
}
