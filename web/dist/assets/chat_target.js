// ChatTarget: where a task's runs (or a webhook rule's approvals and the
// runs it starts) post in chat: GET, PUT and DELETE on
// /api/tasks/{task}/channel or /api/tasks/{task}/webhook/rules/{rule}/channel.
// It loads when opened: most tasks post nowhere, and an unset target is a
// 404 the closed control never asks for.

import { html, useState, useLoad, Loaded, Form, Button, Link, Empty, pj } from './ui.js';

export function ChatTarget({ taskId, ruleId, id, what }) {
  const [open, setOpen] = useState(false);
  const path = '/api/tasks/' + taskId + (ruleId ? '/webhook/rules/' + ruleId : '') + '/channel';
  return html`<details class="chat-target" id=${id} onToggle=${(e) => setOpen(e.currentTarget.open)}>
    <summary>Post ${what} to chat</summary>${open ? html`<${Target} path=${path} what=${what} />` : null}</details>`;
}

function Target({ path, what }) {
  const r = useLoad((signal) => Promise.all([pj('/api/channels', { signal }),
    pj(path, { signal }).catch((e) => { if (e.status === 404) return null; throw e; })]), [path]);
  return html`<${Loaded} r=${r}>${([channels, target]) => {
    if (!channels.items.length) return html`<${Empty} title="No chat channel is connected to this project.">
      <${Link} href="/channels">Connect Slack, Telegram or WhatsApp</${Link}>, then choose it here.</${Empty}>`;
    const ch = target && channels.items.find((c) => c.id === target.channel_id);
    return html`<p class="chat-target-now" role="status">${target
      ? html`Posts to <strong>${ch ? ch.name : 'a removed channel'}</strong> (${ch ? ch.platform : ''}) in <code>${target.conversation}</code>.`
      : 'Posts nowhere in chat yet.'}</p>
      ${target ? html`<${Button} class="secondary chat-target-stop" onClick=${async () => { await pj(path, { method: 'DELETE' }); r.reload(); }}>Stop posting</${Button}>` : null}
      <${Form} class="chat-target-form" label=${'Post ' + what + ' to chat'} onSubmit=${async (d) => { await pj(path, { method: 'PUT', body: { channel_id: d.channel_id, conversation: d.conversation.trim() } }); r.reload(); }}>
        <div class="filters"><label class="inline">Channel <select name="channel_id">${channels.items.map((c) => html`<option value=${c.id} selected=${target && target.channel_id === c.id}>${c.name} (${c.platform})</option>`)}</select></label>
        <label class="inline">Conversation <input name="conversation" required maxlength="64" class="mono" placeholder="C0OPS or -100123" defaultValue=${target ? target.conversation : ''} /></label>
        <button type="submit">${target ? 'Change' : 'Post here'}</button></div>
        <p class="muted hint">The Slack channel id, Telegram chat id or WhatsApp number approvals and outcomes go to.</p></${Form}>`;
  }}</${Loaded}>`;
}
