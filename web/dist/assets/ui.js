// The console's component kit on Preact + htm (vendored in /vendor, no build
// step): html`` templates, hooks, and the pieces every page shares — loading,
// empty and error states, copy-once secrets, buttons that show they are busy.
// Text from the API is always rendered as text, never as markup.

import { h, render, Fragment } from '../vendor/preact.mjs';
import { useState, useEffect, useRef, useCallback, useMemo } from '../vendor/hooks.mjs';
import htm from '../vendor/htm.mjs';
import { api } from './api.js';
import { submitter, showErrors, clearErrors } from './forms.js';

export const html = htm.bind(h);
export { render, Fragment, useState, useEffect, useRef, useCallback, useMemo, api };

// mount renders a page component into the view; unmount clears it (the
// router calls it before drawing the next page).
export function mount(view, vnode) { render(vnode, view); }
export function unmount(view) { render(null, view); }

// useLoad runs an async loader (given an AbortSignal) and re-runs it when
// deps change or reload() is called.
export function useLoad(fn, deps = []) {
  const [state, set] = useState({ loading: true, data: null, error: null });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const ac = new AbortController();
    set((s) => ({ ...s, loading: true, error: null }));
    fn(ac.signal).then((data) => { if (!ac.signal.aborted) set({ loading: false, data, error: null }); },
      (error) => { if (!ac.signal.aborted) set({ loading: false, data: null, error }); });
    return () => ac.abort();
  }, [...deps, tick]);
  return { ...state, reload: () => setTick((t) => t + 1) };
}

// Loaded draws a useLoad result: a spinner line, the API's detail, or children(data).
export function Loaded({ r, children, empty, isEmpty }) {
  if (r.loading && !r.data) return html`<p class="loading" role="status">Loading…</p>`;
  if (r.error) return html`<${ErrorLine} error=${r.error} />`;
  if (isEmpty && isEmpty(r.data)) return typeof empty === 'object' && empty && empty.title ? html`<${Empty} ...${empty} />` : html`<p class="empty">${empty || 'Nothing here yet.'}</p>`;
  return children(r.data);
}

// Empty is the one empty state: what is missing, what to do next in the
// console, and the same from the command line or with curl.
export function Empty({ title, children, cli, id }) {
  return html`<div class="empty-state" id=${id}><p class="empty empty-title">${title}</p>${children ? html`<p>${children}</p>` : null}
    ${cli ? html`<p class="muted">From the command line:</p><pre class="cli">${cli}</pre>` : null}</div>`;
}

// ErrorLine shows an error's message (the API's detail) to screen readers too.
export function ErrorLine({ error }) {
  if (!error) return null;
  return html`<p class="error" role="alert">${typeof error === 'string' ? error : error.message}</p>`;
}

// Button runs an async action, disabled while it runs; a failure is shown beside it.
export function Button({ onClick, children, class: cls, id, label, confirm: ask, type }) {
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState(null);
  async function click(e) {
    if (ask && !window.confirm(ask)) return;
    setBusy(true); setErr(null);
    try { await onClick(e); } catch (x) { setErr(x); } finally { setBusy(false); }
  }
  return html`<${Fragment}><button type=${type || 'button'} class=${cls} id=${id} aria-label=${label} disabled=${busy} onClick=${click}>${children}</button>${err ? html`<span class="error" role="alert"> ${err.message}</span>` : null}</${Fragment}>`;
}

// Form collects its named fields into an object and calls onSubmit(data,
// form, key) with it; key is the submission's Idempotency-Key (forms.js:
// the same on a retry of the same data). A second submit while one is in
// flight is dropped. On failure the server's 422 messages appear beside
// their fields and anything else (a 409's detail) under the form.
export function Form({ onSubmit, children, id, class: cls, label, reset }) {
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState(null);
  const sub = useRef(null);
  if (!sub.current) sub.current = submitter();
  async function submit(e) {
    e.preventDefault();
    const f = e.currentTarget;
    const data = {};
    for (const el of f.elements) {
      if (!el.name || el.disabled) continue;
      if (el.type === 'checkbox') data[el.name] = el.checked;
      else if (el.type === 'number') data[el.name] = el.value === '' ? null : Number(el.value);
      else if (el.type === 'file') data[el.name] = el.files[0] || null;
      else if (el.multiple) data[el.name] = [...el.selectedOptions].map((o) => o.value);
      else data[el.name] = el.value;
    }
    const key = sub.current.begin(data);
    if (!key) return;
    setBusy(true); setErr(null); clearErrors(f);
    let ok = false;
    try { await onSubmit(data, f, key); ok = true; if (reset) f.reset(); } catch (x) { setErr(showErrors(f, x) || null); } finally { sub.current.end(ok); setBusy(false); }
  }
  return html`<form id=${id} class=${cls} aria-label=${label} onSubmit=${submit} aria-busy=${busy ? 'true' : null}>
    <fieldset disabled=${busy}>${children}</fieldset><${ErrorLine} error=${err} /></form>`;
}

// copyText copies to the clipboard; outside a secure context it falls back
// to selecting a temporary field.
export async function copyText(text) {
  try { await navigator.clipboard.writeText(text); return; } catch { /* fall back */ }
  const t = document.createElement('textarea');
  t.value = text; document.body.append(t); t.select();
  document.execCommand('copy'); t.remove();
}

// Copyable is a read-only value with a copy button (URLs, secrets shown once).
export function Copyable({ label, value, id, multiline }) {
  const [done, setDone] = useState(false);
  const field = multiline
    ? html`<textarea id=${id} readonly rows=${Math.min(14, String(value).split('\n').length + 1)} class="mono" value=${value}></textarea>`
    : html`<input id=${id} readonly value=${value} class="mono" />`;
  return html`<div class="copyable"><label>${label}${field}</label>
    <button type="button" class="secondary copy" aria-label=${'Copy ' + label} onClick=${async () => { await copyText(value); setDone(true); setTimeout(() => setDone(false), 1500); }}>${done ? 'Copied' : 'Copy'}</button></div>`;
}

// Badge is a status pill coloured by the CSS.
export function Badge({ s }) {
  return html`<span class=${'badge badge-' + String(s || 'none').replace(/[^a-z_]/g, '')}>${s || '—'}</span>`;
}

// Tabs: a keyboard-friendly tab list (arrow keys move between tabs).
export function Tabs({ tabs, current, onChange, label }) {
  function key(e, i) {
    const d = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
    if (!d) return;
    const n = tabs[(i + d + tabs.length) % tabs.length];
    onChange(n.id);
    setTimeout(() => document.getElementById('tab-' + n.id)?.focus());
  }
  return html`<div class="tabs" role="tablist" aria-label=${label}>${tabs.map((t, i) => html`
    <button type="button" role="tab" id=${'tab-' + t.id} aria-selected=${t.id === current ? 'true' : 'false'} aria-controls="tabpanel"
      tabindex=${t.id === current ? 0 : -1} class="tab" onClick=${() => onChange(t.id)} onKeyDown=${(e) => key(e, i)}>${t.label}</button>`)}</div>`;
}

export function when(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  return isNaN(d) ? String(iso) : d.toLocaleString();
}

export function money(n) { return typeof n === 'number' ? '$' + n.toFixed(n < 1 ? 4 : 2) : '—'; }

// Link navigates inside the console (the router catches data-link clicks).
export function Link({ href, children, class: cls, id }) {
  return html`<a href=${href} data-link class=${cls} id=${id}>${children}</a>`;
}

// Page is a page's frame: title, optional actions, body.
export function Page({ title, actions, children, id }) {
  return html`<div class="page" id=${id}><div class="heading"><h1>${title}</h1>${actions ? html`<div class="actions">${actions}</div>` : null}</div>${children}</div>`;
}

// Field is a labelled input; extra props go to the input.
export function Field({ label, hint, ...props }) {
  return html`<label>${label}<input ...${props} />${hint ? html`<span class="muted hint">${hint}</span>` : null}</label>`;
}

// Select is a labelled select of [value, text] pairs. A select element has
// no defaultValue, so the initial choice is marked on its option.
export function Select({ label, options, defaultValue, ...props }) {
  const pick = (v) => defaultValue !== undefined && defaultValue !== null && String(v) === String(defaultValue);
  return html`<label>${label}<select ...${props}>${options.map(([v, t]) => html`<option value=${v} selected=${pick(v)}>${t}</option>`)}</select></label>`;
}

// Bar is a labelled spend meter (used against budget caps).
export function Bar({ value, max, label }) {
  const pct = max ? Math.min(100, (value / max) * 100) : 0;
  return html`<div class="bar-row"><span>${label}</span><meter min="0" max=${max || 1} value=${value || 0} high=${(max || 1) * 0.8} optimum="0" aria-label=${label}></meter>
    <span class="muted">${money(value)}${max ? ' of ' + money(max) + ' (' + pct.toFixed(0) + '%)' : ' (no cap)'}</span></div>`;
}

// pj is shorthand for a project-scoped call.
export const pj = (path, opts = {}) => api(path, { ...opts, project: true });
