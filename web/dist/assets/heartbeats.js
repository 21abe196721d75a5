// Heartbeat checks: dead-man's switches for cron jobs and backups. Create
// one (its ping URL is shown once: it carries the secret), see status,
// deadline, last ping and badge, pause or delete.

import { html, mount, useState, useLoad, Loaded, Form, Field, Button, Badge, Copyable, Page, when, pj } from './ui.js';

export function render(view) { mount(view, html`<${Heartbeats} />`); }

// abs makes the server's path (no --base-url set) a URL a job can call.
const abs = (u) => (u && u.startsWith('/') ? location.origin + u : u);

function Heartbeats() {
  const r = useLoad((signal) => pj('/api/heartbeats', { signal }));
  const [made, setMade] = useState(null);
  const [shown, setShown] = useState(null);
  async function create(d) {
    const body = { name: d.name, grace_seconds: Number(d.grace_minutes) * 60 };
    if (d.kind === 'cron') Object.assign(body, { schedule: d.schedule, timezone: d.timezone || 'UTC' });
    else body.period_seconds = Number(d.period_minutes) * 60;
    const made = await pj('/api/heartbeats', { method: 'POST', body });
    setMade({ ...made, ping_url: abs(made.ping_url) });
    r.reload();
  }
  return html`<${Page} title="Heartbeat checks" id="heartbeats-page">
    <p class="muted">A job pings its check's URL when it succeeds (append /start before it runs and /fail when it fails). A ping that does not come within the schedule plus the grace time, or a fail ping, opens one incident.</p>
    ${made ? html`<div class="card secret-once" id="heartbeat-made"><h3>Check ${made.name} created</h3>
      <${Copyable} label="Ping URL (shown once: it carries the secret)" id="heartbeat-ping-url" value=${made.ping_url} />
      <p class="muted">For example: <code>curl -fsS -m 10 --retry 3 ${made.ping_url}</code></p>
      <button type="button" class="secondary" onClick=${() => setMade(null)}>I have copied it</button></div>` : null}
    <${Loaded} r=${r} isEmpty=${(d) => d.items.length === 0} empty="No heartbeat checks yet.">${(d) => html`<table id="heartbeats-table">
      <thead><tr><th scope="col">Check</th><th scope="col">Status</th><th scope="col">Schedule</th><th scope="col">Last ping</th><th scope="col">Deadline</th><th scope="col">Badge</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
      <tbody>${d.items.map((c) => html`<tr data-check-id=${c.id}><td><strong>${c.name}</strong>${c.misses ? html`<div class="muted">${c.misses} miss(es)</div>` : null}</td>
        <td><${Badge} s=${c.enabled ? c.status : 'paused'} />${c.incident_id ? html` <a href=${'/incidents/' + c.incident_id} data-link>incident</a>` : null}</td>
        <td>${c.schedule ? c.schedule + ' (' + c.timezone + ')' : 'every ' + Math.round(c.period_seconds / 60) + ' min'}<div class="muted">grace ${Math.round(c.grace_seconds / 60)} min</div></td>
        <td>${c.last_ping_at ? when(c.last_ping_at) + ' (' + c.last_ping_kind + ')' : 'never'}${c.last_duration_ms != null ? html`<div class="muted">ran ${(c.last_duration_ms / 1000).toFixed(1)} s</div>` : null}</td>
        <td>${when(c.deadline_at)}</td>
        <td><img src=${c.badge_url} alt=${'badge of ' + c.name} height="20" /></td>
        <td><button type="button" class="secondary pings-show" onClick=${() => setShown(c.id)}>Pings<span class="visually-hidden"> of ${c.name}</span></button>
          <${Button} class="secondary" onClick=${async () => { await pj('/api/heartbeats/' + c.id, { method: 'PATCH', body: { enabled: !c.enabled } }); r.reload(); }}>${c.enabled ? 'Pause' : 'Resume'}<span class="visually-hidden"> ${c.name}</span></${Button}>
          <${Button} class="danger" confirm=${'Delete the check ' + c.name + '?'} onClick=${async () => { await pj('/api/heartbeats/' + c.id, { method: 'DELETE' }); r.reload(); }}>Delete<span class="visually-hidden"> ${c.name}</span></${Button}></td></tr>`)}</tbody></table>`}</${Loaded}>
    ${shown ? html`<${Pings} id=${shown} />` : null}
    <details open=${!made}><summary>New check</summary><${Form} id="heartbeat-create" label="New heartbeat check" reset onSubmit=${create}>
      <${Field} label="Name" name="name" required maxlength="200" placeholder="nightly backup" />
      <label>Expected <select name="kind"><option value="period">every N minutes</option><option value="cron">on a cron schedule</option></select></label>
      <${Field} label="Period (minutes)" name="period_minutes" type="number" min="1" value="60" />
      <${Field} label="Cron schedule" name="schedule" placeholder="30 2 * * *" hint="Used when 'on a cron schedule' is chosen." />
      <${Field} label="Time zone" name="timezone" placeholder="UTC" />
      <${Field} label="Grace (minutes)" name="grace_minutes" type="number" min="1" value="5" required />
      <button type="submit">Create check</button></${Form}></details>
  </${Page}>`;
}

// Pings lists a check's latest pings (kind, duration, the miss a fail opened).
function Pings({ id }) {
  const r = useLoad((signal) => pj('/api/heartbeats/' + id, { signal }), [id]);
  return html`<${Loaded} r=${r}>${(c) => html`<section class="card" id="heartbeat-pings" aria-label=${'Pings of ' + c.name}>
    <h3>Pings of ${c.name}</h3>
    ${c.pings.length ? html`<table><thead><tr><th scope="col">When</th><th scope="col">Kind</th><th scope="col">Duration</th><th scope="col">Miss</th></tr></thead>
      <tbody>${c.pings.map((p) => html`<tr><td>${when(p.at)}</td><td><${Badge} s=${p.kind} /></td><td>${p.duration_ms != null ? (p.duration_ms / 1000).toFixed(1) + ' s' : '—'}</td>
        <td>${p.miss || '—'}</td></tr>`)}</tbody></table>` : html`<p class="empty">No pings yet.</p>`}</section>`}</${Loaded}>`;
}
