// cluster.js — the nodes that serve the repositories of a PostgreSQL
// store, and each repository's lease: who holds it, its fencing token,
// when it expires. Read again every two seconds (a takeover is not an
// event of the log: no node writes while none holds the lease).

import { h, replace, badge, ago, clock } from './dom.js';
import * as api from './api.js';
import { flash, table, section, empty } from './ui.js';

// available reports whether this wilco is one node of several (GET
// /v1/cluster answers 404 on a SQLite store).
export async function available() {
  try {
    await api.get('/v1/cluster');
    return true;
  } catch (e) {
    if (e.status === 404) return false;
    throw e;
  }
}

export function clusterView(root) {
  const msg = h('div', { class: 'messages' });
  const head = h('p', { class: 'muted', id: 'cluster-node' });
  const nodes = h('div', { id: 'cluster-nodes' });
  const leases = h('div', { id: 'cluster-leases' });
  let gone = false;
  replace(root, h('div', { class: 'head' }, h('h1', null, 'Cluster')), msg, head,
    section('Nodes', nodes), section('Leases', leases));

  async function load() {
    let v;
    try {
      v = await api.get('/v1/cluster');
    } catch (e) {
      if (gone) return;
      if (e.status === 404) {
        replace(nodes, empty('One node: this wilco keeps its state in SQLite. With a PostgreSQL store several nodes serve a repository, and they show here.'));
        leases.replaceChildren();
        return;
      }
      flash(msg, e.message, 'error');
      return;
    }
    if (gone) return;
    msg.replaceChildren();
    const holder = new Map(v.leases.filter((l) => l.valid).map((l) => [l.holder, l]));
    head.textContent = 'This page is served by node ' + v.node + ' (' + (v.active ? 'active' : 'standby') + ') of repository ' + v.repository + '.';
    replace(nodes, v.nodes.length ? table(
      [['Node'], ['Repository'], ['Role'], ['URL'], ['Version'], ['Started'], ['Last heard']],
      v.nodes.map((n) => h('tr', { dataset: { node: n.id, role: n.active ? 'active' : 'standby' } },
        h('td', { class: 'mono' }, n.id, n.id === v.node ? h('span', { class: 'tag' }, 'this page') : null),
        h('td', null, n.repository),
        h('td', null, n.active ? badge('active') : badge('standby')),
        h('td', null, h('a', { href: n.url, class: 'mono' }, n.url)),
        h('td', null, n.version || '—'),
        h('td', null, clock(n.started_at)),
        h('td', null, ago(n.seen_at, Date.parse(v.time) || Date.now())))),
      { class: 'cluster-nodes' }) : empty('No node has been heard from.'));
    replace(leases, v.leases.length ? table(
      [['Repository'], ['Holder'], ['URL'], ['Fencing token', 'num'], ['State'], ['Renewed'], ['Expires']],
      v.leases.map((l) => h('tr', { dataset: { repository: l.repository, holder: l.holder } },
        h('td', null, l.repository),
        h('td', { class: 'mono' }, l.holder, holder.get(l.holder) && !v.nodes.some((n) => n.id === l.holder) ? ' (not heard from)' : null),
        h('td', null, h('a', { href: l.url, class: 'mono' }, l.url)),
        h('td', { class: 'num' }, String(l.token)),
        h('td', null, l.valid ? badge('held') : badge('expired')),
        h('td', null, clock(l.renewed_at)),
        h('td', null, l.valid ? 'in ' + Math.max(0, Math.round((Date.parse(l.expires_at) - Date.parse(v.time)) / 1000)) + 's' : clock(l.expires_at)))),
      { class: 'cluster-leases' }) : empty('No repository has a lease yet.'));
  }

  load();
  const tick = setInterval(load, 2000);
  return () => { gone = true; clearInterval(tick); };
}
