// Onboarding: a new account names its organization and first project, can
// start from a task template (POST /api/onboarding/bootstrap, one
// transaction, idempotent), then optionally connects alerts to that task.

import { html, mount, useState, useLoad, Loaded, Form, Field, Select, Button, api, Link } from './ui.js';
import { providers, SenderConfig } from './sender.js';

export function render(view, ctx) { mount(view, html`<${Wizard} ctx=${ctx} />`); }

function Wizard({ ctx }) {
  const [made, setMade] = useState(null);
  const [hook, setHook] = useState(null);
  const templates = useLoad((signal) => api('/api/task-templates', { signal }).catch(() => []));
  const key = useState(() => 'onboarding-' + crypto.randomUUID())[0];
  const org = ctx.app.orgs.find((o) => o.current);

  async function bootstrap(d) {
    const body = { org_name: d.org_name, project_name: d.project_name };
    if (d.project_description) body.project_description = d.project_description;
    if (d.task_template) body.task_template = d.task_template;
    const out = await api('/api/onboarding/bootstrap', { method: 'POST', body, headers: { 'Idempotency-Key': key } });
    await ctx.loadContext();
    await ctx.chooseProject(out.project.id);
    setMade(out);
  }
  async function connect(d) {
    setHook(await api('/api/tasks/' + made.task_id + '/webhook', { method: 'PUT', project: true, body: { provider: d.provider } }));
  }
  async function skip() {
    await api('/api/onboarding/skip', { method: 'POST' });
    ctx.go('/projects');
  }
  const step = !made ? 1 : made.task_id && !hook ? 2 : 3;
  return html`<section class="card wizard" id="onboarding" aria-labelledby="wizard-title">
    <h1 id="wizard-title">Set up opsagent</h1>
    <ol class="steps" aria-label="Steps">
      ${['Organization and project', 'Connect alerts', 'Done'].map((s, i) => html`<li aria-current=${step === i + 1 ? 'step' : null}>${s}</li>`)}
    </ol>
    ${step === 1 ? html`<${Form} id="onboarding-form" onSubmit=${bootstrap} label="Organization and project">
        <${Field} label="Organization name" name="org_name" required maxlength="120" defaultValue=${org && !org.personal ? org.name : ''} autocomplete="organization" />
        <${Field} label="First project" name="project_name" required maxlength="120" placeholder="production" />
        <${Field} label="Description (optional)" name="project_description" maxlength="2000" />
        <${Loaded} r=${templates}>${(ts) => html`<${Select} label="First task (optional)" name="task_template" id="onboarding-template"
          options=${[['', 'No task yet'], ...ts.map((t) => [t.id, t.name + ' — ' + t.category])]} />`}</${Loaded}>
        <div class="actions"><button type="submit">Create</button><${Button} class="secondary" onClick=${skip}>Skip for now</${Button}></div>
      </${Form}>` : null}
    ${step === 2 ? html`<p>Created <strong>${made.project.name}</strong> in <strong>${made.organization.name}</strong> with its first task.
        Where do its alerts come from?</p>
      <${Form} id="onboarding-webhook" onSubmit=${connect} label="Connect alerts">
        <${Select} label="Alert source" name="provider" options=${providers} />
        <div class="actions"><button type="submit">Create webhook</button>
          <button type="button" class="secondary" onClick=${() => setHook({ skipped: true })}>Not now</button></div>
      </${Form}>` : null}
    ${step === 3 ? html`<div id="onboarding-done">
      ${hook && !hook.skipped ? html`<${SenderConfig} hook=${hook} secret=${hook.secret} />` : null}
      <p role="status">Your project <strong>${made.project.name}</strong> is ready.</p>
      <div class="actions"><${Link} href="/dashboard" class="button">Go to the dashboard</${Link}>
        <${Link} href="/chat" class="button secondary">Ask the agent something</${Link}></div></div>` : null}
  </section>`;
}
