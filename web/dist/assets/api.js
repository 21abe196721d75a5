// The console's only door to the server: same-origin fetch with the HttpOnly
// cookies, one refresh on 401, errors carrying the API's `detail`, and the
// SSE reader for POST /api/chat (EventSource cannot POST).

import { readSSE } from './sse.js';

// ApiError is a failed call; message is the server's detail.
export class ApiError extends Error {
  constructor(status, body) {
    super(detailOf(body, status));
    this.status = status;
    this.body = body;
  }
}

// detailOf turns {detail: "..."} or a FastAPI 422 list into one sentence.
export function detailOf(body, status) {
  const d = body && body.detail;
  if (typeof d === 'string') return d;
  if (Array.isArray(d)) {
    return d.map((e) => {
      const loc = Array.isArray(e.loc) ? e.loc.filter((p) => p !== 'body').join('.') : '';
      return (loc ? loc + ': ' : '') + (e.msg || 'invalid');
    }).join('; ');
  }
  return status ? 'Request failed (' + status + ')' : 'Request failed';
}

const state = { project: '', onSignedOut: () => {} };

// setProject chooses the X-Project-ID sent by calls made with {project: true}.
export function setProject(id) { state.project = id || ''; }
export function currentProject() { return state.project; }

// onSignedOut registers what to do when the session cannot be refreshed.
export function onSignedOut(fn) { state.onSignedOut = fn; }

const noRefresh = new Set(['/api/auth/login', '/api/auth/refresh', '/api/auth/register', '/api/auth/mfa/challenge', '/api/auth/logout']);

// send performs one request, refreshing the access cookie once on 401.
async function send(path, opts, retried) {
  const headers = Object.assign({ Accept: 'application/json' }, opts.headers || {});
  if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
  if (opts.project) {
    if (!state.project) throw new ApiError(0, { detail: 'Choose a project first.' });
    headers['X-Project-ID'] = state.project;
  }
  const r = await fetch(path, {
    method: opts.method || 'GET',
    credentials: 'same-origin',
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    signal: opts.signal,
  });
  if (r.status === 401 && !retried && !noRefresh.has(path)) {
    const rr = await fetch('/api/auth/refresh', { method: 'POST', credentials: 'same-origin' });
    if (rr.ok) return send(path, opts, true);
    state.onSignedOut();
  }
  return r;
}

// api calls a JSON endpoint and returns its decoded body (null for 204).
// opts: {method, body, project, headers, signal}.
export async function api(path, opts = {}) {
  const r = await send(path, opts, false);
  const text = r.status === 204 ? '' : await r.text();
  let body = null;
  if (text) {
    try { body = JSON.parse(text); } catch { body = { detail: text.slice(0, 200) }; }
  }
  if (!r.ok) throw new ApiError(r.status, body);
  return body;
}

// stream calls an SSE endpoint and yields {id, type, data} events until the
// server ends the stream. onOpen receives the Response (for X-Session-ID).
export async function* stream(path, opts = {}, onOpen) {
  const headers = Object.assign({ Accept: 'text/event-stream' }, opts.headers || {});
  const r = await send(path, Object.assign({}, opts, { headers }), false);
  if (!r.ok) {
    const body = await r.json().catch(() => null);
    throw new ApiError(r.status, body);
  }
  if (onOpen) onOpen(r);
  yield* readSSE(r.body);
}
