// Tasks: the project's scheduled agent runs. Enable/disable, run now, and
// create one from the built-in templates.

import { api } from './api.js';
import { h, badge, when, alertBox, busy } from './dom.js';

export async function render(view, ctx) {
  const list = h('div');
  const notice = h('div', { role: 'status', class: 'muted' });
  view.append(h('h1', {}, 'Tasks'), await templatePicker(ctx, load, notice), notice, list);

  async function load() {
    try {
      const page = await api('/api/tasks?limit=100&sort=name_asc', { project: true, signal: ctx.signal });
      list.replaceChildren(table(page));
    } catch (e) {
      if (!ctx.signal.aborted) list.replaceChildren(alertBox(e.message));
    }
  }

  function table(page) {
    if (!page.items.length) return h('p', { class: 'empty' }, 'No tasks yet. Create one from a template above.');
    return h('table', { id: 'tasks-table' },
      h('thead', {}, h('tr', {}, ['Task', 'Schedule', 'Enabled', 'Last run', 'Next run', 'Actions'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, page.items.map(row)));
  }

  function row(t) {
    const toggle = h('button', { type: 'button', class: 'secondary', 'aria-pressed': String(t.enabled) }, t.enabled ? 'Disable' : 'Enable');
    const run = h('button', { type: 'button', disabled: !t.enabled }, 'Run now');
    toggle.addEventListener('click', () => busy(toggle, async () => {
      try {
        await api('/api/tasks/' + t.id, { method: 'PATCH', body: { enabled: !t.enabled }, project: true });
        notice.textContent = (t.enabled ? 'Disabled ' : 'Enabled ') + t.name + '.';
        await load();
      } catch (e) { notice.replaceChildren(alertBox(e.message)); }
    }));
    run.addEventListener('click', () => busy(run, async () => {
      try {
        const r = await api('/api/tasks/' + t.id + '/trigger', { method: 'POST', project: true, headers: { 'Idempotency-Key': crypto.randomUUID() } });
        notice.replaceChildren('Started ' + t.name + ': ', h('a', { href: '/sessions/' + r.session_id, 'data-link': true }, 'follow the run'), '.');
      } catch (e) { notice.replaceChildren(alertBox(e.message)); }
    }));
    return h('tr', { dataset: { taskId: t.id } },
      h('td', {}, h('strong', {}, t.name), t.description ? h('div', { class: 'muted' }, t.description) : null),
      h('td', {}, h('code', {}, t.schedule || 'manual'), t.timezone && t.schedule ? h('div', { class: 'muted' }, t.timezone) : null),
      h('td', {}, badge(t.enabled ? 'enabled' : 'disabled')),
      h('td', {}, t.last_status ? badge(t.last_status) : '—', ' ', t.last_session_id ? h('a', { href: '/sessions/' + t.last_session_id, 'data-link': true }, when(t.last_run_at)) : '', t.last_error ? h('div', { class: 'error' }, t.last_error) : null),
      h('td', {}, when(t.next_run_at) || '—'),
      h('td', { class: 'actions' }, toggle, run));
  }

  await load();
}

async function templatePicker(ctx, reload, notice) {
  const templates = await api('/api/task-templates', { signal: ctx.signal });
  const select = h('select', { id: 'template-select', name: 'template_id', required: true },
    h('option', { value: '' }, 'Choose a template…'),
    groupBy(templates, 'category').map(([cat, ts]) => h('optgroup', { label: cat || 'other' }, ts.map((t) => h('option', { value: t.id }, t.name)))));
  const name = h('input', { name: 'name', maxlength: 120, placeholder: 'defaults to the template name' });
  const about = h('p', { class: 'muted' });
  const errors = h('div');
  const submit = h('button', { type: 'submit' }, 'Create task');
  select.addEventListener('change', () => {
    const t = templates.find((x) => x.id === select.value);
    about.textContent = t ? t.description + (t.schedule ? ' Schedule: ' + t.schedule + '.' : '') : '';
  });
  const form = h('form', { id: 'task-create', class: 'card' },
    h('h2', {}, 'New task from a template'),
    h('label', {}, 'Template ', select), about,
    h('label', {}, 'Name ', name), submit, errors);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    busy(submit, async () => {
      errors.replaceChildren();
      const body = { template_id: select.value };
      if (name.value.trim()) body.name = name.value.trim();
      try {
        const t = await api('/api/tasks', { method: 'POST', body, project: true });
        notice.textContent = 'Created ' + t.name + (t.enabled ? '.' : ' (disabled).');
        form.reset();
        about.textContent = '';
        await reload();
      } catch (err) { errors.replaceChildren(alertBox(err.message)); }
    });
  });
  return form;
}

function groupBy(items, key) {
  const m = new Map();
  for (const it of items) { const k = it[key] || ''; if (!m.has(k)) m.set(k, []); m.get(k).push(it); }
  return [...m.entries()];
}
