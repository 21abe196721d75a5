// Usage of the project: cost and tokens over a period, the daily trend,
// by agent, the tasks and the sessions that cost most (GET /api/usage/*).

import { html, mount, useState, useLoad, Loaded, Link, Empty, Select, money, when, pj } from './ui.js';
import { LineChart, dayStamps } from './chart.js';

export function render(view, ctx) { mount(view, html`<${Usage} />`); }

const periods = [['7d', 'Last 7 days'], ['30d', 'Last 30 days'], ['90d', 'Last 90 days']];

function load(period) {
  return (signal) => {
    const o = { signal };
    const q = '?period=' + period;
    return Promise.all([pj('/api/usage/summary' + q, o), pj('/api/usage/trend' + q, o), pj('/api/usage/by-agent' + q, o),
      pj('/api/usage/by-task' + q + '&limit=10', o), pj('/api/usage/top-sessions' + q + '&limit=10', o)]);
  };
}

function Usage() {
  const [period, setPeriod] = useState('30d');
  const r = useLoad(load(period), [period]);
  return html`<div class="page" id="usage-page"><div class="heading"><h1>Usage</h1>
      <div class="actions"><${Select} label="Period" id="usage-period" class="inline" options=${periods} defaultValue=${period} onChange=${(e) => setPeriod(e.target.value)} /></div></div>
    <${Loaded} r=${r}>${([sum, trend, agents, tasks, top]) => html`
      <ul class="tiles" aria-label="Totals">
        <li class="tile"><span class="tile-value">${money(sum.cost)}</span><span class="tile-label">Cost</span></li>
        <li class="tile"><span class="tile-value">${sum.sessions}</span><span class="tile-label">Sessions</span></li>
        <li class="tile"><span class="tile-value">${(sum.total_tokens || 0).toLocaleString()}</span><span class="tile-label">Tokens</span></li>
        <li class="tile"><span class="tile-value">${money(sum.avg_cost_per_session)}</span><span class="tile-label">Per session</span></li></ul>
      <div class="charts">
        <${LineChart} id="usage-cost" title="Cost per day (USD)" x=${dayStamps(trend.map((t) => t.date))} bars series=${[{ label: 'Cost', values: trend.map((t) => t.cost), fmt: (v) => '$' + v.toFixed(2) }]} />
        <${LineChart} id="usage-tokens" title="Tokens per day" x=${dayStamps(trend.map((t) => t.date))} series=${[
          { label: 'Input', values: trend.map((t) => t.tokens_in) }, { label: 'Output', values: trend.map((t) => t.tokens_out) }]} /></div>
      <section class="card" aria-labelledby="top-sessions-title"><h2 id="top-sessions-title">Most expensive sessions</h2>
        ${top.length === 0 ? html`<${Empty} title="No sessions in this period." cli="opsagent chat 'check the disks on db-1'">Start one from the <${Link} href="/chat">chat</${Link}> or run a task.</${Empty}>` : html`
        <${Bars} id="top-sessions" rows=${top.map((s) => [s.title || s.task_name || s.session_id, s.cost, '/sessions/' + s.session_id, s.agent_type + ' · ' + when(s.created_at)])} />`}</section>
      <div class="two">
        <section class="card" aria-labelledby="by-agent-title"><h2 id="by-agent-title">By agent</h2>
          ${agents.length === 0 ? html`<p class="empty">No runs.</p>` : html`<${Bars} id="usage-by-agent" rows=${agents.map((a) => [a.agent_type, a.cost, null, a.sessions + ' sessions'])} />`}</section>
        <section class="card" aria-labelledby="by-task-title"><h2 id="by-task-title">Top tasks</h2>
          ${tasks.length === 0 ? html`<p class="empty">No task runs.</p>` : html`<${Bars} id="usage-by-task" rows=${tasks.map((t) => [t.task_name, t.cost, null, t.runs + ' runs'])} />`}</section></div>`}</${Loaded}></div>`;
}

// Bars is a ranked list with a proportional bar per row: [label, cost, href, note].
export function Bars({ rows, id }) {
  const max = Math.max(...rows.map((r) => r[1] || 0), 0.000001);
  return html`<table class="bars" id=${id}><thead><tr><th scope="col">What</th><th scope="col">Cost</th><th scope="col"><span class="visually-hidden">Share</span></th></tr></thead>
    <tbody>${rows.map(([label, v, href, note]) => html`<tr><td>${href ? html`<${Link} href=${href}>${label}</${Link}>` : label}${note ? html`<br /><span class="muted">${note}</span>` : null}</td>
      <td class="num">${money(v)}</td><td class="bar-cell"><meter min="0" max=${max} value=${v || 0} aria-label=${'Share of ' + label}></meter></td></tr>`)}</tbody></table>`;
}
