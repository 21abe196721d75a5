// Projects of the current organization: pick one, or create one.

import { api } from './api.js';
import { h, when } from './dom.js';
import { wireForm } from './forms.js';
import { currentProject } from './api.js';

export async function render(view, ctx) {
  const list = h('div');
  const name = h('input', { id: 'project-name', name: 'name', required: true, maxlength: 120 });
  const desc = h('input', { name: 'description', maxlength: 2000 });
  const errors = h('div');
  const submit = h('button', { type: 'submit' }, 'Create project');
  const form = h('form', { id: 'project-create', class: 'card' },
    h('h2', {}, 'New project'), h('label', {}, 'Name ', name), h('label', {}, 'Description ', desc), submit, errors);
  view.append(h('h1', {}, 'Projects'), list, form);

  function draw() {
    const ps = ctx.app.projects;
    if (!ps.length) { list.replaceChildren(h('p', { class: 'empty' }, 'This organization has no project yet.')); return; }
    list.replaceChildren(h('table', { id: 'projects-table' },
      h('thead', {}, h('tr', {}, ['Project', 'Created', ''].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, ps.map((p) => h('tr', {},
        h('td', {}, h('strong', {}, p.name), p.description ? h('div', { class: 'muted' }, p.description) : null),
        h('td', {}, when(p.created_at)),
        h('td', {}, p.id === currentProject()
          ? h('span', { class: 'badge badge-current' }, 'current')
          : h('button', { type: 'button', class: 'secondary', onclick: async () => { await ctx.chooseProject(p.id); draw(); } }, 'Use this project')))))));
  }
  wireForm(form, errors, async () => {
    const body = { name: name.value.trim() };
    if (desc.value.trim()) body.description = desc.value.trim();
    const first = ctx.app.projects.length === 0;
    const p = await api('/api/projects', { method: 'POST', body });
    // A first project made here (the wizard skipped, or an invited person
    // starting their own) finishes the onboarding: the wizard stays away.
    if (first) await api('/api/onboarding/complete', { method: 'POST' }).catch(() => null);
    await ctx.chooseProject(p.id); // remembered before the selector shows it
    await ctx.loadContext();
    form.reset();
    draw();
  });
  draw();
}
