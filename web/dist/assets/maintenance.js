// Maintenance windows: planned quiet periods. Matching alerts are stored
// but not dispatched (suppress) or dispatched to a run that may only read
// (observe); each held-back event names its window in its dispatch record.

import { html, mount, useLoad, Loaded, Form, Field, Button, Badge, Page, when, pj } from './ui.js';

export function render(view) { mount(view, html`<${Windows} />`); }

function labels(s) {
  const out = {};
  for (const part of (s || '').split(',').map((x) => x.trim()).filter(Boolean)) {
    const i = part.indexOf('=');
    if (i < 1) throw new Error('Labels are name=glob pairs separated by commas: ' + part);
    out[part.slice(0, i).trim()] = part.slice(i + 1).trim();
  }
  return out;
}

// ended is the window's body with the current occurrence over: a one-off
// window ends now, a recurring one is switched off.
function ended(w) {
  const body = { name: w.name, mode: w.mode, match_labels: w.match_labels, match_sources: w.match_sources };
  if (w.schedule) return { ...body, schedule: w.schedule, timezone: w.timezone, duration_seconds: w.duration_seconds, enabled: false };
  return { ...body, starts_at: w.starts_at, ends_at: new Date().toISOString() };
}

function Windows() {
  const r = useLoad((signal) => pj('/api/maintenance-windows', { signal }));
  async function create(d) {
    const body = { name: d.name, mode: d.mode, match_labels: labels(d.labels), match_sources: (d.sources || '').split(',').map((x) => x.trim()).filter(Boolean) };
    if (d.kind === 'recurring') Object.assign(body, { schedule: d.schedule, timezone: d.timezone || 'UTC', duration_seconds: Number(d.duration_minutes) * 60 });
    else Object.assign(body, { starts_at: new Date(d.starts_at).toISOString(), ends_at: new Date(d.ends_at).toISOString() });
    await pj('/api/maintenance-windows', { method: 'POST', body });
    r.reload();
  }
  return html`<${Page} title="Maintenance windows" id="windows-page">
    <p class="muted">While a window is active, alerts it matches are kept but start nothing (suppress), or start a run that may only read (observe).</p>
    <${Loaded} r=${r} isEmpty=${(d) => d.items.length === 0} empty="No maintenance windows.">${(d) => html`<table id="windows-table">
      <thead><tr><th scope="col">Window</th><th scope="col">When</th><th scope="col">Matches</th><th scope="col">Mode</th><th scope="col">Now</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
      <tbody>${d.items.map((w) => html`<tr data-window-id=${w.id}><td><strong>${w.name}</strong></td>
        <td>${w.schedule ? w.schedule + ' (' + w.timezone + ') for ' + Math.round(w.duration_seconds / 60) + ' min' : when(w.starts_at) + ' – ' + when(w.ends_at)}
          ${w.next_start ? html`<div class="muted">next ${when(w.next_start)}</div>` : null}</td>
        <td>${(w.match_sources || []).join(', ') || 'any source'}; ${Object.entries(w.match_labels || {}).map(([k, v]) => k + '=' + v).join(', ') || 'any labels'}</td>
        <td>${w.mode}</td>
        <td>${w.active ? html`<${Badge} s="active" /> <span class="muted">until ${when(w.active_until)}</span>` : html`<${Badge} s=${w.enabled ? 'inactive' : 'disabled'} />`}</td>
        <td>${w.active ? html`<${Button} class="secondary window-end" onClick=${async () => { await pj('/api/maintenance-windows/' + w.id, { method: 'PUT', body: ended(w) }); r.reload(); }}>End now<span class="visually-hidden"> ${w.name}</span></${Button}>` : null}
          <${Button} class="danger" confirm=${'Delete the window ' + w.name + '?'} onClick=${async () => { await pj('/api/maintenance-windows/' + w.id, { method: 'DELETE' }); r.reload(); }}>Delete<span class="visually-hidden"> ${w.name}</span></${Button}></td></tr>`)}</tbody></table>`}</${Loaded}>
    <details><summary>New window</summary><${Form} id="window-create" label="New maintenance window" reset onSubmit=${create}>
      <${Field} label="Name" name="name" required maxlength="200" placeholder="database upgrade" />
      <label>Kind <select name="kind"><option value="once">once</option><option value="recurring">recurring</option></select></label>
      <${Field} label="Starts" name="starts_at" type="datetime-local" />
      <${Field} label="Ends" name="ends_at" type="datetime-local" />
      <${Field} label="Cron of each start (recurring)" name="schedule" placeholder="0 2 * * 6" />
      <${Field} label="Time zone (recurring)" name="timezone" placeholder="Europe/Berlin" />
      <${Field} label="Duration in minutes (recurring)" name="duration_minutes" type="number" min="1" value="120" />
      <${Field} label="Sources (optional)" name="sources" placeholder="alertmanager, grafana" />
      <${Field} label="Labels (optional)" name="labels" placeholder="cluster=prod-*, service=db" />
      <label>Mode <select name="mode"><option value="suppress">suppress: store, start nothing</option><option value="observe">observe: a read-only run</option></select></label>
      <button type="submit">Create window</button></${Form}></details>
  </${Page}>`;
}
