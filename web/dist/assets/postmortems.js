// Postmortem drafts: written by the agent from an incident's records when
// it resolves, each fact cited to its record. A person edits the draft
// (it is a knowledge document) and publishes it. The organization's
// template (postmortem_template.js) names the sections drafts are written under.

import { html, mount, useState, useLoad, Loaded, Button, Badge, Page, ErrorLine, when, pj } from './ui.js';
import { PostmortemTemplate } from './postmortem_template.js';

export function render(view, ctx) { mount(view, html`<${Postmortems} ctx=${ctx} />`); }

function Postmortems({ ctx }) {
  const role = ((ctx && ctx.app.orgs.find((o) => o.current)) || {}).role;
  const r = useLoad((signal) => pj('/api/postmortems?limit=100', { signal }));
  const [open, setOpen] = useState(null);
  return html`<${Page} title="Postmortems" id="postmortems-page">
    <p class="muted">When an incident is resolved, the agent drafts its postmortem from what the platform recorded. Every [label] cites a record; citations to anything else are removed.</p>
    <${Loaded} r=${r} isEmpty=${(d) => d.items.length === 0} empty="No postmortems yet: they are drafted when incidents resolve.">${(d) => html`<ul class="list" id="postmortems-list">
      ${d.items.map((p) => html`<li data-incident-id=${p.incident_id}><button type="button" class="link" onClick=${() => setOpen(p.incident_id)}>${p.document}</button>
        <${Badge} s=${p.status} /> <span class="muted">${p.cited.length} cited record(s)${p.invalid_citations.length ? ', ' + p.invalid_citations.length + ' removed' : ''} · ${when(p.updated_at)}</span>
        · <a href=${'/incidents/' + p.incident_id} data-link>incident</a></li>`)}</ul>`}</${Loaded}>
    ${open ? html`<${Draft} id=${open} onChange=${r.reload} />` : null}
    <${PostmortemTemplate} canWrite=${role === 'owner' || role === 'admin'} />
  </${Page}>`;
}

function Draft({ id, onChange }) {
  const r = useLoad((signal) => pj('/api/postmortems/' + id, { signal }), [id]);
  const [text, setText] = useState(null);
  const [err, setErr] = useState(null);
  async function save(p) {
    setErr(null);
    try {
      await pj('/api/knowledge/documents/by-name?collection=' + p.collection + '&name=' + encodeURIComponent(p.document), { method: 'PUT', body: { content: text } });
      r.reload();
    } catch (e) { setErr(e); }
  }
  return html`<${Loaded} r=${r}>${(p) => html`<section class="card" id="postmortem-draft" aria-labelledby="pm-draft-title">
    <h2 id="pm-draft-title">${p.document} <${Badge} s=${p.status} /></h2>
    ${p.error ? html`<p class="error">${p.error}</p>` : null}
    ${p.invalid_citations.length ? html`<p class="muted" id="pm-invalid">Removed citations to nothing recorded: ${p.invalid_citations.join(', ')}</p>` : null}
    <label>Markdown<textarea id="postmortem-text" class="mono" rows="24" readonly=${p.status === 'published'} value=${text ?? p.markdown} onInput=${(e) => setText(e.target.value)}></textarea></label>
    <div class="actions">${p.status === 'draft' ? html`
      <button type="button" disabled=${text === null} onClick=${() => save(p)}>Save edits</button>
      <${Button} id="postmortem-publish" onClick=${async () => { if (text !== null) await save(p); await pj('/api/postmortems/' + id + '/publish', { method: 'POST' }); setText(null); r.reload(); onChange(); }}>Publish</${Button}>
      <${Button} class="secondary" confirm="Redraft from the records? Your edits are replaced." onClick=${async () => { await pj('/api/postmortems/' + id + '/draft', { method: 'POST' }); setText(null); r.reload(); }}>Redraft</${Button}>` : null}</div>
    <${ErrorLine} error=${err} /></section>`}</${Loaded}>`;
}
