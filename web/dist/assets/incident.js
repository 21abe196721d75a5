// One incident as the investigation's home: the agent's finding on top
// (hypotheses with confidence and evidence, next steps turnable into
// approval requests), the live investigation streaming inline, the
// evidence pack, the changes of the hour before, alerts grouped by
// fingerprint, acknowledge / resolve / postmortem draft, the timeline with
// notes, and who did what from the audit log.

import { html, mount, useState, useEffect, useRef, useLoad, Loaded, Form, Button, Badge, Link, Empty, ErrorLine, when, api, pj } from './ui.js';
import { h } from './dom.js';
import { stream } from './api.js';
import { renderer } from './live.js';
import { ChangeList } from './changes.js';

export function render(view, ctx) { mount(view, html`<${Incident} id=${ctx.id} ctx=${ctx} />`); }

function Incident({ id, ctx }) {
  const base = '/api/incidents/' + id;
  const r = useLoad((signal) => pj(base, { signal }), [id]);
  return html`<div class="page" id="incident-page">
    <${Loaded} r=${r}>${(i) => html`
      <div class="heading"><h1>${i.title}</h1><${Badge} s=${i.status} /></div>
      <p class="muted incident-facts">${[i.severity, i.provider, i.alert_count + ' alert' + (i.alert_count === 1 ? '' : 's'), 'opened ' + when(i.opened_at),
        'last alert ' + when(i.last_alert_at)].filter(Boolean).join(' · ')}</p>
      <${Actions} i=${i} base=${base} reload=${r.reload} />
      <div class="incident-grid">
        <div class="incident-main">
          <${FindingCard} finding=${i.latest_finding} base=${base} />
          <${LiveInvestigation} sessionId=${(i.latest_finding && i.latest_finding.session_id) || i.session_id} onEnd=${r.reload} />
          ${i.latest_finding ? html`<${EarlierFindings} base=${base} latest=${i.latest_finding.id} />` : null}
          ${i.session_id ? html`<${EvidencePack} base=${base} />` : null}
          <${Timeline} i=${i} base=${base} reload=${r.reload} />
        </div>
        <aside class="incident-side" aria-label="Context">
          <${Alerts} timeline=${i.timeline} />
          <${ChangesBefore} openedAt=${i.opened_at} />
          <${Activity} id=${id} ctx=${ctx} />
        </aside>
      </div>`}</${Loaded}></div>`;
}

function Actions({ i, base, reload }) {
  const [pm, setPm] = useState(null);
  return html`<section class="card incident-actions" aria-label="Actions">
    <div class="actions">
      ${i.status === 'triggered' ? html`<${Button} id="incident-ack" onClick=${async () => { await pj(base + '/acknowledge', { method: 'POST' }); reload(); }}>Acknowledge</${Button}>` : null}
      <${Button} id="incident-postmortem" class="secondary" onClick=${async () => setPm(await pj('/api/postmortems/' + i.id + '/draft', { method: 'POST' }))}>${i.status === 'resolved' ? 'Draft the postmortem' : 'Draft a postmortem now'}</${Button}>
      <${Button} id="incident-investigate" class="secondary" onClick=${async () => { await pj(base + '/investigate', { method: 'POST', body: {} }); reload(); }}>${i.latest_finding ? 'Investigate again' : 'Investigate'}</${Button}>
      ${i.session_id ? html`<${Link} href=${'/sessions/' + i.session_id} class="button secondary">Open the session</${Link}>` : null}
      ${i.task_id ? html`<${Link} href=${'/webhooks/' + i.task_id} class="button secondary">Its webhook</${Link}>` : null}
    </div>
    ${pm ? html`<p role="status" id="postmortem-status">Postmortem ${pm.status}: <${Link} href="/postmortems">${pm.document || 'open the postmortems'}</${Link}></p>` : null}
    ${i.status !== 'resolved' ? html`<${Form} id="incident-resolve" label="Resolve" onSubmit=${async (d) => { await pj(base + '/resolve', { method: 'POST', body: d.summary ? { summary: d.summary } : {} }); reload(); }}>
      <label>Resolution summary (goes to the incidents knowledge)<textarea name="summary" rows="3" maxlength="4000"></textarea></label><button type="submit">Resolve</button></${Form}>`
      : html`<p>Resolved ${when(i.resolved_at)}.${i.summary ? ' ' + i.summary : ''}</p>`}</section>`;
}

const confidenceOrder = { high: 0, medium: 1, low: 2 };

// FindingCard is the agent's latest finding (GET /api/incidents/{id} latest_finding).
function FindingCard({ finding: f, base }) {
  if (!f) {
    return html`<section class="card finding" id="incident-finding" aria-labelledby="finding-title"><h2 id="finding-title">Finding</h2>
      <p class="muted">The investigation has not reported a finding yet. It appears here when the agent finishes; its work streams below.</p></section>`;
  }
  const hyps = [...(f.hypotheses || [])].sort((a, b) => (confidenceOrder[a.confidence] ?? 3) - (confidenceOrder[b.confidence] ?? 3));
  return html`<section class="card finding" id="incident-finding" aria-labelledby="finding-title">
    <div class="heading"><h2 id="finding-title">Finding</h2><${Badge} s=${f.status === 'reported' ? 'reported' : 'no_finding'} /></div>
    <p class="finding-summary">${f.summary || (f.status === 'no_finding' ? 'The agent found no cause it could support with evidence.' : '')}</p>
    ${f.impact ? html`<p><strong>Impact:</strong> ${f.impact}</p>` : null}
    ${hyps.length ? html`<h3>Hypotheses</h3><ol class="hypotheses">${hyps.map((hy) => html`<li class="hypothesis">
      <span class=${'badge confidence confidence-' + hy.confidence}>${hy.confidence} confidence</span> <span class="cause">${hy.cause}</span>
      ${(hy.evidence || []).length ? html`<div class="refs">Evidence: ${hy.evidence.map((e) => e.kind === 'evidence'
        ? html`<a class=${'ref' + (e.resolved ? '' : ' unresolved')} href=${'#evidence-' + e.ref} title=${e.resolved ? '' : 'not found in the pack'}>${e.ref}</a> `
        : html`<span class="ref ref-tool">${e.ref}</span> `)}</div>` : null}</li>`)}</ol>` : null}
    ${(f.next_steps || []).length ? html`<h3>Next steps</h3><ol class="next-steps">${f.next_steps.map((s, n) => html`<${NextStep} step=${s} url=${base + '/findings/' + f.id + '/next-steps/' + n + '/request-approval'} />`)}</ol>` : null}
    <p class="muted">${[f.model, f.prompt_version ? 'prompt ' + f.prompt_version : '', when(f.created_at)].filter(Boolean).join(' · ')}</p></section>`;
}

function NextStep({ step: s, url }) {
  const [approval, setApproval] = useState(s.approval_id ? { id: s.approval_id } : null);
  return html`<li class="next-step"><span>${s.action}</span>${s.command ? html`<pre class="args">${s.command}${s.target ? '  (on ' + s.target + ')' : ''}</pre>` : null}
    ${approval ? html`<p class="muted">Approval requested: <${Link} href="/approvals">decide it on Approvals</${Link}></p>`
      : s.command ? html`<${Button} class="secondary request-approval" onClick=${async () => setApproval(await pj(url, { method: 'POST', headers: { 'Idempotency-Key': 'next-step-' + url } }))}>Request approval to run it</${Button}>` : null}</li>`;
}

// EarlierFindings lists the findings of earlier investigations.
function EarlierFindings({ base, latest }) {
  const r = useLoad((signal) => pj(base + '/findings?limit=20', { signal }), [latest]);
  const earlier = (r.data?.items || []).filter((f) => f.id !== latest);
  if (!earlier.length) return null;
  return html`<section class="card" id="incident-findings" aria-labelledby="findings-title"><h2 id="findings-title">Earlier findings</h2>
    <ul class="evidence">${earlier.map((f) => html`<li><span class="muted">${when(f.created_at)}</span> <${Badge} s=${f.status} /> ${f.summary}</li>`)}</ul></section>`;
}

// LiveInvestigation replays and follows the investigation's events inline.
function LiveInvestigation({ sessionId, onEnd }) {
  const box = useRef(null);
  const [state, setState] = useState('');
  useEffect(() => {
    if (!sessionId || !box.current) return undefined;
    const ac = new AbortController();
    const log = box.current;
    log.replaceChildren();
    const status = { set textContent(t) { setState(t); } };
    const r = renderer(log, status, null);
    let ended = false;
    (async () => {
      try {
        for await (const ev of stream('/api/sessions/' + sessionId + '/events?after=0', { project: true, signal: ac.signal })) r.handle(ev);
        ended = true;
      } catch (e) {
        if (!ac.signal.aborted) log.append(h('p', { class: 'error', role: 'alert' }, e.message));
      }
      if (ended && !ac.signal.aborted) setState((s) => s || 'The investigation ended.');
    })();
    return () => ac.abort();
  }, [sessionId]);
  if (!sessionId) {
    return html`<section class="card" id="incident-live" aria-labelledby="live-title"><h2 id="live-title">Investigation</h2>
      <${Empty} title="No investigation was started for this incident.">Ask the agent in the <${Link} href="/chat">chat</${Link}>, or give the webhook's task a rule that runs it.</${Empty}></section>`;
  }
  return html`<section class="card" id="incident-live" aria-labelledby="live-title"><div class="heading"><h2 id="live-title">Investigation</h2>
      <span class="muted" role="status" id="incident-live-status">${state}</span></div>
    <div class="log live-log" id="incident-live-log" role="log" aria-label="Investigation" ref=${box}></div></section>`;
}

// EvidencePack is what the investigation gathered (GET .../evidence).
function EvidencePack({ base }) {
  const r = useLoad((signal) => pj(base + '/evidence', { signal }).catch((e) => { if (e.status === 404) return null; throw e; }), [base]);
  return html`<section class="card" id="incident-evidence" aria-labelledby="evidence-title"><h2 id="evidence-title">Evidence</h2>
    <${Loaded} r=${r}>${(p) => !p || !(p.items || []).length ? html`<p class="empty">No evidence gathered yet.</p>` : html`
      <p class="muted">Gathered ${when(p.gathered_at)} · ${p.items.length} item${p.items.length === 1 ? '' : 's'} · ${p.tokens} of ${p.budget_tokens} tokens</p>
      <ul class="evidence">${p.items.map((e) => html`<li id=${'evidence-' + e.id} class="evidence-item"><details>
        <summary><span class="ref">${e.id}</span> <${Badge} s=${e.source} /> ${e.title}</summary>
        <pre tabindex="0">${e.content}</pre><p class="muted">${[e.origin, when(e.at)].filter(Boolean).join(' · ')}</p></details></li>`)}</ul>
      ${(p.failed || []).length ? html`<p class="muted">Not reached: ${p.failed.map((f) => f.source + ' (' + f.reason + ')').join('; ')}</p>` : null}`}</${Loaded}></section>`;
}

// ChangesBefore lists the project's changes in the hour before the incident opened.
function ChangesBefore({ openedAt }) {
  const until = new Date(new Date(openedAt).getTime() + 60000);
  const since = new Date(new Date(openedAt).getTime() - 3600000);
  const r = useLoad((signal) => pj('/api/changes?limit=50&since=' + since.toISOString() + '&until=' + until.toISOString(), { signal }), [openedAt]);
  return html`<section class="card" id="incident-changes" aria-labelledby="changes-title"><h2 id="changes-title">Changes in the hour before</h2>
    <${Loaded} r=${r} isEmpty=${(p) => p.items.length === 0} empty="No change was recorded in the hour before it opened.">${(p) => html`<${ChangeList} id="incident-changes-list" items=${p.items} />`}</${Loaded}></section>`;
}

// alertGroups groups the timeline's alerts by fingerprint (or group key).
export function alertGroups(timeline) {
  const groups = new Map();
  for (const t of timeline || []) {
    if (t.kind !== 'alert') continue;
    const list = Array.isArray(t.data) ? t.data : Array.isArray(t.data?.alerts) ? t.data.alerts : [t.data || {}];
    for (const a of list) {
      const key = a.fingerprint || a.group_key || a.title || t.text;
      const g = groups.get(key) || { key, title: a.title || t.text, status: a.status, count: 0, first: t.at, last: t.at, labels: a.labels || {} };
      g.count++;
      if (t.at < g.first) g.first = t.at;
      if (t.at > g.last) { g.last = t.at; g.status = a.status || g.status; }
      groups.set(key, g);
    }
  }
  return [...groups.values()].sort((a, b) => (a.last < b.last ? 1 : -1));
}

function Alerts({ timeline }) {
  const gs = alertGroups(timeline);
  return html`<section class="card" id="incident-alerts" aria-labelledby="alerts-title"><h2 id="alerts-title">Alerts</h2>
    ${gs.length === 0 ? html`<p class="empty">No alerts.</p>` : html`<ul class="alert-groups">${gs.map((g) => html`<li class="alert-group" data-fingerprint=${g.key}>
      <div><strong>${g.title}</strong> ${g.status ? html`<${Badge} s=${g.status} />` : null} <span class="muted">×${g.count}</span></div>
      <div class="muted">first ${when(g.first)} · last ${when(g.last)}</div>
      ${Object.keys(g.labels).length ? html`<div class="labels">${Object.entries(g.labels).slice(0, 6).map(([k, v]) => html`<code>${k}=${v}</code> `)}</div>` : null}</li>`)}</ul>`}</section>`;
}

// Activity is who did what to the incident, from the audit log (it needs
// the audit:read permission; without it the section says so).
function Activity({ id, ctx }) {
  const org = (ctx.app.orgs || []).find((o) => o.current) || {};
  const r = useLoad(async (signal) => {
    const page = await api('/api/audit-logs?target_type=incident&target_id=' + id + '&limit=50', { signal });
    let names = {};
    try { for (const m of await api('/api/organizations/' + org.id + '/members', { signal })) names[m.user_id] = m.name || m.email; } catch { names = {}; }
    return { page, names };
  }, [id]);
  return html`<section class="card" id="incident-activity" aria-labelledby="activity-title"><h2 id="activity-title">Who did what</h2>
    ${r.error && r.error.status === 403 ? html`<p class="muted">Your role cannot read the audit log.</p>` : html`<${Loaded} r=${r} isEmpty=${(d) => d.page.items.length === 0} empty="Nobody has acted on it yet.">${({ page, names }) => html`
      <ol class="activity">${page.items.map((a) => html`<li><span class="muted">${when(a.created_at)}</span> ${a.actor_user_id ? names[a.actor_user_id] || 'a member' : a.actor_type}
        <span class="action">${a.action.replace(/^incident\./, '')}</span>${a.outcome !== 'success' ? html` <${Badge} s=${a.outcome} />` : null}</li>`)}</ol>`}</${Loaded}>`}</section>`;
}

function Timeline({ i, base, reload }) {
  return html`<section class="card" aria-labelledby="tl-title"><h2 id="tl-title">Timeline</h2>
    ${i.timeline.length === 0 ? html`<p class="empty">Nothing yet.</p>` : html`<ol class="timeline" id="incident-timeline">${i.timeline.map((t) => html`<li><span class="muted">${when(t.at)}</span> <${Badge} s=${t.kind} /> ${t.text}
      ${(t.kind === 'session' || t.kind === 'skipped') && t.data?.session_id ? html` <${Link} href=${'/sessions/' + t.data.session_id}>run</${Link}>` : null}
      ${t.kind === 'alert' && t.data ? html`<details><summary>Alert</summary><pre tabindex="0">${JSON.stringify(t.data, null, 2)}</pre></details>` : null}</li>`)}</ol>`}
    <${Form} id="incident-note" label="Add a note" reset onSubmit=${async (d) => { await pj(base + '/notes', { method: 'POST', body: { text: d.text } }); reload(); }}>
      <label>Note<textarea name="text" rows="2" required maxlength="4000"></textarea></label><button type="submit">Add note</button></${Form}></section>`;
}
