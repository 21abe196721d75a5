// What the organization keeps and for how long (Organization page, tab
// "Retention"), and how it presents itself (tab "Branding"). Retention
// fields left empty follow the server's defaults (its flags), 0 keeps
// forever; the page says which value comes from where.

import { html, useState, useLoad, Loaded, Form, Field, api } from './ui.js';

const fields = [
  ['transcripts_days', 'Transcripts and events of finished sessions (days)'],
  ['sessions_days', 'Finished sessions themselves (days)'],
  ['audit_days', 'Audit events before they move to the archive (days)'],
];

const days = (n) => (n === 0 ? 'forever' : n + ' days');

export function Retention({ org }) {
  const url = '/api/organizations/' + org.id + '/retention';
  const r = useLoad((signal) => api(url, { signal }), [org.id]);
  const [msg, setMsg] = useState('');
  const canWrite = ['owner', 'admin'].includes(org.role);
  async function save(d) {
    const b = {};
    for (const [k] of fields) b[k] = d[k] === null || d[k] === undefined ? null : d[k];
    await api(url, { method: 'PUT', body: b });
    setMsg('Saved. The hourly retention job applies it.');
    r.reload();
  }
  return html`<section aria-labelledby="ret-title"><h2 id="ret-title">Retention</h2>
    <${Loaded} r=${r}>${(x) => html`<dl class="facts" id="retention-facts">${fields.map(([k, label]) => html`<dt>${label.replace(/ \(days\)$/, '')}</dt>
        <dd data-field=${k}>${days(x[k])} <span class="muted">(${x.source[k] === 'org' ? 'set here' : 'server default'})</span></dd>`)}
      <dt>Mail files in the outbox</dt><dd>${days(x.outbox_days)} <span class="muted">(server-wide)</span></dd></dl>
      <p class="muted">${x.note}.</p>
      ${canWrite ? html`<${Form} id="retention-form" label="Set the retention" onSubmit=${save}>
        <p class="muted">Empty: the server's default. 0: keep forever. Up to 36500.</p>
        <div class="grid2">${fields.map(([k, label]) => html`<${Field} label=${label} name=${k} type="number" step="1"
          defaultValue=${x.source[k] === 'org' ? x[k] : ''} placeholder=${x.source[k] === 'org' ? '' : 'default: ' + days(x[k])} />`)}</div>
        <button type="submit">Save retention</button></${Form}><p role="status" id="retention-msg">${msg}</p>`
        : html`<p class="muted">An owner or admin can change it.</p>`}`}</${Loaded}></section>`;
}

const brandFields = [
  ['display_name', 'Display name', 'Acme Operations'],
  ['logo_url', 'Logo URL (https:// or a path on this server)', 'https://acme.example/logo.svg'],
  ['primary_color', 'Primary colour (#rrggbb)', '#1f6feb'],
  ['accent_color', 'Accent colour (#rrggbb)', '#d29922'],
];

export function Branding({ org, ctx }) {
  const [msg, setMsg] = useState('');
  // The saved branding comes back in the answer; the org prop is the one
  // the page was drawn with.
  const [b, setB] = useState(org.branding || {});
  const canWrite = ['owner', 'admin'].includes(org.role);
  async function save(d) {
    const body = {};
    for (const [k] of brandFields) body[k] = (d[k] || '').trim();
    const o = await api('/api/organizations/' + org.id + '/branding', { method: 'PATCH', body });
    setB(o.branding || {});
    await ctx.loadContext();
    setMsg('Branding saved.');
  }
  return html`<section aria-labelledby="brand-title"><h2 id="brand-title">Branding</h2>
    <p class="muted">Cosmetic: how ${org.name} names and colours itself where the platform shows it. An empty field clears it.</p>
    <div class="row brand-preview" id="branding-preview">${['primary_color', 'accent_color'].map((k) => b[k] ? html`<span class="swatch" title=${k} style=${{ background: b[k] }}></span><code>${b[k]}</code>` : null)}
      <strong>${b.display_name || org.name}</strong></div>
    ${canWrite ? html`<${Form} id="branding-form" label="Branding" onSubmit=${save}>
      <div class="grid2">${brandFields.map(([k, label, ph]) => html`<${Field} label=${label} name=${k} defaultValue=${b[k] || ''} placeholder=${ph} maxlength=${k === 'logo_url' ? 2048 : 120} autocomplete="off" />`)}</div>
      <button type="submit">Save branding</button></${Form}><p role="status" id="branding-msg">${msg}</p>`
      : html`<p class="muted">An owner or admin can change it.</p>`}</section>`;
}
