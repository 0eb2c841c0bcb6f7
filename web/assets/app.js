// app.js — the page: login, the header, and the views by the URL's
// fragment (#/tasks, #/tasks/T-1, #/agents…). Everything on it comes from
// wilco's HTTP API and stays current from its event stream.

import { h, replace } from './dom.js';
import * as api from './api.js';
import * as live from './live.js';
import { tasksView } from './tasks.js';
import { taskView } from './task.js';
import { agentsView } from './agents.js';
import { instructionsView, operationsView } from './deliveries.js';
import { numbersView } from './numbers.js';
import { notificationsView } from './notify.js';
import { clusterView, available as clusterAvailable } from './cluster.js';

const views = [
  { path: 'tasks', title: 'Tasks', view: tasksView },
  { path: 'agents', title: 'Agents', view: agentsView },
  { path: 'instructions', title: 'Instructions', view: instructionsView },
  { path: 'operations', title: 'Operations', view: operationsView },
  { path: 'numbers', title: 'Numbers', view: numbersView },
  { path: 'notifications', title: 'Notifications', view: notificationsView },
  { path: 'cluster', title: 'Cluster', view: clusterView, hidden: true },
];

const main = document.getElementById('main');
const nav = document.getElementById('nav');
const status = document.getElementById('live');
const who = document.getElementById('who');
let unmount = null;
let started = false;

// route reads the fragment: #/tasks/T-1?x=y → {name: 'tasks', id: 'T-1', params}.
function route() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [path, query] = raw.split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  return { name: parts[0] || 'tasks', id: parts[1], params: new URLSearchParams(query || '') };
}

function render() {
  const r = route();
  if (unmount) { unmount(); unmount = null; }
  for (const a of nav.querySelectorAll('a')) a.classList.toggle('active', a.dataset.view === r.name);
  const v = views.find((x) => x.path === r.name);
  const el = h('div', { class: 'view' });
  replace(main, el);
  if (!v) {
    el.append(h('p', null, 'No such view: ', r.name));
    return;
  }
  document.title = (r.id ? r.id + ' · ' : '') + v.title + ' · wilco';
  const fn = r.name === 'tasks' && r.id ? taskView : v.view;
  unmount = fn(el, r) || null;
}

function showLogin(message) {
  live.stop();
  started = false;
  if (unmount) { unmount(); unmount = null; }
  nav.hidden = true;
  who.replaceChildren();
  const err = h('p', { class: 'error', id: 'login-error' }, message || '');
  const token = h('input', { type: 'password', id: 'login-token', autocomplete: 'off', placeholder: 'the admin token', required: true });
  const form = h('form', { class: 'login card', id: 'login' },
    h('h1', null, 'Log in to wilco'),
    h('p', null, 'Open the link ', h('code', null, 'wilco serve'), ' printed (it logs this browser in once), print another with ',
      h('code', null, 'wilco web'), ', or give the admin token (', h('code', null, '.wilco/token'), ').'),
    h('label', { for: 'login-token' }, 'Admin token'), token,
    h('button', { type: 'submit', class: 'primary' }, 'Log in'), err);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      await api.login({ token: token.value.trim() });
      token.value = '';
      boot();
    } catch (x) {
      err.textContent = x.message;
    }
  });
  replace(main, form);
  token.focus();
}

async function boot() {
  // A login link: #login=<code>. The code is used once and taken out of
  // the address bar (and the history) at once.
  const m = location.hash.match(/^#login=([A-Za-z0-9_-]+)/);
  let loginError = '';
  if (m) {
    history.replaceState(null, '', location.pathname + '#/tasks');
    try {
      await api.login({ code: m[1] });
    } catch (e) {
      loginError = e.message;
    }
  }
  let s;
  try {
    s = await api.session();
  } catch (e) {
    replace(main, h('p', { class: 'error' }, e.message));
    return;
  }
  if (!s) {
    showLogin(loginError);
    return;
  }
  nav.hidden = false;
  // The cluster's view only where there is one (a PostgreSQL store).
  clusterAvailable().then((yes) => {
    const a = nav.querySelector('a[data-view="cluster"]');
    if (a) a.hidden = !yes;
  }).catch(() => {});
  replace(who, h('button', { class: 'link', id: 'logout', onclick: async () => { await api.logout().catch(() => {}); showLogin('Logged out.'); } }, 'Log out'));
  if (!started) {
    // The stream starts at the current head: each view reads the state
    // first, then follows the events after it.
    const health = await fetch('/healthz', { cache: 'no-store' }).then((r) => r.json()).catch(() => ({ seq: 0 }));
    live.start(health.seq || 0);
    started = true;
  }
  render();
}

api.setLoggedOutHandler((msg) => showLogin(msg));
live.setLoggedOutHandler((msg) => showLogin('Logged out: ' + msg + '.'));
live.onState((st) => {
  status.textContent = st === 'live' ? '● live' : st === 'stopped' ? '' : '○ ' + st + '…';
  status.className = 'live ' + st.replace(/\s+/g, '-');
});

replace(nav, views.map((v) => h('a', { href: '#/' + v.path, dataset: { view: v.path }, hidden: v.hidden || null }, v.title)));
window.addEventListener('hashchange', () => {
  if (/^#login=/.test(location.hash)) boot();
  else if (started) render();
});

// What the page measured of the event stream, for whoever looks (the
// browser test reads it).
window.wilco = { latency: live.latency, resetLatency: live.resetLatency };

boot();
