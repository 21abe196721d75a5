// The task editor shared by create-from-scratch and edit, with a preview of
// the draft (POST /api/tasks/preview): the schedule's next five fires in the
// task's zone, warnings, the rules and budget that will apply.

import { html, useState, Form, Field, Select, Badge, ErrorLine, money, pj } from './ui.js';

const agents = ['general', 'sre', 'security', 'cost', 'kubernetes', 'database'];

// draftBody turns the form's fields into a TaskCreate/TaskUpdate body.
export function draftBody(d) {
  const b = { name: d.name, prompt: d.prompt, schedule: d.schedule || '', timezone: d.timezone || 'UTC', agent_type: d.agent_type,
    description: d.description || '', enabled: d.enabled, overlap_policy: d.overlap_policy, missed_fire_policy: d.missed_fire_policy };
  for (const k of ['max_steps', 'timeout_seconds', 'max_cost_usd']) if (d[k] != null) b[k] = d[k];
  return b;
}

function read(form) {
  const d = {};
  for (const el of form.elements) {
    if (!el.name) continue;
    d[el.name] = el.type === 'checkbox' ? el.checked : el.type === 'number' ? (el.value === '' ? null : Number(el.value)) : el.value;
  }
  return d;
}

export function TaskForm({ id, task = {}, submit, onSubmit }) {
  const [preview, setPreview] = useState(null);
  const [perr, setPerr] = useState(null);
  async function doPreview(e) {
    setPerr(null);
    try { setPreview(await pj('/api/tasks/preview', { method: 'POST', body: draftBody(read(e.target.form)) })); } catch (x) { setPreview(null); setPerr(x); }
  }
  const tz = task.timezone || Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  return html`<${Form} id=${id} label=${submit} onSubmit=${onSubmit}>
    <div class="grid2"><${Field} label="Name" name="name" required maxlength="120" defaultValue=${task.name || ''} />
      <${Select} label="Agent" name="agent_type" defaultValue=${task.agent_type || 'general'} options=${agents.map((a) => [a, a])} /></div>
    <label>Prompt<textarea name="prompt" rows="5" required maxlength="20000" defaultValue=${task.prompt || ''}></textarea></label>
    <${Field} label="Description" name="description" maxlength="2000" defaultValue=${task.description || ''} />
    <div class="grid2"><${Field} label="Schedule (cron; empty: on demand)" name="schedule" class="mono" maxlength="120" placeholder="*/15 * * * *" defaultValue=${task.schedule || ''} />
      <${Field} label="Time zone" name="timezone" maxlength="64" defaultValue=${tz} />
      <${Select} label="If a run is still going" name="overlap_policy" defaultValue=${task.overlap_policy || 'skip'} options=${[['skip', 'skip the fire'], ['queue', 'queue it']]} />
      <${Select} label="Fires missed while down" name="missed_fire_policy" defaultValue=${task.missed_fire_policy || 'skip'} options=${[['skip', 'skip them'], ['run_once', 'run once']]} />
      <${Field} label="Max steps" name="max_steps" type="number" min="1" max="200" defaultValue=${task.max_steps ?? ''} />
      <${Field} label="Timeout (seconds)" name="timeout_seconds" type="number" min="30" max="86400" defaultValue=${task.timeout_seconds ?? ''} />
      <${Field} label="Max cost per run (USD)" name="max_cost_usd" type="number" min="0" step="0.01" defaultValue=${task.max_cost_usd ?? ''} /></div>
    <label class="check"><input type="checkbox" name="enabled" defaultChecked=${task.enabled !== false} /> Enabled</label>
    <div class="actions"><button type="submit">${submit}</button><button type="button" class="secondary preview" onClick=${doPreview}>Preview</button></div>
    <${ErrorLine} error=${perr} />
    ${preview ? html`<div class="card task-preview" role="status">
      <h3>Next fires</h3>${preview.next_runs.length ? html`<ol class="next-runs">${preview.next_runs.slice(0, 5).map((n) => html`<li><time datetime=${n.at}>${n.local}</time></li>`)}</ol>` : html`<p class="muted">On demand only.</p>`}
      ${preview.warnings?.length ? html`<ul class="warnings">${preview.warnings.map((w) => html`<li class="error">${w}</li>`)}</ul>` : null}
      <p class="muted">Budget per run: ${preview.budget.max_steps} steps, ${preview.budget.timeout_seconds} s, ${money(preview.budget.max_cost_usd)}. ${preview.rules.length} rule(s) apply.</p>
      ${preview.rules.length ? html`<ul>${preview.rules.map((x) => html`<li><${Badge} s=${x.kind} /> ${x.text}</li>`)}</ul>` : null}</div>` : null}
  </${Form}>`;
}
