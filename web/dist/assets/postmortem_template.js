// The organization's postmortem template (Postmortems page): the section
// headings every draft is written under, in order. Each heading is its own
// field (sections.N), so the server's 422 for one heading sits beside it.

import { html, useState, useLoad, Loaded, Form, api } from './ui.js';

let serial = 0;
const rowsOf = (sections) => sections.map((v) => ({ k: ++serial, v }));

export function PostmortemTemplate({ canWrite }) {
  const r = useLoad((signal) => api('/api/postmortem-template', { signal }));
  return html`<details class="card" id="pm-template"><summary>Template: the sections every draft is written under</summary>
    <${Loaded} r=${r}>${(t) => html`<${Editor} key=${t.sections.join('\n')} sections=${t.sections} canWrite=${canWrite} onSaved=${r.reload} />`}</${Loaded}></details>`;
}

function Editor({ sections, canWrite, onSaved }) {
  const [rows, setRows] = useState(() => rowsOf(sections));
  const [msg, setMsg] = useState('');
  const set = (i, v) => setRows(rows.map((x, j) => (j === i ? { ...x, v } : x)));
  const move = (i, d) => { const n = rows.slice(); [n[i], n[i + d]] = [n[i + d], n[i]]; setRows(n); };
  async function save() {
    setMsg('');
    await api('/api/postmortem-template', { method: 'PUT', body: { sections: rows.map((x) => x.v) } });
    setMsg('Saved: the next draft uses these sections.');
    onSaved();
  }
  if (!canWrite) return html`<ol id="pm-sections">${sections.map((s) => html`<li>${s}</li>`)}</ol><p class="muted">An owner or admin can change the template.</p>`;
  return html`<${Form} id="pm-template-form" label="Postmortem template" onSubmit=${save}>
    <p class="muted">The organization's template, for the drafts of every project. One heading per section, up to 20; no # (the draft adds it).</p>
    <ol class="plain" id="pm-sections">${rows.map((x, i) => html`<li key=${x.k} class="filters">
      <label class="inline">Section ${i + 1} <input name=${'sections.' + i} value=${x.v} maxlength="100" required onInput=${(e) => set(i, e.target.value)} /></label>
      <button type="button" class="secondary" disabled=${i === 0} onClick=${() => move(i, -1)}>Up<span class="visually-hidden"> ${x.v}</span></button>
      <button type="button" class="secondary" disabled=${i === rows.length - 1} onClick=${() => move(i, 1)}>Down<span class="visually-hidden"> ${x.v}</span></button>
      <button type="button" class="danger remove" disabled=${rows.length === 1} onClick=${() => setRows(rows.filter((_, j) => j !== i))}>Remove<span class="visually-hidden"> ${x.v}</span></button></li>`)}</ol>
    <div class="actions"><button type="button" class="secondary" id="pm-section-add" disabled=${rows.length >= 20} onClick=${() => setRows([...rows, { k: ++serial, v: '' }])}>Add a section</button>
      <button type="submit">Save template</button>
      <button type="button" class="secondary" onClick=${() => setRows(rowsOf(sections))}>Undo changes</button></div>
    <p role="status" id="pm-template-msg">${msg}</p></${Form}>`;
}
