// One task's webhook: create it (provider choice, URL and secret shown once
// with the sender's exact configuration), rotate the secret, send a test
// delivery, change its settings, and below it the events and routing rules.

import { html, mount, useState, useLoad, Loaded, Form, Select, Field, Button, Copyable, Link, Badge, when, pj } from './ui.js';
import { providers, senderMintsSecret, SenderConfig } from './sender.js';
import { Events } from './webhook_events.js';
import { RoutingRules } from './webhook_rules.js';

export function render(view, ctx) { mount(view, html`<${WebhookPage} id=${ctx.id} />`); }

async function load(id, signal) {
  const task = await pj('/api/tasks/' + id, { signal });
  let hook = null;
  try { hook = await pj('/api/tasks/' + id + '/webhook', { signal }); } catch (e) { if (e.status !== 404) throw e; }
  return { task, hook };
}

function WebhookPage({ id }) {
  const [shown, setShown] = useState(null); // the webhook as returned with its secret, once
  const r = useLoad((signal) => load(id, signal), [id]);
  const [evTick, setEvTick] = useState(0);
  return html`<div class="page" id="webhook-page"><p><${Link} href="/webhooks">← Webhooks</${Link}></p>
    <${Loaded} r=${r}>${({ task, hook }) => html`
      <h1>Webhook of ${task.name}</h1>
      ${shown ? html`<section class="card secret-once" aria-labelledby="once-title"><h2 id="once-title">Configure the sender</h2>
        <${SenderConfig} hook=${shown} secret=${shown.secret} />
        <button type="button" class="secondary" onClick=${() => setShown(null)}>I have copied it</button></section>` : null}
      ${hook ? html`<${Settings} hook=${hook} id=${id} onSecret=${setShown} reload=${r.reload} onTest=${() => setEvTick((t) => t + 1)} />
        <${Events} taskId=${id} tick=${evTick} />
        <${RoutingRules} taskId=${id} />`
      : html`<${Create} id=${id} onMade=${(w) => { setShown(w); r.reload(); }} />`}`}</${Loaded}></div>`;
}

function Create({ id, onMade }) {
  const [provider, setProvider] = useState('alertmanager');
  async function create(d) {
    const body = { provider: d.provider };
    if (d.secret) body.secret = d.secret;
    onMade(await pj('/api/tasks/' + id + '/webhook', { method: 'PUT', body }));
  }
  return html`<section class="card"><h2>Create the receiver</h2>
    <${Form} id="webhook-create" onSubmit=${create} label="Create webhook">
      <${Select} label="Provider" name="provider" id="webhook-provider" options=${providers} value=${provider} onChange=${(e) => setProvider(e.target.value)} />
      ${senderMintsSecret.has(provider) ? html`<${Field} label="Use the sender's secret (optional now, paste it once the sender shows it)" name="secret" type="password" minlength="16" maxlength="256" autocomplete="off" />` : null}
      <button type="submit">Create webhook</button></${Form}></section>`;
}

function Settings({ hook, id, onSecret, reload, onTest }) {
  const [msg, setMsg] = useState('');
  const base = '/api/tasks/' + id + '/webhook';
  async function rotate() {
    const w = await pj(base + '/rotate-secret', { method: 'POST', body: { overlap_seconds: 3600 } });
    onSecret(w); reload();
  }
  async function test() {
    const t = await pj(base + '/test', { method: 'POST' });
    setMsg('Test delivery ' + t.type + ' sent: ' + t.status + '.');
    onTest();
  }
  async function save(d) {
    const body = { enabled: d.enabled, routing_mode: d.routing_mode, metadata_only: d.metadata_only, correlate: d.correlate,
      dedupe_window_seconds: d.dedupe_window_seconds, retention_days: d.retention_days, rate_limit_per_minute: d.rate_limit_per_minute };
    if (d.secret) body.secret = d.secret;
    await pj(base, { method: 'PUT', body });
    setMsg('Saved.');
    reload();
  }
  const vf = hook.verification_failures || {};
  const badge = location.origin + hook.badge_url;
  return html`<section class="card" id="webhook-settings" aria-labelledby="wh-title">
    <header class="row"><h2 id="wh-title">Receiver</h2><${Badge} s=${hook.enabled ? 'enabled' : 'disabled'} /></header>
    <dl class="facts">
      <dt>Provider</dt><dd>${hook.provider}</dd><dt>Verification</dt><dd>${hook.scheme}</dd>
      <dt>Secret</dt><dd>${hook.has_secret ? 'set' + (hook.secret_rotated_at ? ', rotated ' + when(hook.secret_rotated_at) : '') : 'none'}</dd>
      <dt>Failed verifications</dt><dd id="webhook-failures">${vf.count || 0}${vf.last_code ? ' (last: ' + vf.last_code + ', ' + when(vf.last_at) + ')' : ''}</dd>
      ${hook.previous_secret_valid_until ? html`<dt>Old secret valid until</dt><dd>${when(hook.previous_secret_valid_until)}</dd>` : null}
    </dl>
    <${SenderConfig} hook=${hook} />
    <div class="badge-preview"><img src=${hook.badge_url} alt="Webhook status badge" height="20" />
      <${Copyable} label="Badge (Markdown)" id="webhook-badge" value=${'![opsagent](' + badge + ')'} /></div>
    <div class="actions">
      <${Button} id="webhook-test" onClick=${test}>Send a test delivery</${Button}>
      <${Button} class="secondary" id="webhook-rotate" onClick=${rotate} confirm="Rotate the secret? The old one stays valid for an hour.">Rotate secret</${Button}>
      <${Button} class="danger" onClick=${async () => { await pj(base, { method: 'DELETE' }); reload(); }} confirm="Delete this webhook, its rules and its events?">Delete webhook</${Button}>
    </div>
    <p role="status" id="webhook-msg">${msg}</p>
    <details><summary>Settings</summary>
      <${Form} id="webhook-config" onSubmit=${save} label="Webhook settings">
        <label class="check"><input type="checkbox" name="enabled" defaultChecked=${hook.enabled} /> Enabled</label>
        <${Select} label="Routing" name="routing_mode" defaultValue=${hook.routing_mode} options=${[['first_match', 'First matching rule'], ['fan_out', 'Every matching rule']]} />
        <label class="check"><input type="checkbox" name="correlate" defaultChecked=${hook.correlate} /> Group alerts into incidents</label>
        <label class="check"><input type="checkbox" name="metadata_only" defaultChecked=${hook.metadata_only} /> Keep metadata only (no bodies)</label>
        <${Field} label="Duplicate window (seconds)" name="dedupe_window_seconds" type="number" min="0" max="86400" defaultValue=${hook.dedupe_window_seconds} />
        <${Field} label="Keep events (days)" name="retention_days" type="number" min="7" max="365" defaultValue=${hook.retention_days} />
        <${Field} label="Rate limit (per minute)" name="rate_limit_per_minute" type="number" min="1" max="100000" defaultValue=${hook.rate_limit_per_minute} />
        ${senderMintsSecret.has(hook.provider) ? html`<${Field} label="Sender's secret (leave empty to keep)" name="secret" type="password" minlength="16" maxlength="256" autocomplete="off" />` : null}
        <button type="submit">Save settings</button></${Form}></details>
  </section>`;
}
