// Channels: the project's chat connections (Slack, Telegram, WhatsApp).
// Connect one (credentials go to the vault; secrets the server generates
// are shown once), see its inbound URL and the platform's setup steps,
// test it, enable or disable it, delete it; link my own chat account with
// a one-time code; see and remove linked accounts.

import { html, mount, useState, useLoad, Loaded, Form, Field, Select, Button, Badge, Copyable, when, pj } from './ui.js';

export function render(view) { mount(view, html`<${Channels} />`); }

const CREDS = {
  slack: [['bot_token', 'Bot User OAuth Token (xoxb-…)'], ['signing_secret', 'Signing secret']],
  telegram: [['bot_token', 'Bot token (from @BotFather)']],
  whatsapp: [['access_token', 'Access token'], ['app_secret', 'App secret']],
};
const ids = (s) => (s || '').split(',').map((x) => x.trim()).filter(Boolean);
// Setup steps carry long URLs: they wrap anywhere rather than widen a phone's page.
const wrap = { overflowWrap: 'anywhere' };

function Channels() {
  const r = useLoad((signal) => pj('/api/channels', { signal }));
  const [platform, setPlatform] = useState('slack');
  const [made, setMade] = useState(null);
  async function create(d) {
    const credentials = {};
    for (const [k] of CREDS[platform]) credentials[k] = d[k];
    const body = { platform, name: d.name, credentials, allow_unlinked: !!d.allow_unlinked, allowed_chat_ids: ids(d.allowed_chat_ids) };
    if (platform === 'whatsapp') body.phone_number_id = d.phone_number_id;
    if (platform === 'telegram' && d.bot_user_id) body.bot_user_id = d.bot_user_id.replace(/^@/, '');
    setMade(await pj('/api/channels', { method: 'POST', body }));
    r.reload();
  }
  return html`<div class="page"><h1>Channels</h1>
    <p class="muted">Reach the agent from Slack, Telegram or WhatsApp. One chat thread is one session; approvals show as buttons that only people who linked their account, with a role that may approve, can press.</p>
    ${made ? html`<div class="card secret-once" id="channel-made"><h2>Channel ${made.name} connected</h2>
      <${Copyable} label="Inbound URL" id="channel-made-url" value=${made.inbound_url} />
      ${Object.entries(made.generated || {}).map(([k, v]) => html`<${Copyable} label=${k + ' (shown once)'} id=${'channel-made-' + k} value=${v} />`)}
      <ol style=${wrap}>${made.setup_steps.map((s) => html`<li>${s}</li>`)}</ol>
      <button type="button" class="secondary" onClick=${() => setMade(null)}>Done</button></div>` : null}
    <${Loaded} r=${r} isEmpty=${(d) => d.items.length === 0} empty="No channels yet.">${(d) => html`
      <div id="channels-list">${d.items.map((ch) => html`<${Channel} key=${ch.id} ch=${ch} reload=${r.reload} />`)}</div>`}</${Loaded}>
    <details open=${!made}><summary>Connect a channel</summary>
      <${Select} label="Platform" name="platform-choice" id="channel-platform" options=${[['slack', 'Slack'], ['telegram', 'Telegram'], ['whatsapp', 'WhatsApp']]} defaultValue=${platform} onChange=${(e) => setPlatform(e.currentTarget.value)} />
      <${Form} id="channel-create" label="Connect a channel" reset onSubmit=${create}>
        <${Field} label="Name" name="name" required maxlength="63" placeholder="ops-slack" />
        ${CREDS[platform].map(([k, label]) => html`<${Field} label=${label} name=${k} type="password" autocomplete="off" required />`)}
        ${platform === 'whatsapp' ? html`<${Field} label="Phone number id" name="phone_number_id" required pattern="[0-9]+" />` : null}
        ${platform === 'telegram' ? html`<${Field} label="Bot username (for mentions in groups)" name="bot_user_id" placeholder="opsagent_bot" />` : null}
        <${Field} label="Allowed chats (optional, comma-separated ids; empty allows every chat)" name="allowed_chat_ids" />
        <label class="check"><input type="checkbox" name="allow_unlinked" /> People without a linked account may chat (never approve)</label>
        <button type="submit">Connect</button></${Form}></details></div>`;
}

function Channel({ ch, reload }) {
  const [code, setCode] = useState(null);
  const [test, setTest] = useState(null);
  const links = useLoad((signal) => pj('/api/channels/' + ch.id + '/links', { signal }));
  const patch = async (body) => { await pj('/api/channels/' + ch.id, { method: 'PATCH', body }); reload(); };
  return html`<section class="card channel" data-channel-id=${ch.id} aria-label=${'Channel ' + ch.name}>
    <h2>${ch.name} <${Badge} s=${ch.platform} /> <${Badge} s=${ch.enabled ? 'enabled' : 'disabled'} /></h2>
    <${Copyable} label="Inbound URL" id=${'channel-url-' + ch.id} value=${ch.inbound_url} />
    <details><summary>Setup steps</summary><ol style=${wrap}>${ch.setup_steps.map((s) => html`<li>${s}</li>`)}</ol></details>
    <p class="muted" style=${wrap}>${ch.allowed_chat_ids.length ? 'Allowed chats: ' + ch.allowed_chat_ids.join(', ') : 'Every chat allowed'}${ch.ignored_messages ? ' · ' + ch.ignored_messages + ' message(s) from other chats ignored' : ''}${ch.allow_unlinked ? ' · unlinked people may chat' : ''}</p>
    <div class="actions">
      <${Button} class="secondary channel-test" onClick=${async () => { setTest(await pj('/api/channels/' + ch.id + '/test', { method: 'POST' })); reload(); }}>Test<span class="visually-hidden"> ${ch.name}</span></${Button}>
      <${Button} class="secondary" onClick=${() => patch({ enabled: !ch.enabled })}>${ch.enabled ? 'Disable' : 'Enable'}<span class="visually-hidden"> ${ch.name}</span></${Button}>
      <${Button} class="secondary channel-link" onClick=${async () => setCode(await pj('/api/channels/' + ch.id + '/link-codes', { method: 'POST' }))}>Link my account<span class="visually-hidden"> ${ch.name}</span></${Button}>
      <${Button} class="danger" confirm=${'Delete ' + ch.name + '? Its sessions stay.'} onClick=${async () => { await pj('/api/channels/' + ch.id, { method: 'DELETE' }); reload(); }}>Delete<span class="visually-hidden"> ${ch.name}</span></${Button}>
    </div>
    ${test ? html`<p class="channel-test-result" role="status">${test.ok ? '✅ ' : '❌ '}${test.detail}</p>` : null}
    ${code ? html`<div class="channel-code"><${Copyable} label=${'Send this to the bot within 15 minutes (expires ' + when(code.expires_at) + ')'} id=${'channel-code-' + ch.id} value=${'link ' + code.code} /></div>` : null}
    <${Loaded} r=${links} isEmpty=${(d) => d.items.length === 0} empty="No linked accounts yet.">${(d) => html`<table class="channel-links"><thead><tr><th scope="col">Chat account</th><th scope="col">Person</th><th scope="col">Linked</th><th scope="col"><span class="visually-hidden">Action</span></th></tr></thead>
      <tbody>${d.items.map((l) => html`<tr><td>${l.external_name || l.external_user_id}</td><td>${l.user_email}</td><td>${when(l.created_at)}</td>
        <td><${Button} class="danger" confirm=${'Unlink ' + (l.external_name || l.external_user_id) + '?'} onClick=${async () => { await pj('/api/channels/' + ch.id + '/links/' + l.id, { method: 'DELETE' }); links.reload(); }}>Unlink</${Button}></td></tr>`)}</tbody></table>`}</${Loaded}>
  </section>`;
}
