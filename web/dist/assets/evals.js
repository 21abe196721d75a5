// Evaluations: an org replays investigation scenarios against its models,
// scored side by side (POST /api/evals, GET /api/evals, the report page).
// Scenarios are YAML files (testdata/evals/ in the repository holds a
// starter library); nothing real is reached while they run.

import { html, mount, useState, useEffect, useLoad, Loaded, Form, Field, Badge, when, api, pj } from './ui.js';

export function render(view, ctx) { mount(view, html`<${Evals} />`); }

const CLI = 'opsagent eval run testdata/evals --model qwen3:8b@http://127.0.0.1:11434/v1 --model gpt-4.1 --repeat 3 --html-report eval.html';

const pct = (f) => Math.round(100 * (f || 0)) + '%';

function Evals() {
  const r = useLoad((signal) => api('/api/evals?limit=50', { signal }), []);
  const [open, setOpen] = useState(null);
  // A running evaluation is polled until it finishes, then the list reloads.
  useEffect(() => {
    if (!open) return undefined;
    const timer = setInterval(async () => {
      try {
        const e = await api('/api/evals/' + open);
        if (e.status !== 'running') { clearInterval(timer); r.reload(); }
      } catch { clearInterval(timer); }
    }, 1000);
    return () => clearInterval(timer);
  }, [open]);
  async function start(d, form) {
    const files = [...(form.scenarios.files || [])];
    if (files.length === 0) throw new Error('Choose one or more scenario files (.yaml).');
    const scenarios = await Promise.all(files.map(async (f) => ({ name: f.name, yaml: await f.text() })));
    const models = (d.models || '').split(',').map((m) => m.trim()).filter(Boolean);
    const body = { scenarios, models, repeat: d.repeat || 1 };
    if (d.max_cost_usd) body.max_cost_usd = d.max_cost_usd;
    const e = await api('/api/evals', { method: 'POST', body });
    setOpen(e.id); r.reload();
  }
  return html`<div class="page" id="evals-page"><div class="heading"><h1>Evaluations</h1></div>
    <p class="muted">Replay investigations against a model or a prompt change and compare the scores side by side: pass rate, root cause found,
      unsafe calls, steps, tokens, cost and latency. Every tool and evidence source answers from the scenario, so nothing real is touched.</p>
    <${Form} id="eval-start" class="card" label="Start an evaluation" onSubmit=${start} reset>
      <label>Scenario files (YAML)<input type="file" name="scenarios" accept=".yaml,.yml" multiple required /></label>
      <div class="grid-2"><${Field} label="Models (comma-separated; empty: the organization's model)" name="models" maxlength="800" />
        <${Field} label="Runs per scenario and model" name="repeat" type="number" min="1" max="10" value="1" />
        <${Field} label="Stop after spending (USD, optional)" name="max_cost_usd" type="number" min="0" step="0.01" /></div>
      <button type="submit">Start</button></${Form}>
    <${Record} />
    <${Loaded} r=${r} isEmpty=${(p) => p.items.length === 0} empty=${{ title: 'No evaluations yet.', cli: CLI,
      children: 'Upload scenario files above, or run them from the terminal.' }}>${(p) => html`
      <div class="table-wrap"><table id="evals-list"><thead><tr><th scope="col">Started</th><th scope="col">Status</th><th scope="col">Models</th>
        <th scope="col">Scenarios</th><th scope="col">Pass rate</th><th scope="col">Report</th></tr></thead>
        <tbody>${p.items.map((e) => html`<tr data-eval-id=${e.id} class=${open === e.id ? 'selected' : null}>
          <td>${when(e.created_at)}</td><td><${Badge} s=${e.status} />${e.error ? html`<br /><span class="muted">${e.error}</span>` : null}</td>
          <td>${e.models.join(', ') || 'default'}</td><td class="num">${e.scenarios} × ${e.repeat}</td>
          <td class="num">${e.status === 'completed' ? pct(e.pass_rate) : '—'}</td>
          <td>${e.status === 'completed' ? html`<a href=${'/api/evals/' + e.id + '/report.html'} target="_blank" rel="noopener">Open the report</a>` : html`<button type="button" class="secondary" onClick=${() => r.reload()}>Refresh</button>`}</td></tr>`)}</tbody></table></div>`}</${Loaded}></div>`;
}

// Record turns a past incident of the current project into a scenario
// (GET /api/incidents/{id}/eval-scenario) to download, edit and run.
function Record() {
  const [file, setFile] = useState(null);
  async function record(d) {
    const id = (d.incident || '').trim();
    if (!/^[0-9a-f-]{36}$/.test(id)) throw new Error('Give the id of an incident of this project.');
    const rec = await pj('/api/incidents/' + id + '/eval-scenario');
    setFile({ name: rec.name + '.yaml', url: URL.createObjectURL(new Blob([rec.yaml], { type: 'application/yaml' })) });
  }
  return html`<${Form} id="eval-record" class="card" label="Record an incident as a scenario" onSubmit=${record}>
    <${Field} label="Incident id (of the current project): its alerts, evidence and every tool call with its output, masked" name="incident" maxlength="36" required />
    <button type="submit" class="secondary">Record</button>
    ${file ? html`<p><a id="eval-record-file" href=${file.url} download=${file.name}>Download ${file.name}</a>: edit its expect section, then upload it above.</p>` : null}</${Form}>`;
}
