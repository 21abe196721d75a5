// Organization settings: members and roles, invitations, API keys (secret
// shown once), org rules, retention, branding, the org's LLM key, org
// secrets, usage, and the list of one's organizations (create, switch, leave).

import { html, mount, useState, useLoad, Loaded, Form, Field, Select, Button, Badge, Tabs, Copyable, Bar, when, money, api } from './ui.js';
import { ModelSettings } from './settings_models.js';
import { OrgList } from './org_list.js';
import { OrgRules } from './org_rules.js';
import { Retention, Branding } from './org_retention.js';

export function render(view, ctx) { mount(view, html`<${OrgSettings} ctx=${ctx} />`); }

const tabs = [{ id: 'members', label: 'Members' }, { id: 'invitations', label: 'Invitations' }, { id: 'keys', label: 'API keys' },
  { id: 'rules', label: 'Rules' }, { id: 'retention', label: 'Retention' }, { id: 'branding', label: 'Branding' },
  { id: 'llm', label: 'LLM key' }, { id: 'secrets', label: 'Org secrets' }, { id: 'usage', label: 'Usage' }, { id: 'orgs', label: 'Organizations' }];

function OrgSettings({ ctx }) {
  const [tab, setTab] = useState(new URLSearchParams(location.search).get('tab') || ctx.tab || 'members');
  const org = ctx.app.orgs.find((o) => o.current) || {};
  function change(id) { setTab(id); const alias = { members: '/members', keys: '/api-keys' }[id]; history.replaceState(null, '', alias || '/organization?tab=' + id); ctx.markNav?.(alias || '/organization'); }
  const Panel = { members: Members, invitations: Invitations, keys: Keys, rules: OrgRules, retention: Retention, branding: Branding,
    llm: LLMKey, secrets: OrgSecrets, usage: Usage, orgs: OrgList }[tab] || Members;
  const [renaming, setRenaming] = useState(false);
  async function rename(d) {
    await api('/api/organizations/' + org.id, { method: 'PATCH', body: { name: d.name } });
    await ctx.loadContext(); setRenaming(false);
  }
  return html`<div class="page" id="org-settings"><div class="heading"><h1>${org.name || 'Organization'}</h1>
      ${['owner', 'admin'].includes(org.role) && !renaming ? html`<button type="button" class="secondary" onClick=${() => setRenaming(true)}>Rename</button>` : null}</div>
    ${renaming ? html`<${Form} id="org-rename" label="Rename the organization" onSubmit=${rename}><div class="filters">
      <label class="inline">Name <input name="name" required maxlength="120" defaultValue=${org.name} /></label><button type="submit">Save</button>
      <button type="button" class="secondary" onClick=${() => setRenaming(false)}>Cancel</button></div></${Form}>` : null}
    <p class="muted">Your role: ${org.role}</p>
    <${Tabs} tabs=${tabs} current=${tab} onChange=${change} label="Organization settings" />
    <div role="tabpanel" id="tabpanel" aria-labelledby=${'tab-' + tab}><${Panel} org=${org} ctx=${ctx} /></div></div>`;
}

const roles = ['owner', 'admin', 'member', 'viewer'];

function Members({ org, ctx }) {
  const base = '/api/organizations/' + org.id + '/members';
  const r = useLoad((signal) => api(base, { signal }), [org.id]);
  return html`<section aria-labelledby="om-title"><h2 id="om-title">Members</h2>
    <${Loaded} r=${r}>${(ms) => html`<table id="org-members"><thead><tr><th scope="col">Person</th><th scope="col">Role</th><th scope="col">Joined</th><th scope="col"><span class="visually-hidden">Remove</span></th></tr></thead>
      <tbody>${ms.map((m) => html`<tr><td>${m.name || m.email}<br /><span class="muted">${m.email}</span></td>
        <td><select aria-label=${'Role of ' + m.email} value=${m.role} disabled=${m.user_id === ctx.app.user.id} onChange=${async (e) => { await api(base + '/' + m.user_id, { method: 'PATCH', body: { role: e.target.value } }); r.reload(); }}>
          ${roles.map((x) => html`<option value=${x}>${x}</option>`)}</select></td><td>${when(m.joined_at)}</td>
        <td>${m.user_id === ctx.app.user.id ? html`<span class="muted">you</span>` : html`<${Button} class="danger" confirm=${'Remove ' + m.email + '? Their API keys here are revoked.'} onClick=${async () => { await api(base + '/' + m.user_id, { method: 'DELETE' }); r.reload(); }}>Remove<span class="visually-hidden"> ${m.email}</span></${Button}>`}</td></tr>`)}</tbody></table>`}</${Loaded}></section>`;
}

function Invitations({ org }) {
  const base = '/api/organizations/' + org.id + '/invitations';
  const r = useLoad((signal) => api(base, { signal }), [org.id]);
  const [msg, setMsg] = useState('');
  return html`<section aria-labelledby="inv-title"><h2 id="inv-title">Invitations</h2>
    <${Form} id="invite-form" label="Invite someone" reset onSubmit=${async (d) => { const i = await api(base, { method: 'POST', body: d }); setMsg(i.detail || 'Invitation sent to ' + i.email + '.'); r.reload(); }}>
      <div class="filters"><label class="inline">Email <input name="email" type="email" required autocomplete="off" /></label>
        <label class="inline">Role <select name="role">${['member', 'viewer', 'admin', 'owner'].map((x) => html`<option value=${x}>${x}</option>`)}</select></label>
        <button type="submit">Invite</button></div></${Form}>
    <p role="status" id="invite-msg">${msg}</p>
    <${Loaded} r=${r} isEmpty=${(d) => (d.items || d).length === 0} empty="No invitations.">${(d) => html`<table id="invitations-table"><thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Status</th><th scope="col">Expires</th><th scope="col"><span class="visually-hidden">Revoke</span></th></tr></thead>
      <tbody>${(d.items || d).map((i) => html`<tr><td>${i.email}</td><td>${i.role}</td><td><${Badge} s=${i.status} /></td><td>${when(i.expires_at)}</td>
        <td>${i.status === 'pending' ? html`<${Button} class="danger" onClick=${async () => { await api(base + '/' + i.id, { method: 'DELETE' }); r.reload(); }}>Revoke<span class="visually-hidden"> ${i.email}</span></${Button}>` : null}</td></tr>`)}</tbody></table>`}</${Loaded}></section>`;
}

const scopeGroups = ['org:read', 'org:write', 'org:admin', 'projects:read', 'projects:write', 'projects:admin', 'tasks:read', 'tasks:write', 'tasks:run',
  'sessions:read', 'sessions:write', 'approvals:write', 'webhooks:read', 'webhooks:write', 'knowledge:read', 'knowledge:write', 'secrets:read', 'secrets:write',
  'audit:read', 'usage:read', 'rules:write'];

function Keys({ ctx }) {
  const r = useLoad((signal) => api('/api/api-keys', { signal }));
  const [made, setMade] = useState(null);
  async function create(d) {
    const body = { name: d.name, scopes: d.scopes, projects: d.projects };
    if (d.expires_at) body.expires_at = new Date(d.expires_at + 'T23:59:59Z').toISOString();
    setMade(await api('/api/api-keys', { method: 'POST', body })); r.reload();
  }
  return html`<section aria-labelledby="keys-title"><h2 id="keys-title">API keys</h2>
    <p class="muted">A key acts as you, never further: its scopes, your role and the project list are intersected on every request.</p>
    ${made ? html`<div class="card secret-once" id="api-key-made"><h3>Key ${made.name} created</h3>
      <${Copyable} label="API key (shown once: copy it now)" id="api-key-secret" value=${made.key} />
      <button type="button" class="secondary" onClick=${() => setMade(null)}>I have copied it</button></div>` : null}
    <${Loaded} r=${r} isEmpty=${(d) => d.length === 0} empty="No API keys.">${(keys) => html`<table id="api-keys-table"><thead><tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Scopes</th><th scope="col">Last used</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Revoke</span></th></tr></thead>
      <tbody>${keys.map((k) => html`<tr><td>${k.name}<br /><span class="muted">${k.creator_email}</span></td><td><code>${k.prefix}</code></td><td>${k.scopes.join(', ')}${k.projects?.length ? html`<br /><span class="muted">${k.projects.length} project(s)</span>` : null}</td>
        <td>${when(k.last_used_at) || 'never'}</td><td><${Badge} s=${k.status} /></td>
        <td>${k.status === 'active' ? html`<${Button} class="danger" confirm=${'Revoke ' + k.name + '?'} onClick=${async () => { await api('/api/api-keys/' + k.id, { method: 'DELETE' }); r.reload(); }}>Revoke<span class="visually-hidden"> ${k.name}</span></${Button}>` : null}</td></tr>`)}</tbody></table>`}</${Loaded}>
    <details open=${!made}><summary>Create an API key</summary>
      <${Form} id="api-key-form" label="Create an API key" reset onSubmit=${create}>
        <${Field} label="Name" name="name" required maxlength="120" placeholder="CI deploys" />
        <label>Scopes<select name="scopes" multiple required size="8">${scopeGroups.map((s) => html`<option value=${s} selected=${s.endsWith(':read')}>${s}</option>`)}</select></label>
        <label>Projects (none selected: every project you can see)<select name="projects" multiple size="4">${ctx.app.projects.map((p) => html`<option value=${p.id}>${p.name}</option>`)}</select></label>
        <${Field} label="Expires (optional)" name="expires_at" type="date" />
        <button type="submit">Create key</button></${Form}></details></section>`;
}

function LLMKey({ org }) {
  const base = '/api/organizations/' + org.id + '/llm-key';
  const r = useLoad((signal) => api(base, { signal }), [org.id]);
  return html`<section aria-labelledby="llm-title"><h2 id="llm-title">LLM key</h2>
    <p class="muted">The organization's own key overrides the server's. It is stored in the vault and never shown again. Owners only.</p>
    <${Loaded} r=${r}>${(k) => html`<dl class="facts"><dt>Configured</dt><dd>${k.configured ? 'yes' : 'no (the server\'s key is used)'}</dd>
      ${k.configured ? html`<dt>Provider</dt><dd>${k.provider}</dd><dt>Model</dt><dd>${k.model || '—'}</dd><dt>Base URL</dt><dd>${k.base_url || '—'}</dd><dt>Last used</dt><dd>${when(k.last_used_at) || 'never'}</dd>` : null}</dl>
      <${Form} id="llm-key-form" label="Set the LLM key" reset onSubmit=${async (d) => { const b = { provider: d.provider, api_key: d.api_key }; if (d.model) b.model = d.model; if (d.base_url) b.base_url = d.base_url; await api(base, { method: 'PUT', body: b }); r.reload(); }}>
        <div class="grid2"><${Select} label="Provider" name="provider" options=${[['openai', 'OpenAI-compatible'], ['anthropic', 'Anthropic']]} />
        <${Field} label="API key" name="api_key" type="password" required autocomplete="off" />
        <${Field} label="Model (optional)" name="model" /><${Field} label="Base URL (optional)" name="base_url" type="url" /></div>
        <button type="submit">Save key</button>
        ${k.configured ? html`<${Button} class="danger" confirm="Clear the org's LLM key?" onClick=${async () => { await api(base, { method: 'DELETE' }); r.reload(); }}>Clear key</${Button}>` : null}</${Form}>`}</${Loaded}></section>
    ${org.role === 'owner' ? html`<${ModelSettings} org=${org} />` : null}`;
}

function OrgSecrets() {
  const r = useLoad((signal) => api('/api/org-secrets', { signal }));
  return html`<section aria-labelledby="os-title"><h2 id="os-title">Org secrets</h2><p class="muted">Shared by every project; write-only.</p>
    <${Loaded} r=${r} isEmpty=${(d) => d.items.length === 0} empty="No org secrets.">${(d) => html`<ul>${d.items.map((s) => html`<li><code>${s.name}</code> <span class="muted">updated ${when(s.updated_at)}</span>
      <${Button} class="danger" confirm=${'Delete ' + s.name + '?'} onClick=${async () => { await api('/api/org-secrets/' + encodeURIComponent(s.name), { method: 'DELETE' }); r.reload(); }}>Delete<span class="visually-hidden"> ${s.name}</span></${Button}></li>`)}</ul>`}</${Loaded}>
    <${Form} id="org-secret-put" label="Set an org secret" reset onSubmit=${async (d) => { await api('/api/org-secrets/' + encodeURIComponent(d.name), { method: 'PUT', body: { value: d.value } }); r.reload(); }}>
      <div class="grid2"><${Field} label="Name" name="name" required pattern="[A-Z][A-Z0-9_]*" maxlength="64" /><${Field} label="Value" name="value" type="password" required autocomplete="off" /></div>
      <button type="submit">Save secret</button></${Form}></section>`;
}

function Usage() {
  const r = useLoad((signal) => Promise.all([api('/api/dashboard/org-summary', { signal }), api('/api/org-budget', { signal })]));
  return html`<section aria-labelledby="usage-title"><h2 id="usage-title">Usage</h2>
    <${Loaded} r=${r}>${([s, b]) => html`<dl class="facts"><dt>Cost, 30 days</dt><dd>${money(s.cost_30d)}</dd><dt>Sessions, 30 days</dt><dd>${s.sessions_30d}</dd>
        <dt>Tokens, 30 days</dt><dd>${(s.tokens_30d || 0).toLocaleString()}</dd><dt>Projects</dt><dd>${s.projects}</dd></dl>
      <div class="card"><h3>Organization budget</h3><${Bar} label="Today" value=${b.org.spend.today} max=${b.org.caps.daily_cost_usd} />
        <${Bar} label="This month" value=${b.org.spend.this_month} max=${b.org.caps.monthly_cost_usd} /></div>
      <table id="org-usage"><caption class="muted">Last 30 days by project</caption><thead><tr><th scope="col">Project</th><th scope="col">Sessions</th><th scope="col">Tokens</th><th scope="col">Cost</th></tr></thead>
      <tbody>${s.by_project.map((p) => html`<tr><td>${p.name}</td><td class="num">${p.sessions_30d}</td><td class="num">${(p.tokens_30d || 0).toLocaleString()}</td><td class="num">${money(p.cost_30d)}</td></tr>`)}</tbody></table>`}</${Loaded}></section>`;
}
