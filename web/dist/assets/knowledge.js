// Knowledge: browse, search, upload, edit and delete runbooks, facts and
// incident write-ups; the memories the agent keeps, corrected or forgotten;
// the index's health (is it current, does search find things).

import { html, mount, useState, useLoad, Loaded, Form, Field, Select, Button, Tabs, when, api, pj } from './ui.js';

export function render(view) { mount(view, html`<${Knowledge} />`); }

const collections = [['runbooks', 'Runbooks'], ['facts', 'Facts'], ['incidents', 'Incidents']];
const docPath = (d) => '/api/knowledge/documents/by-name?' + new URLSearchParams({ collection: d.collection, name: d.name, scope: d.scope || 'project' });

function Knowledge() {
  const [tab, setTab] = useState('documents');
  const Panel = { documents: Documents, search: Search, memories: Memories, health: Health }[tab];
  return html`<div class="page" id="knowledge-page"><h1>Knowledge</h1>
    <${Tabs} label="Knowledge" current=${tab} onChange=${setTab} tabs=${[{ id: 'documents', label: 'Documents' }, { id: 'search', label: 'Search' }, { id: 'memories', label: 'Memories' }, { id: 'health', label: 'Index health' }]} />
    <div role="tabpanel" id="tabpanel" aria-labelledby=${'tab-' + tab}><${Panel} /></div></div>`;
}

function Documents() {
  const [coll, setColl] = useState('');
  const [open, setOpen] = useState(null);
  // Memories are files too; they have their own tab.
  const r = useLoad((signal) => pj('/api/knowledge/documents?limit=200' + (coll ? '&collection=' + coll : ''), { signal })
    .then((d) => ({ ...d, items: d.items.filter((x) => x.collection !== 'memories') })), [coll]);
  async function upload(d) {
    let content = d.content;
    if (d.file) content = await d.file.text();
    const name = d.name || (d.file ? d.file.name : '');
    await pj('/api/knowledge/documents', { method: 'POST', body: { collection: d.collection, name, content, scope: d.scope } });
    r.reload();
  }
  return html`<section aria-label="Documents">
    <div class="filters"><label class="inline">Collection <select value=${coll} onChange=${(e) => setColl(e.target.value)}><option value="">all</option>${collections.map(([v, t]) => html`<option value=${v}>${t}</option>`)}</select></label>
      <${Button} id="knowledge-sync" class="secondary" onClick=${async () => { await pj('/api/knowledge/sync', { method: 'POST' }); r.reload(); }}>Re-read the files on disk</${Button}></div>
    <${Loaded} r=${r} isEmpty=${(d) => d.items.length === 0} empty="No documents yet. Upload a runbook below.">${(d) => html`<table id="documents-table"><thead><tr><th scope="col">Document</th><th scope="col">Collection</th><th scope="col">Scope</th><th scope="col">Modified</th><th scope="col"><span class="visually-hidden">Open</span></th></tr></thead>
      <tbody>${d.items.map((x) => html`<tr><td>${x.title || x.name}<br /><span class="muted">${x.name}</span></td><td>${x.collection}</td><td>${x.scope}</td><td>${when(x.modified_at)}</td>
        <td><button type="button" class="secondary" onClick=${() => setOpen(x)}>Open<span class="visually-hidden"> ${x.name}</span></button></td></tr>`)}</tbody></table>`}</${Loaded}>
    ${open ? html`<${Editor} doc=${open} onDone=${() => { setOpen(null); r.reload(); }} />` : null}
    <details><summary>Upload a document</summary><${Form} id="document-upload" label="Upload a document" reset onSubmit=${upload}>
      <div class="grid2"><${Select} label="Collection" name="collection" options=${collections} /><${Select} label="Scope" name="scope" options=${[['project', 'This project'], ['org', 'Whole organization']]} /></div>
      <${Field} label="Name" name="name" maxlength="255" placeholder="disk-pressure.md" hint="Defaults to the file's name." />
      <label>Markdown or text file<input type="file" name="file" accept=".md,.markdown,.txt,text/markdown,text/plain" /></label>
      <label>Or paste the content<textarea name="content" rows="6"></textarea></label>
      <button type="submit">Upload</button></${Form}></details></section>`;
}

function Editor({ doc, onDone }) {
  const r = useLoad((signal) => pj(docPath(doc), { signal }), [doc.name, doc.collection]);
  return html`<section class="card" id="document-editor" aria-label=${'Edit ' + doc.name}><${Loaded} r=${r}>${(d) => html`
    <h2>${d.title || d.name}</h2><p class="muted">${d.collection} · ${d.scope} · ${d.size} bytes</p>
    <${Form} id="document-edit" label="Edit document" onSubmit=${async (v) => { await pj(docPath(d), { method: 'PUT', body: { content: v.content } }); onDone(); }}>
      <label>Content<textarea name="content" rows="16" class="mono" defaultValue=${d.content || ''}></textarea></label>
      <div class="actions"><button type="submit">Save</button><button type="button" class="secondary" onClick=${onDone}>Close</button>
        <${Button} class="danger" confirm=${'Delete ' + d.name + '?'} onClick=${async () => { await pj(docPath(d), { method: 'DELETE' }); onDone(); }}>Delete</${Button}></div></${Form}>`}</${Loaded}></section>`;
}

function Search() {
  const [q, setQ] = useState('');
  const r = useLoad((signal) => (q ? pj('/api/knowledge/search?' + new URLSearchParams({ q, limit: '20' }), { signal }) : Promise.resolve(null)), [q]);
  return html`<section aria-label="Search"><form class="filters" role="search" onSubmit=${(e) => { e.preventDefault(); setQ(e.currentTarget.elements.q.value.trim()); }}>
      <label class="inline">Search <input type="search" name="q" required /></label><button type="submit">Search</button></form>
    ${q ? html`<${Loaded} r=${r} isEmpty=${(d) => !d || d.items.length === 0} empty="Nothing found.">${(d) => html`<ol id="search-results">${d.items.map((h) => html`<li class="card"><strong>${h.title || h.name}</strong>${h.heading ? ' › ' + h.heading : ''}
      <span class="muted"> ${h.collection} · score ${h.score.toFixed(2)}</span><p>${h.snippet}</p></li>`)}</ol>`}</${Loaded}>` : null}</section>`;
}

function Memories() {
  const r = useLoad((signal) => pj('/api/memories?limit=100', { signal }));
  const [editing, setEditing] = useState(null);
  return html`<section aria-label="Memories"><p class="muted">What the agent learned and keeps between sessions. Correct what is wrong, forget what no longer holds.</p>
    <${Loaded} r=${r} isEmpty=${(d) => d.items.length === 0} empty="No memories yet.">${(d) => html`<ul id="memories-list" class="plain">${d.items.map((m) => html`<li class="card" data-memory-id=${m.id}>
      ${editing === m.id ? html`<${MemoryEditor} m=${m} onDone=${() => { setEditing(null); r.reload(); }} />` : html`
      <strong>${m.title || m.key}</strong> <span class="muted">${m.scope} · ${when(m.updated_at)}</span>
      <p>${m.text}</p>${m.tags?.length ? html`<p class="muted">Tags: ${m.tags.join(', ')}</p>` : null}
      <div class="actions"><button type="button" class="secondary memory-edit" onClick=${() => setEditing(m.id)}>Edit<span class="visually-hidden"> ${m.title || m.key}</span></button>
      <${Button} class="danger" confirm="Forget this memory?" onClick=${async () => { await pj('/api/memories/' + m.id, { method: 'DELETE' }); r.reload(); }}>Forget<span class="visually-hidden"> ${m.title || m.key}</span></${Button}></div>`}</li>`)}</ul>`}</${Loaded}></section>`;
}

// MemoryEditor corrects a memory in place (PATCH /api/memories/{id}).
function MemoryEditor({ m, onDone }) {
  return html`<${Form} id="memory-edit" label=${'Edit ' + (m.title || m.key)} onSubmit=${async (d) => {
    await pj('/api/memories/' + m.id, { method: 'PATCH', body: { title: d.title.trim(), text: d.text, tags: d.tags.split(',').map((x) => x.trim()).filter(Boolean) } }); onDone(); }}>
    <p class="muted">Key <code>${m.key}</code> · ${m.scope}</p>
    <${Field} label="Title" name="title" maxlength="200" defaultValue=${m.title || ''} />
    <label>Text<textarea name="text" rows="4" required maxlength="65536" defaultValue=${m.text}></textarea></label>
    <${Field} label="Tags (comma separated)" name="tags" defaultValue=${(m.tags || []).join(', ')} />
    <div class="actions"><button type="submit">Save memory</button><button type="button" class="secondary" onClick=${onDone}>Cancel</button></div></${Form}>`;
}

// Health: is the index current and does search find things (GET
// /api/observability/rag over the last 24 hours).
function Health() {
  const r = useLoad((signal) => api('/api/observability/rag?hours=24', { signal }));
  const ms = (v) => (v ? v.toFixed(1) + ' ms' : '—');
  return html`<section aria-label="Index health" id="rag-health"><${Loaded} r=${r}>${(o) => html`
    <ul class="tiles" aria-label="The index">
      <li class="tile"><span class="tile-value">${o.index.documents}</span><span class="tile-label">documents (${o.index.org_wide_documents} org-wide)</span></li>
      <li class="tile"><span class="tile-value">${o.index.chunks}</span><span class="tile-label">indexed chunks</span></li>
      <li class="tile"><span class="tile-value">${o.index.pending}</span><span class="tile-label">changed files not indexed yet</span></li>
      <li class="tile"><span class="tile-value">${o.index.last_indexed ? when(o.index.last_indexed) : 'never'}</span><span class="tile-label">last indexed</span></li>
      <li class="tile"><span class="tile-value">${bytes(o.index.size_bytes)}</span><span class="tile-label">index on disk (all organizations)</span></li></ul>
    ${Object.keys(o.index.by_collection || {}).length ? html`<table id="rag-collections"><caption>Documents by collection</caption><thead><tr><th scope="col">Collection</th><th scope="col" class="num">Documents</th></tr></thead>
      <tbody>${Object.entries(o.index.by_collection).map(([k, v]) => html`<tr><td>${k}</td><td class="num">${v}</td></tr>`)}</tbody></table>` : null}
    <h2>Searches, last ${o.hours} hours</h2>
    <ul class="tiles" aria-label="Search activity">
      <li class="tile"><span class="tile-value">${o.search.searches}</span><span class="tile-label">searches</span></li>
      <li class="tile"><span class="tile-value">${o.search.zero_results}</span><span class="tile-label">found nothing</span></li>
      <li class="tile"><span class="tile-value">${ms(o.search.latency_p50_ms)}</span><span class="tile-label">median time</span></li>
      <li class="tile"><span class="tile-value">${ms(o.search.latency_p95_ms)}</span><span class="tile-label">95th percentile</span></li></ul>
    ${o.search.zero_result_queries?.length ? html`<h3>Asked for and not found: a runbook to write?</h3><table id="rag-zero"><thead><tr><th scope="col">Query</th><th scope="col" class="num">Times</th><th scope="col">Last</th></tr></thead>
      <tbody>${o.search.zero_result_queries.map((z) => html`<tr><td>${z.text}</td><td class="num">${z.count}</td><td>${when(z.last)}</td></tr>`)}</tbody></table>`
      : html`<p class="muted">Every search of the window found something.</p>`}`}</${Loaded}></section>`;
}

function bytes(n) {
  if (!n) return '0 B';
  const u = ['B', 'KB', 'MB', 'GB'];
  const i = Math.min(u.length - 1, Math.floor(Math.log(n) / Math.log(1024)));
  return (n / 1024 ** i).toFixed(i ? 1 : 0) + ' ' + u[i];
}
