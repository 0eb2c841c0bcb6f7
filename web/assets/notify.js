// notify.js — the notifications wilco sent (webhooks, desktop): each
// delivery's state, attempts and last error. A server without notify: in
// wilco.yaml answers 404: nothing is configured.

import { h, replace, badge, clock, taskLink, coalesce } from './dom.js';
import * as api from './api.js';
import * as live from './live.js';
import { flash, table, empty } from './ui.js';

const LIMIT = 200;

export function notificationsView(root, r) {
  const state = r.params.get('state') || '';
  const msg = h('div', { class: 'messages' });
  const list = h('div', { id: 'notifications' });
  let gone = false;
  replace(root,
    h('div', { class: 'head' }, h('h1', null, 'Notifications'), h('span', { class: 'muted' }, 'webhooks and desktop notifications, delivered at least once')),
    h('nav', { class: 'tabs' }, ['', 'pending', 'delivered', 'failed'].map((st) => h('a', {
      href: '#/notifications' + (st ? '?state=' + st : ''), class: ['tab', st === state && 'active'], dataset: { filter: st || 'all' },
    }, st || 'All'))),
    msg, list);

  const load = coalesce(async () => {
    let res;
    try {
      res = await api.get('/v1/notifications' + api.q({ state, limit: LIMIT }));
    } catch (e) {
      if (e.status === 404) {
        if (!gone) {
          replace(list, h('div', { class: 'card empty', id: 'no-notifications' },
            h('p', null, h('strong', null, 'No notifications are configured.')),
            h('p', null, 'Add ', h('code', null, 'notify:'), ' to wilco.yaml — webhooks (JSON or Slack) and desktop notifications — to hear when a task escalates, gets stuck or waits for you.')));
        }
        return;
      }
      throw e;
    }
    if (gone) return;
    const rows = res.notifications || [];
    if (!rows.length) { replace(list, empty('No notification' + (state ? ' ' + state : '') + ' yet.')); return; }
    replace(list, table([['Id'], ['Hook'], ['Event'], ['Task'], ['State'], ['Attempts', 'num'], ['Last answer'], ['Created'], ['Delivered']],
      rows.map((n) => h('tr', { dataset: { notification: String(n.id), state: n.state } },
        h('td', { class: 'mono' }, String(n.id)), h('td', null, n.hook), h('td', null, n.event),
        h('td', null, n.task_id ? taskLink(n.task_id) : '—'), h('td', null, badge(n.state)),
        h('td', { class: 'num' }, String(n.attempts)),
        h('td', null, n.last_status ? 'HTTP ' + n.last_status : '', n.last_error ? h('div', { class: 'muted small' }, n.last_error) : null),
        h('td', null, clock(n.created_at)), h('td', null, clock(n.delivered_at)))),
      { class: 'notifications' }));
  });

  const unsub = live.subscribe((ev) => (ev.type.startsWith('notif') ? load() : undefined));
  load().catch((e) => flash(msg, e.message, 'error'));
  return () => { gone = true; unsub(); };
}
