// Dashboard (home): the project's runs and outcomes, cost and tokens over
// time, incidents opened and resolved, webhook deliveries and verification
// failures, and what waits for a person. Charts are drawn from the usage,
// dashboard, incidents and webhook routes.

import { html, mount, useLoad, Loaded, Link, money, pj } from './ui.js';
import { LineChart, dayStamps } from './chart.js';

export function render(view, ctx) { mount(view, html`<${Dashboard} ctx=${ctx} />`); }

const DAYS = 30;

function lastDays(n) {
  const out = [];
  const now = new Date();
  for (let i = n - 1; i >= 0; i--) out.push(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - i)).toISOString().slice(0, 10));
  return out;
}

// perDay counts items per day by the date a field holds.
function perDay(days, items, field, pred = () => true) {
  const idx = new Map(days.map((d, i) => [d, i]));
  const out = days.map(() => 0);
  for (const it of items) {
    const v = it[field];
    if (!v || !pred(it)) continue;
    const i = idx.get(String(v).slice(0, 10));
    if (i !== undefined) out[i]++;
  }
  return out;
}

async function loadAll(signal) {
  const o = { signal };
  const [stats, trend, funnel, pending, incidents] = await Promise.all([
    pj('/api/dashboard/stats', o), pj('/api/usage/trend?period=30d', o), pj('/api/dashboard/agent-funnel?days=' + DAYS, o),
    pj('/api/approvals?status=pending&limit=1', o), pj('/api/incidents?limit=100', o)]);
  // Webhook deliveries: the latest events of each webhook the project has
  // (GET /api/webhooks lists only tasks that have one: no 404s).
  const list = await pj('/api/webhooks?limit=20', o);
  const hooks = await Promise.all(list.items.map(async (w) => {
    const ev = await pj('/api/tasks/' + w.task_id + '/webhook/events?limit=100', o);
    return { hook: w, events: ev.items };
  }));
  // Failovers to the org's fallback models (a primary that keeps failing); absent for roles without usage:read.
  const org = await pj('/api/dashboard/org-summary', o).catch(() => null);
  // What the project and the organization hold (usage:read, like the summary).
  const [held, orgHeld] = await Promise.all([pj('/api/dashboard/resources', o).catch(() => null), pj('/api/dashboard/org-resources', o).catch(() => null)]);
  return { stats, trend, funnel, pending, incidents, hooks, failovers: org ? org.failovers_24h : null, held, orgHeld };
}

function Tile({ label, value, href, id }) {
  const body = html`<span class="tile-value">${value}</span><span class="tile-label">${label}</span>`;
  return html`<li class="tile" id=${id}>${href ? html`<${Link} href=${href}>${body}</${Link}>` : body}</li>`;
}

function Dashboard({ ctx }) {
  const r = useLoad(loadAll, [ctx.app && ctx.path]);
  return html`<div class="page" id="dashboard"><h1>Dashboard</h1>
    <${Loaded} r=${r}>${(d) => Body(d)}</${Loaded}></div>`;
}

// Holdings is the resource usage table: the project's counts beside the
// organization's (across the projects the caller can see).
function Holdings({ held, orgHeld }) {
  if (!held && !orgHeld) return null;
  const rows = [['Projects', null, orgHeld?.projects, '/projects'], ['Members', held?.members, orgHeld?.members, '/settings?tab=members'],
    ['API keys (live)', null, orgHeld?.api_keys, '/api-keys'], ['Tasks', held?.tasks, orgHeld?.tasks, '/tasks'],
    ['Tasks enabled', held?.tasks_enabled, orgHeld?.tasks_enabled, '/tasks'], ['Agent sessions', held?.sessions, orgHeld?.sessions, '/sessions'],
    ['Memories', held?.memories, orgHeld?.memories, '/knowledge'], ['Secrets', held?.secrets, orgHeld?.secrets, '/settings?tab=secrets']];
  const n = (v) => (typeof v === 'number' ? v.toLocaleString() : '—');
  return html`<section class="card" id="resources" aria-labelledby="resources-title"><h2 id="resources-title">What is held</h2>
    <table id="resources-table"><thead><tr><th scope="col">Resource</th>${held ? html`<th scope="col" class="num">This project</th>` : null}${orgHeld ? html`<th scope="col" class="num">Organization</th>` : null}</tr></thead>
    <tbody>${rows.map(([k, p, o, href]) => html`<tr><th scope="row"><${Link} href=${href}>${k}</${Link}></th>${held ? html`<td class="num">${n(p)}</td>` : null}${orgHeld ? html`<td class="num">${n(o)}</td>` : null}</tr>`)}</tbody></table>
    <p class="muted">Members here are the project's explicit members; org owners and admins see every project too. Memories and secrets of the organization include its org-wide ones.</p></section>`;
}

function Body({ stats, trend, funnel, pending, incidents, hooks, failovers, held, orgHeld }) {
  const days = lastDays(DAYS);
  const x = dayStamps(days);
  const tdays = trend.map((t) => t.date);
  const tx = dayStamps(tdays);
  const events = hooks.flatMap((h) => h.events);
  const failures = hooks.reduce((a, h) => a + (h.hook.verification_failures?.count || 0), 0);
  const open = incidents.items.filter((i) => i.status !== 'resolved').length;
  const rate = stats.success_rate_30d == null ? '—' : Math.round(stats.success_rate_30d * 100) + '%';
  return html`
    <ul class="tiles" aria-label="Key figures">
      <${Tile} id="tile-approvals" label="Approvals waiting" value=${pending.total} href="/approvals" />
      <${Tile} label="Open incidents" value=${open} href="/incidents" />
      <${Tile} label="Runs, last 24 h" value=${stats.sessions_24h} href="/sessions" />
      <${Tile} label="Success rate, 30 days" value=${rate} />
      <${Tile} label="Cost, 30 days" value=${money(stats.cost_30d)} />
      <${Tile} label="Tokens, 30 days" value=${(stats.tokens_30d || 0).toLocaleString()} />
      <${Tile} label="Tasks enabled" value=${stats.tasks_enabled + ' of ' + stats.tasks_total} href="/tasks" />
      <${Tile} label="Webhook verification failures" value=${failures} href="/webhooks" />
      ${failovers ? html`<${Tile} id="tile-failovers" label="Model failovers, last 24 h (the primary model is failing)" value=${failovers} href="/organization?tab=llm" />` : null}
    </ul>
    <div class="charts">
      <${LineChart} id="chart-runs" title="Agent runs per day" x=${tx} bars series=${[{ label: 'Runs', values: trend.map((t) => t.sessions) }]} />
      <${LineChart} id="chart-cost" title="Cost per day (USD)" x=${tx} series=${[{ label: 'Cost', values: trend.map((t) => t.cost), fmt: (v) => '$' + v.toFixed(2) }]} />
      <${LineChart} id="chart-tokens" title="Tokens per day" x=${tx} series=${[
        { label: 'Input', values: trend.map((t) => t.tokens_in) }, { label: 'Output', values: trend.map((t) => t.tokens_out) }]} />
      <${LineChart} id="chart-incidents" title="Incidents opened and resolved" x=${x} bars series=${[
        { label: 'Opened', values: perDay(days, incidents.items, 'opened_at') }, { label: 'Resolved', values: perDay(days, incidents.items, 'resolved_at') }]} />
      <${LineChart} id="chart-webhooks" title="Webhook deliveries" x=${x} bars series=${[
        { label: 'Received', values: perDay(days, events, 'received_at') },
        { label: 'Failed', values: perDay(days, events, 'received_at', (e) => e.status === 'failed') }]} />
    </div>
    <section class="card" aria-labelledby="funnel-title"><h2 id="funnel-title">Outcomes of the last ${funnel.days} days</h2>
      <table class="funnel"><caption class="visually-hidden">Agent runs by stage</caption><tbody>
        ${[['Created', funnel.created], ['Started', funnel.started], ['Used tools', funnel.used_tools], ['Needed approval', funnel.needed_approval],
          ['Completed', funnel.completed], ['Failed', funnel.failed], ['Timed out', funnel.timeout], ['Cancelled', funnel.cancelled], ['In progress', funnel.in_progress]]
          .map(([k, v]) => html`<tr><th scope="row">${k}</th><td class="num">${v}</td>
            <td class="bar-cell"><meter min="0" max=${Math.max(1, funnel.created)} value=${v} aria-label=${k}></meter></td></tr>`)}
      </tbody></table></section>
    <${Holdings} held=${held} orgHeld=${orgHeld} />`;
}
