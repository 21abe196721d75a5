// Rules what-if: try a rule change against the project's recorded tool
// calls before saving it, and run rules in shadow mode (they decide
// nothing, they record what they would have done) for a trial period.

import { html, mount, useState, useLoad, Loaded, Form, Field, Button, Badge, Page, when, pj } from './ui.js';

export function render(view) { mount(view, html`<${WhatIf} />`); }

function rule(d) {
  const r = { kind: d.kind, description: d.description, tool: d.tool, match_type: d.match_type, pattern: d.pattern };
  if (d.effect) r.effect = d.effect;
  return r;
}

function RuleFields() {
  return html`<label>Kind <select name="kind"><option value="must_never">must_never</option><option value="must_always">must_always</option></select></label>
    <label>Effect <select name="effect"><option value="">default</option><option value="block">block</option><option value="require_approval">require approval</option><option value="allow">allow (pre-approve)</option></select></label>
    <${Field} label="Description" name="description" required maxlength="2000" placeholder="never restart the database" />
    <${Field} label="Tool" name="tool" placeholder="run_command" />
    <label>Match <select name="match_type"><option value="glob">glob</option><option value="regex">regex</option><option value="command">command</option><option value="effect">effect</option></select></label>
    <${Field} label="Pattern" name="pattern" placeholder="*restart*" />`;
}

function WhatIf() {
  const [result, setResult] = useState(null);
  const [shown, setShown] = useState(null);
  const shadows = useLoad((signal) => pj('/api/rules/shadow', { signal }));
  async function preview(d) {
    setResult(await pj('/api/rules/preview', { method: 'POST', body: { days: Number(d.days) || 7, add: [rule(d)] } }));
  }
  async function shadow(d) {
    await pj('/api/rules/shadow', { method: 'POST', body: { ...rule(d), trial_days: Number(d.trial_days) || 7 } });
    shadows.reload();
  }
  return html`<${Page} title="Rules: what if" id="whatif-page">
    <section aria-labelledby="whatif-title"><h2 id="whatif-title">Try a rule against recorded calls</h2>
      <${Form} id="whatif-form" label="Preview a rule" onSubmit=${preview}><${RuleFields} />
        <${Field} label="Days of calls to replay" name="days" type="number" min="1" max="90" value="7" />
        <button type="submit">Preview</button></${Form}>
      ${result ? html`<div class="card" id="whatif-result" role="status"><p><strong>${result.calls_replayed}</strong> calls replayed${result.truncated ? ' (more were recorded)' : ''}:
        <strong>${result.newly_blocked}</strong> newly blocked, <strong>${result.newly_needing_approval}</strong> newly needing approval, <strong>${result.newly_allowed}</strong> newly allowed, ${result.unchanged} unchanged.</p>
        ${result.changes.length ? html`<table><thead><tr><th scope="col">When</th><th scope="col">Call</th><th scope="col">Change</th><th scope="col">Session</th></tr></thead>
          <tbody>${result.changes.map((c) => html`<tr><td>${when(c.at)}</td><td class="mono">${c.tool}: ${c.command}</td><td>${c.before} → <${Badge} s=${c.after} /></td>
            <td><a href=${'/sessions/' + c.session_id} data-link>open</a></td></tr>`)}</tbody></table>` : null}</div>` : null}
    </section>
    <section aria-labelledby="shadow-title"><h2 id="shadow-title">Shadow rules</h2>
      <p class="muted">A shadow rule decides nothing: it records each call it would have decided differently, until its trial ends. Promote it to make it a live rule.</p>
      <${Loaded} r=${shadows} isEmpty=${(d) => d.items.length === 0} empty="No shadow rules.">${(d) => html`<table id="shadow-table">
        <thead><tr><th scope="col">Rule</th><th scope="col">Trial</th><th scope="col">Would have changed</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
        <tbody>${d.items.map((s) => html`<tr data-rule-id=${s.id}><td>${s.kind} (${s.effect}): ${s.description}<div class="muted mono">${s.tool} ${s.match_type} ${s.pattern}</div></td>
          <td>${s.on_trial ? 'until ' + when(s.trial_until) : 'ended'}</td><td>${s.hits} call(s)${s.hits ? html` <button type="button" class="link shadow-show" onClick=${() => setShown(s.id)}>show<span class="visually-hidden"> the calls of ${s.description}</span></button>` : null}</td>
          <td><${Button} onClick=${async () => { await pj('/api/rules/shadow/' + s.id + '/promote', { method: 'POST' }); shadows.reload(); }}>Promote<span class="visually-hidden"> ${s.description}</span></${Button}>
            <${Button} class="danger" confirm="Delete this shadow rule?" onClick=${async () => { await pj('/api/rules/shadow/' + s.id, { method: 'DELETE' }); shadows.reload(); }}>Delete</${Button}></td></tr>`)}</tbody></table>`}</${Loaded}>
      ${shown ? html`<${Recorded} id=${shown} />` : null}
      <details><summary>New shadow rule</summary><${Form} id="shadow-create" label="New shadow rule" reset onSubmit=${shadow}><${RuleFields} />
        <${Field} label="Trial (days)" name="trial_days" type="number" min="1" max="90" value="7" />
        <button type="submit">Start trial</button></${Form}></details>
    </section>
  </${Page}>`;
}

// Recorded lists the calls a shadow rule would have decided differently.
function Recorded({ id }) {
  const r = useLoad((signal) => pj('/api/rules/shadow/' + id, { signal }), [id]);
  return html`<${Loaded} r=${r}>${(s) => html`<section class="card" id="shadow-recorded" aria-label="Calls the shadow rule would have decided differently">
    <h3>${s.description}: what it would have done</h3>
    <table><thead><tr><th scope="col">When</th><th scope="col">Call</th><th scope="col">Decided</th><th scope="col">Would have</th><th scope="col">Session</th></tr></thead>
      <tbody>${s.recorded.map((h) => html`<tr><td>${when(h.at)}</td><td class="mono">${h.tool}: ${h.command}</td><td><${Badge} s=${h.actual} /></td><td><${Badge} s=${h.would} /></td>
        <td>${h.session_id ? html`<a href=${'/sessions/' + h.session_id} data-link>open</a>` : '—'}</td></tr>`)}</tbody></table></section>`}</${Loaded}>`;
}
