// The project's command policy (Project settings, tab "Rules"): whether
// run_command lines the analysis proves read-only run without a person,
// the project's additions to the built-in read-only list, and its
// additions to the effect categories that rules of match type "effect"
// name. The built-ins are shown beside each, read-only.

import { html, useState, useLoad, Loaded, Form, Field, when, pj } from './ui.js';

const lines = (s) => (s || '').split('\n').map((x) => x.trim()).filter(Boolean);

export function CommandPolicy() {
  const r = useLoad((signal) => pj('/api/command-policy', { signal }));
  const [msg, setMsg] = useState('');
  async function save(p, d) {
    const effects = {};
    for (const c of p.categories) {
      const added = lines(d['effects.' + c.name]);
      if (added.length) effects[c.name] = added;
    }
    const name = (d.new_category || '').trim();
    if (name) effects[name] = [...(effects[name] || []), ...lines(d.new_patterns)];
    await pj('/api/command-policy', { method: 'PUT', body: { auto_allow_read_only: d.auto_allow_read_only, read_only_commands: lines(d.read_only_commands), effects } });
    setMsg('Saved: the next run_command is judged by it.');
    r.reload();
  }
  return html`<section class="card" aria-labelledby="cp-title" id="command-policy"><h3 id="cp-title">Command policy</h3>
    <p class="muted">How the shell analysis reads this project's run_command lines. Rules of match type "effect" name the categories below; a command pattern is a command name then argument globs, e.g. <code>kubectl get *</code>.</p>
    <${Loaded} r=${r}>${(p) => html`<${Form} id="command-policy-form" key=${p.updated_at || 'never'} label="Command policy" onSubmit=${(d) => save(p, d)}>
      <label class="check"><input type="checkbox" name="auto_allow_read_only" defaultChecked=${p.auto_allow_read_only} /> Let lines the analysis proves read-only run without asking a person</label>
      <label>Also read-only in this project (one pattern per line)<textarea name="read_only_commands" rows="3" class="mono" placeholder="mytool status *" defaultValue=${p.read_only_commands.join('\n')}></textarea></label>
      <details><summary>Built-in read-only commands (${p.builtin_read_only.length})</summary><p class="mono small" id="cp-builtin-read-only">${p.builtin_read_only.join(' · ')}</p></details>
      <h4>Effect categories</h4>
      <div class="table-wrap"><table id="cp-categories"><thead><tr><th scope="col">Category</th><th scope="col">Built in</th><th scope="col">Added by this project (one per line)</th></tr></thead>
        <tbody>${p.categories.map((c) => html`<tr data-category=${c.name}><td><code>${c.name}</code><br /><span class="muted">${c.description}</span></td>
          <td>${c.builtin.length ? html`<details><summary>${c.builtin.length} pattern(s)</summary><p class="mono small">${c.builtin.join(' · ')}</p></details>` : html`<span class="muted">none</span>`}</td>
          <td><textarea name=${'effects.' + c.name} rows="2" class="mono" aria-label=${'Patterns added to ' + c.name} defaultValue=${c.added.join('\n')}></textarea></td></tr>`)}</tbody></table></div>
      <p class="muted">Emptying the patterns of a category the project made removes it.</p>
      <div class="grid2"><${Field} label="New category (optional)" name="new_category" data-field="effects" maxlength="64" placeholder="touches_payments" hint="Lower case letters, digits and _." autocomplete="off" />
        <label>Its patterns (one per line)<textarea name="new_patterns" rows="2" class="mono" placeholder="payctl *"></textarea></label></div>
      <button type="submit">Save command policy</button> <span class="muted">${p.updated_at ? 'last changed ' + when(p.updated_at) : 'never changed: the built-ins apply'}</span></${Form}>
      <p role="status" id="command-policy-msg">${msg}</p>`}</${Loaded}></section>`;
}
