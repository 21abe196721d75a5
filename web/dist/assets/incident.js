// One incident: its alerts and timeline, the linked investigation, notes,
// acknowledge and resolve with a summary.

import { html, mount, useLoad, Loaded, Form, Button, Badge, Link, when, pj } from './ui.js';

export function render(view, ctx) { mount(view, html`<${Incident} id=${ctx.id} />`); }

function Incident({ id }) {
  const base = '/api/incidents/' + id;
  const r = useLoad((signal) => pj(base, { signal }), [id]);
  return html`<div class="page" id="incident-page"><p><${Link} href="/incidents">← Incidents</${Link}></p>
    <${Loaded} r=${r}>${(i) => html`
      <div class="heading"><h1>${i.title}</h1><${Badge} s=${i.status} /></div>
      <dl class="facts"><dt>Severity</dt><dd>${i.severity || '—'}</dd><dt>Source</dt><dd>${i.provider}</dd><dt>Alerts</dt><dd>${i.alert_count}</dd>
        <dt>Opened</dt><dd>${when(i.opened_at)}</dd><dt>Last alert</dt><dd>${when(i.last_alert_at)}</dd>
        ${i.acknowledged_at ? html`<dt>Acknowledged</dt><dd>${when(i.acknowledged_at)}</dd>` : null}${i.resolved_at ? html`<dt>Resolved</dt><dd>${when(i.resolved_at)}</dd>` : null}
        ${i.session_id ? html`<dt>Investigation</dt><dd><${Link} href=${'/sessions/' + i.session_id}>open the session</${Link}></dd>` : null}
        ${i.task_id ? html`<dt>Task</dt><dd><${Link} href=${'/webhooks/' + i.task_id}>its webhook</${Link}></dd>` : null}</dl>
      ${i.summary ? html`<section class="card"><h2>Summary</h2><p>${i.summary}</p></section>` : null}
      <div class="actions">${i.status === 'triggered' ? html`<${Button} id="incident-ack" onClick=${async () => { await pj(base + '/acknowledge', { method: 'POST' }); r.reload(); }}>Acknowledge</${Button}>` : null}</div>
      ${i.status !== 'resolved' ? html`<${Form} id="incident-resolve" label="Resolve" onSubmit=${async (d) => { await pj(base + '/resolve', { method: 'POST', body: d.summary ? { summary: d.summary } : {} }); r.reload(); }}>
        <label>Resolution summary (goes to the incidents knowledge)<textarea name="summary" rows="3" maxlength="4000"></textarea></label><button type="submit">Resolve</button></${Form}>` : null}
      <section class="card" aria-labelledby="tl-title"><h2 id="tl-title">Timeline</h2>
        ${i.timeline.length === 0 ? html`<p class="empty">Nothing yet.</p>` : html`<ol class="timeline" id="incident-timeline">${i.timeline.map((t) => html`<li><span class="muted">${when(t.at)}</span> <${Badge} s=${t.kind} /> ${t.text}
          ${(t.kind === 'session' || t.kind === 'skipped') && t.data?.session_id ? html` <${Link} href=${'/sessions/' + t.data.session_id}>run</${Link}>` : null}
          ${t.kind === 'alert' && t.data ? html`<details><summary>Alert</summary><pre tabindex="0">${JSON.stringify(t.data, null, 2)}</pre></details>` : null}</li>`)}</ol>`}
        <${Form} id="incident-note" label="Add a note" reset onSubmit=${async (d) => { await pj(base + '/notes', { method: 'POST', body: { text: d.text } }); r.reload(); }}>
          <label>Note<textarea name="text" rows="2" required maxlength="4000"></textarea></label><button type="submit">Add note</button></${Form}></section>`}</${Loaded}></div>`;
}
