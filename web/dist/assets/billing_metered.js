// Metered usage on the billing page: each month's meters as a chart
// (GET /api/billing/usage/history), this period per project and meter
// (usage and breakdown), and a recompute from the recorded data.

import { html, useState, useLoad, Loaded, Button, api, money } from './ui.js';
import { LineChart } from './chart.js';

const meterNames = { agent_runs: 'Agent runs', agent_tokens: 'Tokens', llm_cost_usd: 'LLM cost', webhook_events: 'Webhook events', knowledge_bytes: 'Knowledge bytes' };

function qty(meter, v) { return meter === 'llm_cost_usd' ? money(v) : Number(v || 0).toLocaleString(); }

export function Metered() {
  const [tick, setTick] = useState(0);
  const r = useLoad((signal) => Promise.all([api('/api/billing/usage', { signal }), api('/api/billing/usage/breakdown', { signal }), api('/api/billing/usage/history?months=12', { signal })]), [tick]);
  return html`<section class="card" id="billing-metered" aria-labelledby="metered-h"><div class="heading"><h2 id="metered-h">Metered usage</h2>
      <div class="actions"><${Button} id="billing-recompute" class="secondary" onClick=${async () => { await api('/api/billing/usage/recompute', { method: 'POST' }); setTick(tick + 1); }}>Recompute this month</${Button}></div></div>
    <${Loaded} r=${r}>${([cur, br, hist]) => {
      const months = [...hist.items].reverse();
      const x = months.map((m) => Date.parse(m.period + '-01T00:00:00Z') / 1000);
      return html`<p class="muted">${cur.period} (${cur.status}), computed ${new Date(cur.computed_at).toLocaleString()}</p>
        <dl class="facts">${Object.entries(cur.meters || {}).map(([k, v]) => html`<dt>${meterNames[k] || k}</dt><dd>${qty(k, v)}</dd>`)}</dl>
        ${months.length > 1 ? html`<div class="charts">
          <${LineChart} id="billing-history-runs" title="Agent runs per month" x=${x} bars series=${[{ label: 'Runs', values: months.map((m) => m.meters.agent_runs || 0) }]} />
          <${LineChart} id="billing-history-cost" title="LLM cost per month (USD)" x=${x} bars series=${[{ label: 'Cost', values: months.map((m) => m.meters.llm_cost_usd || 0), fmt: (v) => '$' + v.toFixed(2) }]} /></div>` : null}
        ${br.items.length ? html`<table id="billing-breakdown"><caption class="muted">${br.period} by project</caption><thead><tr><th scope="col">Project</th><th scope="col">Meter</th><th scope="col">Quantity</th></tr></thead>
          <tbody>${br.items.map((i) => html`<tr><td>${i.project_name || 'the organization'}</td><td>${meterNames[i.meter] || i.meter}</td><td class="num">${qty(i.meter, i.quantity)}</td></tr>`)}</tbody></table>`
          : html`<p class="empty">Nothing metered yet this month.</p>`}`;
    }}</${Loaded}></section>`;
}
