// What a form does with the server's answer, the same on every page: a 422
// in the FastAPI shape ({"detail": [{"loc": ["body", "field"], "msg": ...}]})
// puts each message beside the field it names (aria-invalid,
// aria-describedby, the first one focused); messages that name no field of
// the form, and the detail of a 409, 402 or 403, go to the form's own error
// line. Submissions carry an Idempotency-Key that stays the same while the
// same data is retried, and a second submit while the first is in flight is
// dropped, so a double click never makes two records.

let serial = 0;

// fieldFor finds the control a 422 entry's loc names: the dotted path
// ("trigger.cron"), then its last and first names; a control may answer
// to more names with data-field="a b".
export function fieldFor(form, loc) {
  const parts = (Array.isArray(loc) ? loc : []).filter((p) => p !== 'body' && p !== 'query' && p !== 'header' && p !== 'path');
  const names = [parts.join('.'), ...parts.filter((p) => typeof p === 'string').reverse()].filter(Boolean);
  // A <form> lists its controls; a plain container (the approval control) is searched.
  const controls = form.elements ? [...form.elements] : [...form.querySelectorAll('input, select, textarea')];
  for (const n of names) {
    for (const el of controls) {
      if (!el.name && !el.dataset.field) continue;
      if (el.type === 'hidden' || el.type === 'submit' || el.type === 'button') continue;
      if (el.name === n || (el.dataset.field || '').split(' ').includes(n)) return el;
    }
  }
  return null;
}

// clearErrors removes what showErrors added (or only one field's message).
export function clearErrors(form, only) {
  for (const el of form.querySelectorAll('[data-error-for]')) {
    const field = form.querySelector('[data-error-id="' + el.id + '"]');
    if (only && field !== only) continue;
    if (field) {
      field.removeAttribute('aria-invalid');
      const kept = (field.getAttribute('aria-describedby') || '').split(' ').filter((x) => x && x !== el.id).join(' ');
      if (kept) field.setAttribute('aria-describedby', kept); else field.removeAttribute('aria-describedby');
      field.removeAttribute('data-error-id');
    }
    el.remove();
  }
}

// showErrors marks the fields an error names and returns the text for the
// form's error line ('' when every message sits beside its field).
export function showErrors(form, error) {
  clearErrors(form);
  const detail = error && error.body && error.body.detail;
  if (!error || error.status !== 422 || !Array.isArray(detail)) return error ? (error.message || String(error)) : '';
  const rest = [];
  let first = null;
  for (const e of detail) {
    const msg = e.msg || 'invalid';
    const field = fieldFor(form, e.loc);
    if (!field) { rest.push(locText(e.loc) + msg); continue; }
    const had = field.dataset.errorId && document.getElementById(field.dataset.errorId);
    if (had) { had.textContent += '; ' + msg; continue; }
    const id = 'field-error-' + (++serial);
    const note = document.createElement('span');
    note.className = 'field-error';
    note.id = id;
    note.dataset.errorFor = field.name || '';
    note.textContent = msg;
    const label = field.closest('label');
    if (label && form.contains(label)) label.append(note); else field.after(note);
    field.setAttribute('aria-invalid', 'true');
    field.setAttribute('aria-describedby', ((field.getAttribute('aria-describedby') || '') + ' ' + id).trim());
    field.dataset.errorId = id;
    field.addEventListener('input', () => clearErrors(form, field), { once: true });
    if (!first) first = field;
  }
  // The fieldset may still be disabled while the form redraws: focus after.
  if (first) setTimeout(() => first.focus(), 0);
  if (rest.length) return rest.join('; ');
  return detail.length === 1 ? 'Check the marked field.' : 'Check the ' + detail.length + ' marked fields.';
}

function locText(loc) {
  const parts = (Array.isArray(loc) ? loc : []).filter((p) => p !== 'body');
  return parts.length ? parts.join('.') + ': ' : '';
}

// newKey is an Idempotency-Key (crypto.randomUUID needs a secure context;
// getRandomValues does not).
export function newKey() {
  const b = crypto.getRandomValues(new Uint8Array(16));
  return [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
}

// submitter keeps one key per form: the same while the same data is sent
// again (a retry after a lost answer), a new one once it succeeded or the
// data changed. begin() returns null while a submission is in flight.
export function submitter() {
  let pending = false;
  let last = null;
  return {
    begin(data) {
      if (pending) return null;
      pending = true;
      const sig = signature(data);
      if (!last || last.sig !== sig) last = { sig, key: newKey() };
      return last.key;
    },
    end(ok) { pending = false; if (ok) last = null; },
  };
}

function signature(data) {
  try { return JSON.stringify(data, (k, v) => (typeof File !== 'undefined' && v instanceof File ? v.name + ':' + v.size : v)); } catch { return String(Math.random()); }
}

// wireForm gives a form built with dom.js the same behaviour as ui.js's
// Form: fn(key) sends it; errors land beside the fields or in errorEl.
export function wireForm(form, errorEl, fn) {
  const sub = submitter();
  const button = form.querySelector('button[type=submit]');
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const key = sub.begin([...new FormData(form).entries()]);
    if (!key) return;
    if (button) button.disabled = true;
    clearErrors(form);
    errorEl.replaceChildren();
    let ok = false;
    try { await fn(key); ok = true; } catch (x) {
      const msg = showErrors(form, x);
      if (msg) errorEl.replaceChildren(alert(msg));
    } finally { sub.end(ok); if (button) button.disabled = false; }
  });
}

function alert(msg) {
  const p = document.createElement('p');
  p.className = 'error';
  p.setAttribute('role', 'alert');
  p.textContent = msg;
  return p;
}
