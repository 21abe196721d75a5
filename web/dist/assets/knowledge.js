// Knowledge: browse, search, upload, edit and delete runbooks, facts and
// incident write-ups; the memories the agent keeps, and forgetting them.

import { html, mount, useState, useLoad, Loaded, Form, Field, Select, Button, Tabs, when, pj } from './ui.js';

export function render(view) { mount(view, html`<${Knowledge} />`); }

const collections = [['runbooks', 'Runbooks'], ['facts', 'Facts'], ['incidents', 'Incidents']];
const docPath = (d) => '/api/knowledge/documents/by-name?' + new URLSearchParams({ collection: d.collection, name: d.name, scope: d.scope || 'project' });

function Knowledge() {
  const [tab, setTab] = useState('documents');
  return html`<div class="page" id="knowledge-page"><h1>Knowledge</h1>
    <${Tabs} label="Knowledge" current=${tab} onChange=${setTab} tabs=${[{ id: 'documents', label: 'Documents' }, { id: 'search', label: 'Search' }, { id: 'memories', label: 'Memories' }]} />
    <div role="tabpanel" id="tabpanel" aria-labelledby=${'tab-' + tab}>${tab === 'documents' ? html`<${Documents} />` : tab === 'search' ? html`<${Search} />` : html`<${Memories} />`}</div></div>`;
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
  return html`<section aria-label="Memories"><p class="muted">What the agent learned and keeps between sessions. Forget what is wrong.</p>
    <${Loaded} r=${r} isEmpty=${(d) => d.items.length === 0} empty="No memories yet.">${(d) => html`<ul id="memories-list" class="plain">${d.items.map((m) => html`<li class="card"><strong>${m.title || m.key}</strong> <span class="muted">${m.scope} · ${when(m.updated_at)}</span>
      <p>${m.text}</p><${Button} class="danger" confirm="Forget this memory?" onClick=${async () => { await pj('/api/memories/' + m.id, { method: 'DELETE' }); r.reload(); }}>Forget<span class="visually-hidden"> ${m.title || m.key}</span></${Button}></li>`)}</ul>`}</${Loaded}></section>`;
}
