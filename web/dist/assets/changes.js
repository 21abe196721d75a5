// Changes: deploys, config changes, releases and pushes the project knows
// about (GET /api/changes), newest first, filtered by service and time;
// a change can be recorded by hand (POST /api/changes).

import { html, mount, useState, useLoad, Loaded, Form, Field, Empty, Badge, when, pj } from './ui.js';

export function render(view, ctx) { mount(view, html`<${Changes} />`); }

const CLI = `curl -X POST "$OPSAGENT_SERVER/api/changes" -H "Authorization: Bearer $OPSAGENT_TOKEN" \\
  -H "X-Project-ID: <project id>" -H 'Content-Type: application/json' \\
  -d '{"title":"deploy api v1.4.2","kind":"deploy","service":"api"}'`;

function Changes() {
  const [filter, setFilter] = useState({ service: '', since: '' });
  const r = useLoad((signal) => {
    const p = new URLSearchParams({ limit: '100' });
    if (filter.service) p.set('service', filter.service);
    if (filter.since) p.set('since', new Date(filter.since).toISOString());
    return pj('/api/changes?' + p, { signal });
  }, [filter.service, filter.since]);
  const [adding, setAdding] = useState(false);
  async function add(d) {
    const body = { title: d.title };
    for (const k of ['kind', 'service', 'environment', 'url', 'description']) if (d[k]) body[k] = d[k];
    await pj('/api/changes', { method: 'POST', body });
    setAdding(false); r.reload();
  }
  return html`<div class="page" id="changes-page"><div class="heading"><h1>Changes</h1>
      <div class="actions"><button type="button" class="secondary" onClick=${() => setAdding(!adding)} aria-expanded=${adding ? 'true' : 'false'}>Record a change</button></div></div>
    <p class="muted">What changed, and when: deploys from GitHub and GitLab webhooks, Kubernetes rollouts, what the agent did and what was recorded here. The investigation of an incident reads the changes of the hour before it.</p>
    ${adding ? html`<${Form} id="change-create" class="card" label="Record a change" onSubmit=${add}>
      <${Field} label="Title" name="title" required maxlength="300" />
      <div class="grid-2"><${Field} label="Kind (deploy, config, release...)" name="kind" maxlength="40" /><${Field} label="Service" name="service" maxlength="200" />
        <${Field} label="Environment" name="environment" maxlength="100" /><${Field} label="Link" name="url" type="url" maxlength="2000" /></div>
      <label>Description<textarea name="description" rows="2" maxlength="4000"></textarea></label>
      <button type="submit">Save</button></${Form}>` : null}
    <form class="filters" role="search" onSubmit=${(e) => { e.preventDefault(); const f = e.currentTarget; setFilter({ service: f.service.value.trim(), since: f.since.value }); }}>
      <label class="inline">Service <input name="service" maxlength="200" /></label>
      <label class="inline">Since <input name="since" type="datetime-local" /></label><button type="submit" class="secondary">Filter</button></form>
    <${Loaded} r=${r} isEmpty=${(p) => p.items.length === 0} empty=${{ title: 'No changes recorded yet.', cli: CLI,
      children: 'Point a GitHub or GitLab webhook at a task, or record a change here.' }}>${(p) => html`<${ChangeList} items=${p.items} />`}</${Loaded}></div>`;
}

// ChangeList is the list of changes also shown on the incident page.
export function ChangeList({ items, id }) {
  return html`<ol class="changes" id=${id || 'changes-list'}>${items.map((c) => html`<li class="change" data-change-id=${c.id}>
    <span class="change-when muted">${when(c.occurred_at)}</span> <${Badge} s=${c.kind || c.source} />
    <span class="change-title">${c.url ? html`<a href=${c.url} rel="noopener noreferrer" target="_blank">${c.title}</a>` : c.title}</span>
    <span class="muted">${[c.service, c.environment, c.author, c.source].filter(Boolean).join(' · ')}</span></li>`)}</ol>`;
}
