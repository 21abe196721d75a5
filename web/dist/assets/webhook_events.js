// A webhook's events: filters, the inspector (headers, body when kept,
// verification, what it dispatched), replay of one or of a selection (≤ 50).

import { html, useState, useLoad, Loaded, Button, Badge, Link, ErrorLine, when, pj } from './ui.js';

const statuses = ['', 'received', 'dispatched', 'no_match', 'approval_pending', 'correlated', 'skipped', 'suppressed', 'failed'];

export function Events({ taskId, tick }) {
  const [status, setStatus] = useState('');
  const [type, setType] = useState('');
  const [open, setOpen] = useState(null);
  const [picked, setPicked] = useState(new Set());
  const [msg, setMsg] = useState('');
  const base = '/api/tasks/' + taskId + '/webhook/events';
  const r = useLoad((signal) => {
    const p = new URLSearchParams({ limit: '50' });
    if (status) p.set('status', status);
    if (type.trim()) p.set('type', type.trim());
    return pj(base + '?' + p, { signal });
  }, [taskId, status, type, tick]);
  function pick(id, on) {
    const n = new Set(picked);
    if (on) n.add(id); else n.delete(id);
    setPicked(n);
  }
  async function replayPicked() {
    const out = await pj(base + '/replay', { method: 'POST', body: { event_ids: [...picked].slice(0, 50) } });
    setMsg('Replayed ' + out.items.length + ' event' + (out.items.length === 1 ? '' : 's') + '.');
    setPicked(new Set()); r.reload();
  }
  return html`<section class="card" id="webhook-events" aria-labelledby="ev-title">
    <header class="row"><h2 id="ev-title">Events</h2><div class="actions"><button type="button" class="secondary" onClick=${r.reload}>Refresh</button>
      <${Button} class="danger" confirm="Delete every stored event of this webhook?" onClick=${async () => { const o = await pj(base, { method: 'DELETE' }); setMsg('Deleted ' + (o.deleted ?? 'the') + ' events.'); r.reload(); }}>Purge events</${Button}></div></header>
    <div class="filters">
      <label class="inline">Status <select value=${status} onChange=${(e) => setStatus(e.target.value)}>${statuses.map((s) => html`<option value=${s}>${s || 'any'}</option>`)}</select></label>
      <label class="inline">Type <input type="search" value=${type} placeholder="alertmanager.firing" onChange=${(e) => setType(e.target.value)} /></label>
      <${Button} onClick=${replayPicked} class="secondary" id="replay-selected">Replay selected (${picked.size})</${Button}>
    </div>
    <p role="status">${msg}</p>
    <${Loaded} r=${r} isEmpty=${(d) => d.items.length === 0} empty="No events yet. Send a test delivery above.">${(page) => html`
      <table id="events-table"><caption class="muted">${page.total} event${page.total === 1 ? '' : 's'}</caption>
        <thead><tr><th scope="col"><span class="visually-hidden">Select</span></th><th scope="col">Received</th><th scope="col">Type</th><th scope="col">Status</th><th scope="col">Verification</th><th scope="col"><span class="visually-hidden">Inspect</span></th></tr></thead>
        <tbody>${page.items.map((e) => html`<tr data-event-id=${e.id}>
          <td><input type="checkbox" aria-label=${'Select event ' + e.id} checked=${picked.has(e.id)} disabled=${!picked.has(e.id) && picked.size >= 50} onChange=${(x) => pick(e.id, x.target.checked)} /></td>
          <td>${when(e.received_at)}</td><td>${e.type}${e.test ? html` <span class="badge">test</span>` : null}${e.replay_of ? html` <span class="badge">replay</span>` : null}</td>
          <td><${Badge} s=${e.status} /></td><td>${e.verification}</td>
          <td><button type="button" class="secondary inspect" aria-expanded=${open === e.id ? 'true' : 'false'} onClick=${() => setOpen(open === e.id ? null : e.id)}>Inspect</button></td></tr>`)}
        </tbody></table>`}</${Loaded}>
    ${open ? html`<${Inspector} base=${base} id=${open} onReplayed=${(m) => { setMsg(m); r.reload(); }} />` : null}
  </section>`;
}

function Inspector({ base, id, onReplayed }) {
  const r = useLoad((signal) => pj(base + '/' + id, { signal }), [id]);
  return html`<article class="card inspector" id="event-inspector" aria-label="Event details"><${Loaded} r=${r}>${(e) => html`
    <header class="row"><h3>${e.type}</h3><${Badge} s=${e.status} /></header>
    <dl class="facts"><dt>Received</dt><dd>${when(e.received_at)}</dd><dt>Verification</dt><dd>${e.verification}</dd>
      <dt>Size</dt><dd>${e.body_size} bytes</dd><dt>Dispatched</dt><dd>${when(e.dispatched_at) || '—'}</dd>
      ${e.idempotency_key ? html`<dt>Idempotency key</dt><dd>${e.idempotency_key}</dd>` : null}</dl>
    ${e.error ? html`<${ErrorLine} error=${e.error} />` : null}
    <h4>What it dispatched</h4>
    ${(e.dispatch || []).length ? html`<ul class="dispatch">${e.dispatch.map((d) => html`<li>${d.kind} <${Badge} s=${d.status} /> ${d.reason || ''}
        ${(d.kind === 'run' || d.kind === 'session') && d.id ? html` <${Link} href=${'/sessions/' + d.id}>session</${Link}>` : null}
        ${d.kind === 'approval' ? html` <${Link} href="/approvals">approval</${Link}>` : null}
        ${d.kind === 'window' ? html` <${Link} href="/maintenance">maintenance windows</${Link}>` : null}</li>`)}</ul>` : html`<p class="muted">Nothing.</p>`}
    <h4>Headers</h4><pre tabindex="0">${Object.entries(e.headers || {}).map(([k, v]) => k + ': ' + v).join('\n') || '—'}</pre>
    <h4>Body</h4>${e.body_kept && e.body != null ? html`<pre class="event-body" tabindex="0">${pretty(e.body)}</pre>` : html`<p class="muted">Not kept (metadata only or past retention).</p>`}
    <${Button} onClick=${async () => { const o = await pj(base + '/' + id + '/replay', { method: 'POST' }); onReplayed('Replayed as ' + (o.id || o.event_id || 'a new event') + '.'); }}>Replay this event</${Button}>`}</${Loaded}></article>`;
}

function pretty(s) {
  try { return JSON.stringify(JSON.parse(s), null, 2); } catch { return s; }
}
