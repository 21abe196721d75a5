// The organizations a person belongs to (Organization page, tab
// "Organizations"): each with its slug, their role and when it was made;
// create one (the creator is its owner), switch to one, leave one. The
// current organization cannot be left from inside it: switch first, so
// the session never acts in an org it no longer belongs to.

import { html, useState, useLoad, Loaded, Form, Field, Button, Badge, when, api } from './ui.js';
import { setProject } from './api.js';

// switchOrg moves the session to org id and redraws the console there.
export async function switchOrg(ctx, id) {
  await api('/api/auth/switch-org/' + id, { method: 'POST' });
  setProject('');
  await ctx.loadContext();
  ctx.reload();
}

export function OrgList({ ctx }) {
  const r = useLoad((signal) => api('/api/organizations', { signal }));
  const [msg, setMsg] = useState('');
  const role = (id) => (ctx.app.orgs.find((o) => o.id === id) || {}).role || '';
  const current = (ctx.app.orgs.find((o) => o.current) || {}).id;
  async function create(d) {
    const o = await api('/api/organizations', { method: 'POST', body: { name: d.name } });
    await ctx.loadContext();
    setMsg('Created ' + o.name + '. Switch to it to add projects and invite people.');
    r.reload();
  }
  async function leave(o) {
    await api('/api/organizations/' + o.id + '/leave', { method: 'POST' });
    await ctx.loadContext();
    setMsg('You left ' + o.name + '.');
    r.reload();
  }
  return html`<section aria-labelledby="orgs-title"><h2 id="orgs-title">Your organizations</h2>
    <p class="muted">Each organization has its own projects, members, keys and bill. The header's organization menu switches too.</p>
    <p role="status" id="orgs-msg">${msg}</p>
    <${Loaded} r=${r}>${(orgs) => html`<div class="table-wrap"><table id="orgs-table" tabindex="0"><thead><tr><th scope="col">Name</th><th scope="col">Your role</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
      <tbody>${orgs.map((o) => html`<tr data-org-id=${o.id}><td><strong>${o.name}</strong> ${o.personal ? html`<${Badge} s="personal" />` : null}<br /><span class="muted">${o.slug}</span></td>
        <td>${role(o.id) || '—'}</td><td>${when(o.created_at)}</td>
        <td>${o.id === current ? html`<${Badge} s="current" />` : html`<div class="actions">
          <${Button} class="secondary switch" onClick=${() => switchOrg(ctx, o.id)}>Switch<span class="visually-hidden"> to ${o.name}</span></${Button}>
          <${Button} class="danger leave" confirm=${'Leave ' + o.name + '? You lose access to its projects, and your API keys there are revoked.'} onClick=${() => leave(o)}>Leave<span class="visually-hidden"> ${o.name}</span></${Button}></div>`}</td></tr>`)}</tbody></table></div>`}</${Loaded}>
    <details><summary>Create an organization</summary><${Form} id="org-create" label="Create an organization" reset onSubmit=${create}>
      <${Field} label="Name" name="name" required maxlength="120" placeholder="Platform team" hint="You become its owner; your session stays here until you switch." />
      <button type="submit">Create organization</button></${Form}></details></section>`;
}
