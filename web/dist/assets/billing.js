// Billing: the org's plan and payment status, usage against each quota,
// the plans it may switch to (or subscribe to through Stripe Checkout), the
// Stripe customer portal, and monthly statements with CSV and JSON export.

import { html, mount, useState, useLoad, Loaded, Button, Badge, api, money } from './ui.js';
import { Metered } from './billing_metered.js';

export function render(view) { mount(view, html`<${Billing} />`); }

const quotaNames = {
  members: 'Members', projects: 'Projects', enabled_tasks: 'Enabled tasks', connectors: 'Connectors', channels: 'Channels',
  knowledge_bytes: 'Knowledge storage', webhook_events_per_month: 'Webhook events this month', agent_runs_per_month: 'Agent runs this month',
  agent_tokens_per_month: 'Tokens this month', llm_cost_usd_per_month: 'LLM cost this month',
};

// amount formats a quota's quantity in its own unit.
function amount(quota, v) {
  if (v === null || v === undefined) return 'unlimited';
  if (quota === 'knowledge_bytes') return v < 1024 ? v + ' B' : v < 1048576 ? (v / 1024).toFixed(1) + ' KiB' : (v / 1048576).toFixed(v < 10485760 ? 1 : 0) + ' MiB';
  if (quota === 'llm_cost_usd_per_month') return money(v);
  return Number(v).toLocaleString();
}

function QuotaBar({ q }) {
  const label = quotaNames[q.quota] || q.quota;
  const pct = q.limit ? Math.min(100, (q.current / q.limit) * 100) : 0;
  return html`<div class="bar-row" data-quota=${q.quota}><span>${label}</span>
    ${q.limit === null ? html`<span class="muted">no limit</span>` : html`<meter min="0" max=${q.limit || 1} value=${Math.min(q.current, q.limit || 1)} high=${(q.limit || 1) * 0.8} optimum="0" aria-label=${label}></meter>`}
    <span class="muted">${amount(q.quota, q.current)}${q.limit === null ? '' : ' of ' + amount(q.quota, q.limit) + ' (' + pct.toFixed(0) + '%)'}</span></div>`;
}

function Plans({ b, reload }) {
  const r = useLoad((signal) => api('/api/billing/plans', { signal }), []);
  async function choose(p) {
    if (p.checkout) {
      const s = await api('/api/billing/checkout', { method: 'POST', body: { plan_id: p.id } });
      window.location.assign(s.url);
      return;
    }
    await api('/api/billing/plan', { method: 'PUT', body: { plan_id: p.id } });
    reload();
  }
  return html`<section class="card" aria-labelledby="plans-h"><h2 id="plans-h">Plans</h2>
    <${Loaded} r=${r}>${(d) => html`<div class="table-wrap"><table id="billing-plans" tabindex="0"><thead><tr><th scope="col">Plan</th><th scope="col">Price</th><th scope="col">Limits</th><th scope="col"><span class="visually-hidden">Action</span></th></tr></thead>
      <tbody>${d.items.filter((p) => p.selectable || p.id === b.plan.id).map((p) => html`<tr data-plan=${p.id}><td><strong>${p.name}</strong><br /><span class="muted">${p.description}</span></td>
        <td>${p.monthly_price_usd ? money(p.monthly_price_usd) + ' / month' : 'free'}</td>
        <td class="muted">${Object.keys(p.limits).length === 0 ? 'no limits' : Object.entries(p.limits).map(([k, v]) => (quotaNames[k] || k) + ': ' + amount(k, v)).join(', ')}
          <br />Features: ${p.features.length ? p.features.join(', ') : 'none'}</td>
        <td>${p.id === b.plan.id ? html`<${Badge} s="current" />` : b.mode === 'off' ? null
          : html`<${Button} class="secondary" id=${'plan-' + p.id} onClick=${() => choose(p)}>${p.checkout ? 'Upgrade' : 'Switch'}<span class="visually-hidden"> to ${p.name}</span></${Button}>`}</td></tr>`)}</tbody></table></div>`}</${Loaded}></section>`;
}

function Statement({ period }) {
  const r = useLoad((signal) => api('/api/billing/statements/' + period, { signal }), [period]);
  return html`<${Loaded} r=${r}>${(s) => html`<div class="table-wrap"><table id=${'statement-' + period}><caption class="muted">Statement ${s.period}, plan ${s.plan_name}, ${s.status}</caption>
    <thead><tr><th scope="col">Project</th><th scope="col">Meter</th><th scope="col" class="num">Quantity</th><th scope="col">Unit price</th><th scope="col" class="num">Amount</th></tr></thead>
    <tbody>${s.lines.map((l) => html`<tr><td>${l.project_name || l.project_id || '—'}</td><td><code>${l.meter}</code></td><td class="num" title=${Number(l.raw_quantity).toLocaleString() + ' ' + l.raw_unit}>${Number(l.quantity).toLocaleString(undefined, { maximumSignificantDigits: 6 })} ${l.unit}</td>
      <td>${money(l.unit_price_usd)} / ${l.unit}</td><td class="num">${money(l.amount_usd)}</td></tr>`)}
      <tr><th scope="row" colspan="4">Total</th><td class="num"><strong>${money(s.total_usd)}</strong></td></tr></tbody></table></div>`}</${Loaded}>`;
}

function Statements() {
  const r = useLoad((signal) => api('/api/billing/statements', { signal }), []);
  const [open, setOpen] = useState(null);
  return html`<section class="card" aria-labelledby="statements-h"><h2 id="statements-h">Statements</h2>
    <${Loaded} r=${r} isEmpty=${(d) => d.items.length === 0} empty="No usage recorded yet.">${(d) => html`<div class="table-wrap"><table id="billing-statements">
      <thead><tr><th scope="col">Month</th><th scope="col">Status</th><th scope="col">Plan</th><th scope="col" class="num">Total</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
      <tbody>${d.items.map((s) => html`<tr data-period=${s.period}><td>${s.period}</td><td><${Badge} s=${s.status} /></td><td>${s.plan_id}</td><td class="num">${money(s.total_usd)}</td>
        <td class="actions"><button type="button" class="secondary" aria-expanded=${open === s.period ? 'true' : 'false'} onClick=${() => setOpen(open === s.period ? null : s.period)}>Lines<span class="visually-hidden"> of ${s.period}</span></button>
          <a class="button secondary" href=${'/api/billing/statements/' + s.period + '?format=csv'} download=${'statement-' + s.period + '.csv'}>CSV<span class="visually-hidden"> of ${s.period}</span></a>
          <a class="button secondary" href=${'/api/billing/statements/' + s.period} download=${'statement-' + s.period + '.json'}>JSON<span class="visually-hidden"> of ${s.period}</span></a></td></tr>`)}</tbody></table></div>
      ${open ? html`<${Statement} period=${open} />` : null}`}</${Loaded}></section>`;
}

// Stripe Checkout sends the customer back with ?checkout=success or cancelled.
const checkoutNote = { success: 'Thank you: the new plan applies as soon as Stripe confirms the payment.', cancelled: 'Checkout was cancelled; nothing changed.' };

function Billing() {
  const r = useLoad((signal) => api('/api/billing', { signal }), []);
  const back = checkoutNote[new URLSearchParams(location.search).get('checkout')];
  return html`<div class="page" id="billing-page"><div class="heading"><h1>Billing</h1>
    ${r.data && r.data.stripe ? html`<div class="actions"><${Button} id="billing-portal" class="secondary" onClick=${async () => { const p = await api('/api/billing/portal', { method: 'POST' }); window.location.assign(p.url); }}>Payment and invoices</${Button}></div>` : null}</div>
    ${back ? html`<p role="status" id="billing-checkout">${back}</p>` : null}
    <${Loaded} r=${r}>${(b) => html`
      ${b.read_only ? html`<p class="error" role="alert" id="billing-readonly">The payment is past due beyond the grace period: the organization is read-only until it is paid. Nothing is deleted.</p>` : null}
      ${b.status === 'past_due' && !b.read_only ? html`<p class="error" role="alert">The last payment failed. Everything keeps working until ${new Date(b.grace_ends_at).toLocaleString()}.</p>` : null}
      ${b.pending_plan_id ? html`<p role="status" id="billing-pending">Change to ${b.pending_plan_id} is waiting: ${b.pending_reason}</p>` : null}
      <section class="card" aria-labelledby="plan-h"><h2 id="plan-h">Plan: <span id="billing-plan">${b.plan.name}</span> <${Badge} s=${b.status} /></h2>
        <p class="muted">${b.mode === 'off' ? 'Billing is off on this server: no limits apply.' : 'Usage in ' + b.period + ' (UTC) against the plan’s quotas.'}</p>
        <div id="billing-quotas">${b.quotas.map((q) => html`<${QuotaBar} q=${q} />`)}</div></section>
      ${b.mode === 'off' ? null : html`<${Metered} />`}
      <${Plans} b=${b} reload=${r.reload} />
      <${Statements} />`}</${Loaded}></div>`;
}
