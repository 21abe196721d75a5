// Audit log: the organization's hash-chained events with filters, chain
// verification and export (CSV or JSON Lines, downloaded with the cookie).

import { html, mount, useState, useLoad, Loaded, Button, Badge, when, api } from './ui.js';

export function render(view) { mount(view, html`<${Audit} />`); }

const filters = [['action', 'Action', 'member.invited'], ['actor', 'Actor (user id)', ''], ['target_type', 'Target type', 'api_key'], ['target_id', 'Target id', '']];

function Audit() {
  const [f, setF] = useState({});
  const [offset, setOffset] = useState(0);
  const [verify, setVerify] = useState(null);
  const [open, setOpen] = useState(null);
  const query = () => {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(f)) if (v) p.set(k, k === 'from' || k === 'to' ? new Date(v).toISOString() : v);
    return p;
  };
  const r = useLoad((signal) => { const p = query(); p.set('limit', '50'); p.set('offset', String(offset)); return api('/api/audit-logs?' + p, { signal }); }, [JSON.stringify(f), offset]);
  function submit(e) {
    e.preventDefault();
    const d = {};
    for (const el of e.currentTarget.elements) if (el.name) d[el.name] = el.value.trim();
    setOffset(0); setF(d);
  }
  const exportHref = (fmt) => { const p = query(); p.set('format', fmt); return '/api/audit-logs/export?' + p; };
  return html`<div class="page" id="audit-page"><div class="heading"><h1>Audit log</h1>
      <div class="actions"><${Button} id="audit-verify" class="secondary" onClick=${async () => setVerify(await api('/api/audit-logs/verify'))}>Verify chain</${Button}>
        <a class="button secondary" href=${exportHref('csv')} download="audit.csv">Export CSV</a><a class="button secondary" href=${exportHref('jsonl')} download="audit.jsonl">Export JSONL</a></div></div>
    ${verify ? html`<p role="status" id="audit-verify-result" class=${verify.ok ? 'ok' : 'error'}>${verify.ok ? 'Chain intact: ' + verify.checked + ' events checked.' : 'Chain broken at event ' + verify.broken_seq + ': ' + verify.broken_reason}</p>` : null}
    <form class="filters" role="search" id="audit-filters" onSubmit=${submit}>
      ${filters.map(([k, l, ph]) => html`<label class="inline">${l} <input name=${k} placeholder=${ph} /></label>`)}
      <label class="inline">Outcome <select name="outcome">${['', 'success', 'failure', 'denied'].map((o) => html`<option value=${o}>${o || 'any'}</option>`)}</select></label>
      <label class="inline">From <input type="datetime-local" name="from" /></label><label class="inline">To <input type="datetime-local" name="to" /></label>
      <button type="submit">Filter</button></form>
    <${Loaded} r=${r} isEmpty=${(d) => d.items.length === 0} empty="No events match.">${(page) => html`
      <table id="audit-table"><caption class="muted">${page.total} event${page.total === 1 ? '' : 's'}</caption>
        <thead><tr><th scope="col">#</th><th scope="col">When</th><th scope="col">Action</th><th scope="col">Actor</th><th scope="col">Target</th><th scope="col">Outcome</th><th scope="col"><span class="visually-hidden">Details</span></th></tr></thead>
        <tbody>${page.items.map((e) => html`<tr data-seq=${e.seq}><td class="num">${e.seq}</td><td>${when(e.created_at)}</td><td><code>${e.action}</code></td>
          <td>${e.actor_type}${e.actor_key_id ? ' (key)' : ''}<br /><span class="muted">${e.ip}</span></td><td>${e.target_type} <span class="muted">${e.target_id}</span></td><td><${Badge} s=${e.outcome} /></td>
          <td><button type="button" class="secondary" aria-expanded=${open === e.id ? 'true' : 'false'} onClick=${() => setOpen(open === e.id ? null : e.id)}>Details<span class="visually-hidden"> of event ${e.seq}</span></button></td></tr>
          ${open === e.id ? html`<tr><td colspan="7"><pre tabindex="0">${JSON.stringify({ detail: e.detail, user_agent: e.user_agent, hash: e.hash, prev_hash: e.prev_hash }, null, 2)}</pre></td></tr>` : null}`)}</tbody></table>
      <div class="actions"><button type="button" class="secondary" disabled=${offset === 0} onClick=${() => setOffset(Math.max(0, offset - 50))}>Newer</button>
        <button type="button" class="secondary" disabled=${offset + 50 >= page.total} onClick=${() => setOffset(offset + 50)}>Older</button></div>`}</${Loaded}></div>`;
}
