// Project settings: members and project roles, secrets (write-only), rules
// with the dry-run check, budgets with spend bars, monitoring integrations,
// the project's instructions to the agent and its feature switches.

import { html, mount, useState, useLoad, Loaded, Form, Field, Select, Button, Badge, Tabs, Bar, when, api, pj } from './ui.js';
import { currentProject } from './api.js';
import { Connectors } from './connectors.js';
import { CommandPolicy } from './command_policy.js';

export function render(view, ctx) { mount(view, html`<${ProjectSettings} ctx=${ctx} />`); }

const tabs = [{ id: 'members', label: 'Members' }, { id: 'secrets', label: 'Secrets' }, { id: 'rules', label: 'Rules' },
  { id: 'budget', label: 'Budget' }, { id: 'integrations', label: 'Integrations' }, { id: 'connectors', label: 'Connectors' }, { id: 'network', label: 'Network' }, { id: 'sandbox', label: 'Sandbox' },
  { id: 'agent', label: 'Agent' }, { id: 'features', label: 'Features' }];

function ProjectSettings({ ctx }) {
  const [tab, setTab] = useState(new URLSearchParams(location.search).get('tab') || ctx.tab || 'members');
  const project = ctx.app.projects.find((p) => p.id === currentProject()) || {};
  const org = ctx.app.orgs.find((o) => o.current) || {};
  function change(id) { setTab(id); const alias = { connectors: '/connectors', integrations: '/integrations' }[id]; history.replaceState(null, '', alias || '/settings?tab=' + id); ctx.markNav?.(alias || '/settings'); }
  const Panel = { members: Members, secrets: Secrets, rules: Rules, budget: Budget, integrations: Integrations, connectors: Connectors, network: Network, sandbox: SandboxProfile, agent: AgentSettings, features: FeatureFlags }[tab] || Members;
  return html`<div class="page" id="project-settings"><h1>Settings of ${project.name || 'the project'}</h1>
    <${Tabs} tabs=${tabs} current=${tab} onChange=${change} label="Project settings" />
    <div role="tabpanel" id="tabpanel" aria-labelledby=${'tab-' + tab}><${Panel} project=${project} org=${org} /></div></div>`;
}

function Members({ project, org }) {
  const base = '/api/projects/' + project.id + '/members';
  const r = useLoad((signal) => Promise.all([api(base, { signal }), api('/api/organizations/' + org.id + '/members', { signal })]), [project.id]);
  return html`<section aria-labelledby="pm-title"><h2 id="pm-title">Members</h2>
    <p class="muted">Org owners and admins see every project. Others see a project once they are added here.</p>
    <${Loaded} r=${r}>${([members, orgMembers]) => html`
      ${members.length === 0 ? html`<p class="empty">No explicit members.</p>` : html`<table id="project-members"><thead><tr><th scope="col">Person</th><th scope="col">Org role</th><th scope="col">Project role</th><th scope="col"><span class="visually-hidden">Remove</span></th></tr></thead>
      <tbody>${members.map((m) => html`<tr><td>${m.name || m.email}<br /><span class="muted">${m.email}</span></td><td>${m.org_role}</td>
        <td><select aria-label=${'Project role of ' + m.email} value=${m.role} onChange=${async (e) => { await api(base + '/' + m.user_id, { method: 'PATCH', body: { role: e.target.value } }); r.reload(); }}>
          ${['admin', 'member', 'viewer'].map((x) => html`<option value=${x}>${x}</option>`)}</select></td>
        <td><${Button} class="danger" confirm=${'Remove ' + m.email + ' from the project?'} onClick=${async () => { await api(base + '/' + m.user_id, { method: 'DELETE' }); r.reload(); }}>Remove</${Button}></td></tr>`)}</tbody></table>`}
      <${Form} id="project-member-add" label="Add a member" reset onSubmit=${async (d) => { await api(base, { method: 'POST', body: d }); r.reload(); }}>
        <div class="filters"><label class="inline">Person <select name="user_id" required>${orgMembers.filter((o) => !members.some((m) => m.user_id === o.user_id)).map((o) => html`<option value=${o.user_id}>${o.name ? o.name + ' <' + o.email + '>' : o.email}</option>`)}</select></label>
        <label class="inline">Role <select name="role">${['member', 'viewer', 'admin'].map((x) => html`<option value=${x}>${x}</option>`)}</select></label>
        <button type="submit">Add</button></div></${Form}>`}</${Loaded}></section>`;
}

function Secrets() {
  const r = useLoad((signal) => pj('/api/secrets', { signal }));
  return html`<section aria-labelledby="sec-title"><h2 id="sec-title">Secrets</h2>
    <p class="muted">Values are write-only: they are encrypted at rest, injected into commands by name and masked in every transcript.</p>
    <${Loaded} r=${r} isEmpty=${(d) => d.items.length === 0} empty="No secrets yet.">${(d) => html`<table id="secrets-table"><thead><tr><th scope="col">Name</th><th scope="col">Scope</th><th scope="col">Updated</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Delete</span></th></tr></thead>
      <tbody>${d.items.map((s) => html`<tr><td><code>${s.name}</code>${s.description ? html`<br /><span class="muted">${s.description}</span>` : null}</td><td>${s.scope}${s.overridden ? ' (overridden)' : ''}</td><td>${when(s.updated_at)}</td><td>${when(s.last_used_at) || 'never'}</td>
        <td>${s.scope === 'project' ? html`<${Button} class="danger" confirm=${'Delete secret ' + s.name + '?'} onClick=${async () => { await pj('/api/secrets/' + encodeURIComponent(s.name), { method: 'DELETE' }); r.reload(); }}>Delete<span class="visually-hidden"> ${s.name}</span></${Button}>` : null}</td></tr>`)}</tbody></table>`}</${Loaded}>
    <${Form} id="secret-put" label="Set a secret" reset onSubmit=${async (d) => { await pj('/api/secrets/' + encodeURIComponent(d.name), { method: 'PUT', body: { value: d.value, description: d.description } }); r.reload(); }}>
      <h3>Set a secret</h3>
      <${Field} label="Name" name="name" required pattern="[A-Z][A-Z0-9_]*" maxlength="64" placeholder="DB_PASSWORD" hint="Upper case letters, digits and underscores; an existing name is replaced." />
      <${Field} label="Value" name="value" type="password" required autocomplete="off" />
      <${Field} label="Description (optional)" name="description" maxlength="500" />
      <button type="submit">Save secret</button></${Form}></section>`;
}

export const ruleEffects = [['block', 'Block'], ['require_approval', 'Ask a person'], ['allow', 'Allow (pre-approve)'], ['obligation', 'Obligation']];

function Rules() {
  const r = useLoad((signal) => pj('/api/rules', { signal }));
  const [editing, setEditing] = useState(null);
  const [verdict, setVerdict] = useState(null);
  const save = (path, method) => async (d) => {
    await pj(path, { method, body: { kind: d.kind, effect: d.effect, tool: d.tool, match_type: d.match_type, pattern: d.pattern, description: d.description, enabled: d.enabled } });
    setEditing(null); r.reload();
  };
  return html`<section aria-labelledby="rules-title"><h2 id="rules-title">Rules</h2>
    <p class="muted">must_never rules block matching calls whatever the model says; must_always rules require or pre-approve them. Org rules apply to every project.</p>
    <${Loaded} r=${r} isEmpty=${(d) => d.items.length === 0} empty="No rules yet.">${(d) => html`<ul class="rules plain" id="rules-list">${d.items.map((x) => html`<li class="card rule" data-rule-id=${x.id}>
      ${editing === x.id ? html`<${RuleForm} id="rule-edit" rule=${x} submit="Save rule" onSubmit=${save('/api/rules/' + x.id, 'PATCH')} onCancel=${() => setEditing(null)} />` : html`
        <div class="row"><${Badge} s=${x.kind} /> <${Badge} s=${x.effect} /> <code>${x.tool || '*'}</code> ${x.match_type} <code class="rule-pattern">${x.pattern}</code> ${x.enabled ? null : html`<${Badge} s="disabled" />`}</div>
        ${x.description ? html`<p>${x.description}</p>` : null}<p class="muted">${x.scope === 'org' ? html`<a href="/organization?tab=rules" data-link>org rule</a>` : 'project rule'}${x.source_approval_id ? ', remembered from an approval' : ''} · ${when(x.updated_at)}</p>
        ${x.scope === 'project' ? html`<div class="actions"><button type="button" class="secondary edit" onClick=${() => setEditing(x.id)}>Edit<span class="visually-hidden"> rule ${x.pattern}</span></button>
          <${Button} class="danger" confirm="Delete this rule?" onClick=${async () => { await pj('/api/rules/' + x.id, { method: 'DELETE' }); r.reload(); }}>Delete<span class="visually-hidden"> rule ${x.pattern}</span></${Button}></div>` : null}`}
    </li>`)}</ul>`}</${Loaded}>
    <details><summary>Add a rule</summary><${RuleForm} id="rule-create" submit="Add rule" reset onSubmit=${save('/api/rules', 'POST')} /></details>
    <section class="card" aria-labelledby="dry-title"><h3 id="dry-title">Dry run</h3>
      <${Form} id="rule-evaluate" label="Check a command against the rules" onSubmit=${async (d) => setVerdict(await pj('/api/rules/evaluate', { method: 'POST', body: { tool: d.tool, arguments: { command: d.command, target: d.target || 'server' } } }))}>
        <div class="filters"><label class="inline">Tool <input name="tool" defaultValue="run_command" required /></label>
          <label class="inline">Command <input name="command" required placeholder="systemctl restart nginx" /></label>
          <label class="inline">Target <input name="target" placeholder="server" /></label><button type="submit">Check</button></div></${Form}>
      ${verdict ? html`<p role="status" id="rule-verdict"><${Badge} s=${verdict.verdict} /> ${verdict.reason}</p>` : null}</section>
    <${CommandPolicy} /></section>`;
}

export function RuleForm({ id, rule = {}, submit, onSubmit, onCancel, reset }) {
  return html`<${Form} id=${id} onSubmit=${onSubmit} label=${submit} reset=${reset}>
    <div class="grid2"><${Select} label="Kind" name="kind" defaultValue=${rule.kind || 'must_never'} options=${[['must_never', 'must_never'], ['must_always', 'must_always']]} />
    <${Select} label="Effect" name="effect" defaultValue=${rule.effect || 'block'} options=${ruleEffects} />
    <${Field} label="Tool (empty: any)" name="tool" defaultValue=${rule.tool || 'run_command'} maxlength="120" />
    <${Select} label="Match" name="match_type" defaultValue=${rule.match_type || 'glob'} options=${[['glob', 'glob on the command line'], ['regex', 'regex on the command line'],
      ['command', 'command (parsed, e.g. rm -rf *)'], ['effect', 'effect (e.g. deletes_data)']]} /></div>
    <${Field} label="Pattern" name="pattern" required defaultValue=${rule.pattern || ''} class="mono" maxlength="1000" placeholder="rm -rf *" />
    <${Field} label="Why (shown when it matches)" name="description" required defaultValue=${rule.description || ''} maxlength="500" placeholder="Never wipe a filesystem" />
    <label class="check"><input type="checkbox" name="enabled" defaultChecked=${rule.enabled !== false} /> Enabled</label>
    <div class="actions"><button type="submit">${submit}</button>${onCancel ? html`<button type="button" class="secondary" onClick=${onCancel}>Cancel</button>` : null}</div></${Form}>`;
}

function Budget() {
  const r = useLoad((signal) => pj('/api/budget', { signal }));
  return html`<section aria-labelledby="budget-title"><h2 id="budget-title">Budget</h2>
    <${Loaded} r=${r}>${(b) => html`${[['Project', b.project], ['Organization', b.org]].filter(([, x]) => x).map(([n, x]) => html`<div class="card budget">
      <h3>${n}</h3>
      <${Bar} label="Today" value=${x.spend.today} max=${x.caps.daily_cost_usd} />
      <${Bar} label="This month" value=${x.spend.this_month} max=${x.caps.monthly_cost_usd} />
      <p class="muted">Tokens per session: ${x.caps.session_tokens ? x.caps.session_tokens.toLocaleString() : 'no cap'}</p></div>`)}
      <${Form} id="budget-form" label="Project caps" onSubmit=${async (d) => { await pj('/api/budget', { method: 'PUT', body: d }); r.reload(); }}>
        <h3>Project caps (empty: no cap)</h3><div class="grid2">
        <${Field} label="Per day (USD)" name="daily_cost_usd" type="number" min="0" step="0.01" defaultValue=${b.project?.caps.daily_cost_usd ?? ''} />
        <${Field} label="Per month (USD)" name="monthly_cost_usd" type="number" min="0" step="0.01" defaultValue=${b.project?.caps.monthly_cost_usd ?? ''} />
        <${Field} label="Tokens per session" name="session_tokens" type="number" min="1" step="1" defaultValue=${b.project?.caps.session_tokens ?? ''} /></div>
        <button type="submit">Save caps</button></${Form}>`}</${Loaded}></section>`;
}

function Integrations() {
  const r = useLoad((signal) => pj('/api/integrations', { signal }));
  const [check, setCheck] = useState({});
  async function create(d) {
    const body = { kind: d.kind, name: d.name, base_url: d.base_url, auth_scheme: d.auth_scheme };
    if (d.auth_secret) body.auth_secret = d.auth_secret;
    if (d.org_header) body.org_header = d.org_header;
    await pj('/api/integrations', { method: 'POST', body }); r.reload();
  }
  return html`<section aria-labelledby="int-title"><h2 id="int-title">Integrations</h2>
    <p class="muted">The agent queries these monitoring systems with read-only tools. Credentials are project secrets, named here.</p>
    <${Loaded} r=${r} isEmpty=${(d) => d.items.length === 0} empty="No integrations yet.">${(d) => html`<table id="integrations-table"><thead><tr><th scope="col">Name</th><th scope="col">Kind</th><th scope="col">URL</th><th scope="col">State</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
      <tbody>${d.items.map((i) => html`<tr><td>${i.name}</td><td>${i.kind}</td><td><code>${i.base_url}</code></td><td><${Badge} s=${i.enabled ? 'enabled' : 'disabled'} /></td>
        <td><${Button} class="secondary check" onClick=${async () => { const o = await pj('/api/integrations/' + i.id + '/test', { method: 'POST' }); setCheck({ ...check, [i.id]: o }); }}>Test<span class="visually-hidden"> ${i.name}</span></${Button}>
          ${check[i.id] ? html`<p role="status" class=${check[i.id].ok ? 'check-result ok' : 'check-result error'}>${check[i.id].ok ? 'Reachable' : 'Not reachable'} (${check[i.id].latency_ms} ms): ${check[i.id].detail}</p>` : null}
          <${Button} class="secondary" onClick=${async () => { await pj('/api/integrations/' + i.id, { method: 'PATCH', body: { enabled: !i.enabled } }); r.reload(); }}>${i.enabled ? 'Disable' : 'Enable'}<span class="visually-hidden"> ${i.name}</span></${Button}>
          <${Button} class="danger" confirm=${'Remove ' + i.name + '?'} onClick=${async () => { await pj('/api/integrations/' + i.id, { method: 'DELETE' }); r.reload(); }}>Remove<span class="visually-hidden"> ${i.name}</span></${Button}></td></tr>`)}</tbody></table>`}</${Loaded}>
    <details><summary>Add an integration</summary><${Form} id="integration-create" label="Add an integration" reset onSubmit=${create}>
      <div class="grid2"><${Select} label="Kind" name="kind" options=${[['prometheus', 'Prometheus'], ['alertmanager', 'Alertmanager'], ['loki', 'Loki'], ['grafana', 'Grafana']]} />
      <${Field} label="Name" name="name" required maxlength="120" />
      <${Field} label="Base URL" name="base_url" type="url" required placeholder="http://prometheus:9090" />
      <${Select} label="Authentication" name="auth_scheme" options=${[['none', 'None'], ['bearer', 'Bearer token'], ['basic', 'Basic (user:password)']]} />
      <${Field} label="Secret holding the credential (its name, e.g. PROM_TOKEN)" name="auth_secret" pattern="[A-Z][A-Z0-9_]*" maxlength="64" autocomplete="off" />
      <${Field} label="Org header (Loki/Grafana tenant, optional)" name="org_header" maxlength="200" /></div>
      <button type="submit">Add integration</button></${Form}></details></section>`;
}

function Network() {
  const r = useLoad((signal) => pj('/api/http-allowlist', { signal }));
  const [msg, setMsg] = useState('');
  return html`<section aria-labelledby="net-title"><h2 id="net-title">Network</h2>
    <p class="muted">The agent's http_request tool never reaches private addresses unless they are listed here.</p>
    <${Loaded} r=${r}>${(a) => html`<${Form} id="allowlist-form" label="Private addresses the agent may reach" onSubmit=${async (d) => {
      await pj('/api/http-allowlist', { method: 'PUT', body: { entries: d.entries.split('\n').map((x) => x.trim()).filter(Boolean) } }); setMsg('Saved.'); r.reload(); }}>
      <label>One CIDR, address or host name per line<textarea name="entries" rows="6" class="mono" defaultValue=${(a.entries || []).join('\n')} placeholder="10.0.0.0/8"></textarea></label>
      <button type="submit">Save</button></${Form}><p role="status">${msg}</p>`}</${Loaded}></section>`;
}

// SandboxProfile: the paths approved commands may write (the kernel holds
// it; a connector host's --sandbox-profile may narrow it further).
function SandboxProfile() {
  const r = useLoad((signal) => pj('/api/sandbox-profile', { signal }));
  const [msg, setMsg] = useState('');
  return html`<section aria-labelledby="sandbox-title"><h2 id="sandbox-title">Sandbox</h2>
    <p class="muted">Approved commands run under the kernel's sandbox. With no paths listed they may write wherever the host's user may; with paths listed, only beneath them (and /dev/null and a private temp dir). Read-only commands stay read-only. A connector host's own profile can only narrow this.</p>
    <${Loaded} r=${r}>${(p) => html`<p id="sandbox-summary">${p.summary}</p><${Form} id="sandbox-profile-form" label="Paths approved commands may write" onSubmit=${async (d) => {
      await pj('/api/sandbox-profile', { method: 'PUT', body: { allow_paths: d.allow_paths.split('\n').map((x) => x.trim()).filter(Boolean) } }); setMsg('Saved.'); r.reload(); }}>
      <label>One absolute path per line (empty: no restriction)<textarea name="allow_paths" rows="5" class="mono" defaultValue=${(p.allow_paths || []).join('\n')} placeholder="/srv/app"></textarea></label>
      <button type="submit">Save</button></${Form}><p role="status">${msg}</p>`}</${Loaded}></section>`;
}

// AgentSettings: the project's own instructions to the agent (added after
// the platform's prompt, never replacing its rules or approvals) and the
// evidence pack's budget (GET and PUT /api/agent-settings).
function AgentSettings() {
  const r = useLoad((signal) => pj('/api/agent-settings', { signal }));
  const [msg, setMsg] = useState('');
  return html`<section aria-labelledby="agent-title"><h2 id="agent-title">Agent</h2>
    <p class="muted">What every run in this project should know: naming, where things live, who owns what. It is added after the platform's own prompt; rules and approvals still apply.</p>
    <${Loaded} r=${r}>${(a) => html`<${Form} id="agent-settings-form" label="Agent settings" onSubmit=${async (d) => {
      await pj('/api/agent-settings', { method: 'PUT', body: { instructions: d.instructions, evidence_budget_tokens: d.evidence_budget_tokens ?? 0 } }); setMsg('Saved.'); r.reload(); }}>
      <label>Project instructions<textarea name="instructions" rows="8" maxlength="20000" defaultValue=${a.instructions} placeholder="Production databases are db1 and db2; never restart them without the DBA on call."></textarea></label>
      <${Field} label="Evidence budget (tokens; empty or 0: the default, 8000)" name="evidence_budget_tokens" type="number" min="0" max="100000" step="1" defaultValue=${a.evidence_budget_tokens || ''} />
      <button type="submit">Save</button></${Form}>
      <p role="status" id="agent-settings-status">${msg || (a.updated_at ? 'Last changed ' + when(a.updated_at) + '.' : '')}</p>`}</${Loaded}></section>`;
}

// FeatureFlags: what is switched on for this project (GET …/feature-flags).
const flagNames = { agent_chat: 'Chat with the agent', tasks: 'Tasks', webhooks: 'Webhooks', mcp: 'MCP access for agents and IDEs', knowledge: 'Knowledge base', approvals: 'Approvals' };
function FeatureFlags({ project }) {
  const r = useLoad((signal) => api('/api/projects/' + project.id + '/feature-flags', { signal }), [project.id]);
  return html`<section aria-labelledby="flags-title"><h2 id="flags-title">Features</h2>
    <p class="muted">The parts of opsagent this project uses.</p>
    <${Loaded} r=${r}>${(f) => html`<table id="feature-flags"><thead><tr><th scope="col">Feature</th><th scope="col">State</th></tr></thead>
      <tbody>${Object.entries(f.flags).sort(([a], [b]) => a.localeCompare(b)).map(([k, on]) => html`<tr data-flag=${k}><td>${flagNames[k] || k}<br /><code class="muted">${k}</code></td><td><${Badge} s=${on ? 'enabled' : 'disabled'} /></td></tr>`)}</tbody></table>`}</${Loaded}></section>`;
}
