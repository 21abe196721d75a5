// Editing a connector (its name, the labels set through the API and the
// server-side allow-list: what PATCH /api/connectors/{id} takes) and the
// project's command limits (GET/PUT /api/connector-settings), both on the
// Connectors page. The host's own labels stay the host's: the ones set
// here override them by key.

import { html, useState, useLoad, Loaded, Form, Field, pj } from './ui.js';
import { ApiError } from './api.js';

export const labelsText = (m) => Object.entries(m || {}).map(([k, v]) => k + '=' + v).join(', ');

// parseLabels reads "env=prod, role=web"; a malformed pair is refused
// before anything is sent, naming the field.
export function parseLabels(s) {
  const out = {};
  for (const part of (s || '').split(',').map((x) => x.trim()).filter(Boolean)) {
    const i = part.indexOf('=');
    if (i < 1) throw new ApiError(422, { detail: [{ loc: ['body', 'labels'], msg: 'Labels are key=value pairs separated by commas: ' + part }] });
    out[part.slice(0, i).trim()] = part.slice(i + 1).trim();
  }
  return out;
}

export const lines = (s) => (s || '').split('\n').map((x) => x.trim()).filter(Boolean);

export function ConnectorEdit({ x, onDone, onCancel }) {
  async function save(d) {
    await pj('/api/connectors/' + x.id, { method: 'PATCH', body: { name: d.name, labels: parseLabels(d.labels), allow_list: lines(d.allow_list) } });
    onDone();
  }
  return html`<${Form} id="connector-edit" label=${'Edit ' + x.name} onSubmit=${save}>
    <${Field} label="Name" name="name" required maxlength="63" defaultValue=${x.name} hint="Lower case letters, digits, dots, dashes. run_command targets use it." />
    <${Field} label="Labels set here (override the host's by key)" name="labels" defaultValue=${labelsText(x.server_labels)} placeholder="env=prod, role=web" />
    ${Object.keys(x.host_labels || {}).length ? html`<p class="muted">The host reports: ${labelsText(x.host_labels)}</p>` : null}
    <label>Allowed commands (one pattern per line; empty allows every command the host allows)<textarea name="allow_list" rows="3" class="mono" defaultValue=${(x.allow_list || []).join('\n')}></textarea></label>
    <div class="actions"><button type="submit">Save connector</button><button type="button" class="secondary" onClick=${onCancel}>Cancel</button></div></${Form}>`;
}

export function CommandLimits() {
  const r = useLoad((signal) => pj('/api/connector-settings', { signal }));
  const [msg, setMsg] = useState('');
  return html`<section class="card" aria-labelledby="limits-title" id="command-limits"><h3 id="limits-title">Command limits</h3>
    <${Loaded} r=${r}>${(s) => html`<${Form} id="connector-settings-form" label="Command limits" onSubmit=${async (d) => {
      const out = await pj('/api/connector-settings', { method: 'PUT', body: { command_timeout_max_seconds: d.command_timeout_max_seconds } });
      setMsg('Saved: no command in this project runs longer than ' + out.command_timeout_max_seconds + ' s.'); r.reload(); }}>
      <${Field} label="Longest a command may run (seconds)" name="command_timeout_max_seconds" type="number" step="1" defaultValue=${s.command_timeout_max_seconds}
        hint="On every connector and the server; a longer timeout asked by the agent is cut to this. 1 to 86400." />
      <button type="submit">Save limit</button></${Form}><p role="status" id="connector-settings-msg">${msg}</p>`}</${Loaded}></section>`;
}
