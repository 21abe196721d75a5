// Connectors (project settings tab): enroll one (token and install command
// shown once), live status, labels and the server-side allow-list, edit
// them (connector_edit.js), rotate the token, revoke, delete; the
// project's command limits below.

import { html, useState, useLoad, Loaded, Form, Field, Button, Badge, Copyable, when, pj } from './ui.js';
import { ConnectorEdit, CommandLimits, labelsText, parseLabels, lines } from './connector_edit.js';

// A cluster connector (opsagent connector --kubernetes) shows its cluster, version and what its
// service account may do; a bad kubeconfig or token shows the cluster's refusal.
function kubeCell(k) {
  return html`<span class="kube-cluster">cluster ${k.cluster || '?'}</span> <span class="muted">${k.version || ''}</span>
    ${k.error ? html`<div class="error kube-error" role="alert">${k.error}</div>` : html`<div class="muted kube-verbs" title=${(k.verbs || []).join('\n')}>${(k.verbs || []).length} resources readable or writable</div>`}`;
}

export function Connectors() {
  const r = useLoad((signal) => pj('/api/connectors', { signal }));
  const [made, setMade] = useState(null);
  const [editing, setEditing] = useState(null);
  async function create(d) {
    setMade(await pj('/api/connectors', { method: 'POST', body: { name: d.name, labels: parseLabels(d.labels), allow_list: lines(d.allow_list) } }));
    r.reload();
  }
  return html`<section aria-labelledby="conn-title"><h2 id="conn-title">Connectors</h2>
    <p class="muted">A connector runs on a host you own and dials out to this server; the agent's run_command reaches the host by name or label. Nothing listens on the host.</p>
    ${made ? html`<div class="card secret-once" id="connector-made"><h3>Connector ${made.name} enrolled</h3>
      <${Copyable} label="Install command (shown once: it carries the token)" id="connector-install" value=${made.install_command} multiline />
      <button type="button" class="secondary" onClick=${() => setMade(null)}>I have copied it</button></div>` : null}
    <${Loaded} r=${r} isEmpty=${(d) => d.items.length === 0} empty="No connectors yet.">${(d) => html`<table id="connectors-table"><thead><tr><th scope="col">Name</th><th scope="col">Status</th><th scope="col">Host</th><th scope="col">Labels</th><th scope="col">Last seen</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
      <tbody>${d.items.map((x) => html`<tr data-connector-id=${x.id}><td><strong>${x.name}</strong>${x.allow_list?.length ? html`<div class="muted">${x.allow_list.length} allowed pattern(s)</div>` : null}</td>
        <td><${Badge} s=${x.status} /></td><td>${x.kind === 'kubernetes' ? kubeCell(x.kubernetes || {}) : html`${x.hostname ? x.hostname + ' (' + x.os + '/' + x.arch + ')' : '—'}<div class="muted">${x.version || ''} ${x.ip || ''}</div>`}${x.kind !== 'kubernetes' && x.sandbox_note ? html`<div class=${x.read_only_auto_allow ? 'muted sandbox-note' : 'sandbox-note warn'} title="What this host's kernel enforces on every command">Sandbox: ${x.sandbox_note}</div>` : null}${x.host_sandbox_profile ? html`<div class="muted host-profile" title="This host's own --sandbox-profile: it narrows the project's sandbox profile for every command here">Host profile: ${x.host_sandbox_summary}</div>` : null}</td>
        <td>${labelsText(x.labels) || '—'}</td><td>${when(x.last_seen) || 'never'}</td>
        <td>${x.status !== 'revoked' ? html`<button type="button" class="secondary edit" onClick=${() => setEditing(x.id)}>Edit<span class="visually-hidden"> ${x.name}</span></button>
          <${Button} class="secondary" confirm=${'Replace the token of ' + x.name + '? The host must be re-enrolled.'} onClick=${async () => { setMade(await pj('/api/connectors/' + x.id + '/rotate-token', { method: 'POST' })); r.reload(); }}>Rotate token<span class="visually-hidden"> ${x.name}</span></${Button}>
          <${Button} class="danger revoke" confirm=${'Revoke ' + x.name + '? Its connection drops at once.'} onClick=${async () => { await pj('/api/connectors/' + x.id + '/revoke', { method: 'POST' }); r.reload(); }}>Revoke<span class="visually-hidden"> ${x.name}</span></${Button}>`
          : html`<${Button} class="danger" confirm=${'Delete ' + x.name + '?'} onClick=${async () => { await pj('/api/connectors/' + x.id, { method: 'DELETE' }); r.reload(); }}>Delete<span class="visually-hidden"> ${x.name}</span></${Button}>`}</td></tr>
        ${editing === x.id ? html`<tr class="editing"><td colspan="6"><${ConnectorEdit} x=${x} onDone=${() => { setEditing(null); r.reload(); }} onCancel=${() => setEditing(null)} /></td></tr>` : null}`)}</tbody></table>`}</${Loaded}>
    <details open=${!made}><summary>Enroll a connector</summary><${Form} id="connector-create" label="Enroll a connector" reset onSubmit=${create}>
      <${Field} label="Name" name="name" required pattern="[a-z0-9][a-z0-9._\\-]{0,62}" maxlength="63" placeholder="web-1" hint="Lower case letters, digits, dots, dashes." />
      <${Field} label="Labels (optional)" name="labels" placeholder="env=prod, role=web" />
      <label>Allowed commands (optional, one pattern per line; empty allows every command)<textarea name="allow_list" rows="3" class="mono" placeholder="systemctl status *"></textarea></label>
      <button type="submit">Enroll</button></${Form}></details>
    <${CommandLimits} /></section>`;
}
