// api.js — the page's calls to wilco's HTTP API, with the session cookie
// (sent by the browser) and the session's CSRF token on every call that
// changes something.

let csrf = '';
let onLoggedOut = () => {};

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function setLoggedOutHandler(fn) { onLoggedOut = fn; }

// call sends one request. body: undefined (none) or a value sent as JSON.
// It answers the decoded JSON, the text (opts.text), or null for 204.
export async function call(method, path, body, opts = {}) {
  const headers = { Accept: opts.text ? 'text/plain' : 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (method !== 'GET' && method !== 'HEAD') headers['X-CSRF-Token'] = csrf;
  let r;
  try {
    r = await fetch(path, {
      method, headers, credentials: 'same-origin', cache: 'no-store',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    throw new ApiError(0, 'unavailable', 'wilco does not answer (' + e.message + '): is `wilco serve` still running?');
  }
  if (!r.ok) {
    let code = 'http_' + r.status;
    let message = r.statusText;
    try {
      const e = (await r.json()).error;
      if (e) { code = e.code || code; message = e.message || message; }
    } catch { /* not JSON */ }
    if (r.status === 401 && !opts.quiet401) onLoggedOut(message);
    throw new ApiError(r.status, code, message);
  }
  if (r.status === 204) return null;
  return opts.text ? r.text() : r.json();
}

export const get = (path, opts) => call('GET', path, undefined, opts);
export const post = (path, body, opts) => call('POST', path, body, opts);
export const del = (path, opts) => call('DELETE', path, undefined, opts);

// session reads the current session (null when not logged in).
export async function session() {
  try {
    const s = await get('/v1/session', { quiet401: true });
    csrf = s.csrf_token || '';
    return s;
  } catch (e) {
    if (e.status === 401) return null;
    throw e;
  }
}

// login logs in with a login link's code or the admin token.
export async function login(body) {
  const s = await call('POST', '/v1/session', body, { quiet401: true });
  csrf = s.csrf_token || '';
  return s;
}

export async function logout() {
  try { await del('/v1/session'); } finally { csrf = ''; }
}

export const q = (params) => {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') u.set(k, v);
  }
  const s = u.toString();
  return s ? '?' + s : '';
};

export const enc = encodeURIComponent;
