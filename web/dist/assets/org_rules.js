// Org rules (Organization page, tab "Rules"): must_never / must_always
// rules enforced in every project of the organization, beside each
// project's own. Editing reads the rule afresh first, so the form starts
// from what the server holds now, not from a list loaded minutes ago.

import { html, useState, useLoad, Loaded, Button, Badge, Empty, when, api } from './ui.js';
import { RuleForm } from './settings_project.js';

const base = '/api/org-rules';

// body is what a rule form sends; the kind is fixed once a rule exists.
function body(d, withKind) {
  const b = { effect: d.effect, tool: d.tool, match_type: d.match_type, pattern: d.pattern, description: d.description, enabled: d.enabled };
  if (withKind) b.kind = d.kind;
  return b;
}

export function OrgRules({ org }) {
  const r = useLoad((signal) => api(base, { signal }), [org.id]);
  const [editing, setEditing] = useState(null);
  const canWrite = ['owner', 'admin'].includes(org.role);
  async function create(d) { await api(base, { method: 'POST', body: body(d, true) }); r.reload(); }
  async function save(d) { await api(base + '/' + editing.id, { method: 'PATCH', body: body(d, false) }); setEditing(null); r.reload(); }
  async function edit(id) { setEditing(await api(base + '/' + id)); }
  return html`<section aria-labelledby="org-rules-title"><h2 id="org-rules-title">Org rules</h2>
    <p class="muted">These apply to every project of ${org.name}, before the project's own rules. must_never blocks matching calls whatever the model says; must_always asks a person or pre-approves.</p>
    <${Loaded} r=${r} isEmpty=${(d) => d.items.length === 0} empty=${{ id: 'org-rules-empty', title: 'No org rules yet.', children: canWrite ? 'Add one below to hold every project to it.' : 'An owner or admin can add them.',
      cli: "curl -X POST $OPSAGENT_URL/api/org-rules -H 'Authorization: Bearer $KEY' \\\n  -d '{\"kind\":\"must_never\",\"tool\":\"run_command\",\"match_type\":\"command\",\"pattern\":\"rm -rf *\",\"description\":\"never wipe a filesystem\"}'" }}>${(d) => html`
      <ul class="rules plain" id="org-rules-list">${d.items.map((x) => html`<li class="card rule" data-rule-id=${x.id}>
        ${editing && editing.id === x.id ? html`<${RuleForm} id="org-rule-edit" rule=${editing} submit="Save rule" onSubmit=${save} onCancel=${() => setEditing(null)} />` : html`
          <div class="row"><${Badge} s=${x.kind} /> <${Badge} s=${x.effect} /> <code>${x.tool || '*'}</code> ${x.match_type || 'every call'} <code class="rule-pattern">${x.pattern}</code> ${x.enabled ? null : html`<${Badge} s="disabled" />`}</div>
          ${x.description ? html`<p>${x.description}</p>` : null}<p class="muted">updated ${when(x.updated_at)}</p>
          ${canWrite ? html`<div class="actions"><${Button} class="secondary edit" onClick=${() => edit(x.id)}>Edit<span class="visually-hidden"> rule ${x.pattern}</span></${Button}>
            <${Button} class="danger delete" confirm="Delete this org rule? Every project stops enforcing it." onClick=${async () => { await api(base + '/' + x.id, { method: 'DELETE' }); r.reload(); }}>Delete<span class="visually-hidden"> rule ${x.pattern}</span></${Button}></div>` : null}`}
      </li>`)}</ul>`}</${Loaded}>
    ${canWrite ? html`<details><summary>Add an org rule</summary><${RuleForm} id="org-rule-create" submit="Add org rule" reset onSubmit=${create} /></details>` : null}</section>`;
}
