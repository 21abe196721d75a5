// Small DOM helpers. Everything is built with createElement and textContent,
// never innerHTML, so text from the API (model output, command lines) can
// never become markup.

// h builds an element: h('button', {class: 'x', onclick: fn}, 'Text', child).
// Attributes starting with "on" become listeners; null/false ones are skipped.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// put appends children to el like h does: null, undefined and false are
// skipped. Element.append would write them out as the text "null".
export function put(el, ...children) {
  append(el, children);
  return el;
}

// $ is getElementById.
export const $ = (id) => document.getElementById(id);

// when formats an ISO time for people; empty for null.
export function when(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  return isNaN(d) ? String(iso) : d.toLocaleString();
}

// money formats a USD amount.
export function money(n) {
  return typeof n === 'number' ? '$' + n.toFixed(n < 1 ? 4 : 2) : '';
}

// badge is a status pill; its class lets the CSS colour it.
export function badge(status) {
  return h('span', { class: 'badge badge-' + String(status || 'none').replace(/[^a-z_]/g, '') }, status || '—');
}

// alertBox is an error line screen readers announce.
export function alertBox(msg) {
  return h('p', { class: 'error', role: 'alert' }, msg);
}

// busy disables a button while an action runs, then re-enables it.
export async function busy(btn, fn) {
  btn.disabled = true;
  try { return await fn(); } finally { btn.disabled = false; }
}
