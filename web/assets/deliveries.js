// deliveries.js — instructions (sent each dispatch cycle until
// acknowledged) and operations (the "ok" round before a disruptive action,
// with its reminders). Live.

import { h, replace, badge, clock, coalesce, pre } from './dom.js';
import * as api from './api.js';
import * as live from './live.js';
import { flash, act, confirmButton, table, empty } from './ui.js';

const LIMIT = 200;

function stateTabs(base, states, current) {
  return h('nav', { class: 'tabs' }, ['', ...states].map((st) => h('a', {
    href: '#/' + base + (st ? '?state=' + st : ''), class: ['tab', st === current && 'active'], dataset: { filter: st || 'all' },
  }, st || 'All')));
}

export function instructionsView(root, r) {
  const state = r.params.get('state') || '';
  const msg = h('div', { class: 'messages' });
  const list = h('div', { id: 'instructions' });
  let gone = false;
  replace(root, h('div', { class: 'head' }, h('h1', null, 'Instructions'),
    h('span', { class: 'muted' }, 'sent once per dispatch cycle until acknowledged (make them idempotent)')),
  stateTabs('instructions', ['pending', 'sent', 'acknowledged', 'failed', 'cancelled'], state), msg, list);

  const load = coalesce(async () => {
    const res = await api.get('/v1/instructions' + api.q({ state, limit: LIMIT }));
    if (gone) return;
    const rows = res.instructions.reverse();
    if (!rows.length) { replace(list, empty('No instruction' + (state ? ' ' + state : '') + '. `wilco instruct AGENT "…"` queues one.')); return; }
    replace(list, table([['Id'], ['Agent'], ['Instruction'], ['State'], ['Sends', 'num'], ['Sent'], ['Acknowledged'], ['']],
      rows.map((i) => h('tr', { dataset: { instruction: i.id, state: i.state } },
        h('td', { class: 'mono' }, i.id), h('td', null, i.agent),
        h('td', { class: 'desc' }, h('span', { class: 'desc-text' }, i.content), i.ack_when ? h('div', { class: 'muted small' }, 'acknowledged by a reply ' + (i.ack_when.contains ? 'containing "' + i.ack_when.contains + '"' : 'matching /' + i.ack_when.regex + '/')) : null),
        h('td', null, badge(i.state), i.reason ? h('div', { class: 'muted small' }, i.reason) : null),
        h('td', { class: 'num' }, (i.retry_count + (i.sent_at ? 1 : 0)) + ' of ' + (i.max_retries + 1)),
        h('td', null, clock(i.sent_at)), h('td', null, clock(i.acknowledged_at) || (i.failed_at ? 'failed ' + clock(i.failed_at) : '')),
        h('td', { class: 'actions' }, i.state === 'sent' || i.state === 'pending' ? h('button', {
          type: 'button', class: 'small', onclick: (e) => act(e.target, msg, async () => { await api.post('/v1/instructions/' + api.enc(i.id) + '/ack'); await load(); }),
        }, 'Acknowledge') : null))),
    { class: 'instructions' }));
  });
  const unsub = live.subscribe((ev) => (ev.type.startsWith('delivery.') ? load() : undefined));
  load().catch((e) => flash(msg, e.message, 'error'));
  return () => { gone = true; unsub(); };
}

export function operationsView(root, r) {
  const state = r.params.get('state') || '';
  const msg = h('div', { class: 'messages' });
  const list = h('div', { id: 'operations' });
  let gone = false;
  replace(root, h('div', { class: 'head' }, h('h1', null, 'Operations'),
    h('span', { class: 'muted' }, 'each agent\'s "ok" before a disruptive action, with reminders')),
  stateTabs('operations', ['waiting', 'proceeding', 'done', 'cancelled', 'aborted', 'failed'], state), msg, list);

  const load = coalesce(async () => {
    const res = await api.get('/v1/operations' + api.q({ state, limit: LIMIT }));
    if (gone) return;
    const ops = res.operations.reverse();
    if (!ops.length) { replace(list, empty('No operation' + (state ? ' ' + state : '') + '. `wilco op OPERATION --agent A -- COMMAND` starts one.')); return; }
    replace(list, ops.map(operationCard));
  });

  function operationCard(o) {
    const responded = o.agents.filter((a) => a.response === 'ok').length;
    return h('div', { class: 'card operation', dataset: { operation: o.id, state: o.state } },
      h('div', { class: 'op-head' },
        h('strong', { class: 'mono' }, o.id), ' ', h('span', null, o.operation), ' ', badge(o.state),
        h('span', { class: 'muted' }, ' ' + clock(o.created_at) + ' · ok from ' + responded + ' of ' + o.agents.length + ' (quorum ' + o.quorum + ')'),
        o.state === 'waiting' ? confirmButton('Cancel', 'Cancel ' + o.id + '?', { class: 'small danger' }, (b) => act(b, msg, async () => {
          await api.post('/v1/operations/' + api.enc(o.id) + '/cancel');
          await load();
        })) : null),
      o.message ? pre(o.message, 'text') : null,
      table([['Agent'], ['Answer'], ['When'], ['']], o.agents.map((a) => h('tr', null,
        h('td', null, a.name), h('td', null, a.response ? badge(a.response) : h('span', { class: 'muted' }, 'waiting')),
        h('td', null, clock(a.responded_at)), h('td', null, a.extended ? h('span', { class: 'tag' }, 'extended once ("wait")') : null)))),
      h('p', { class: 'muted' },
        'Reminders: ', o.reminders_sent + ' of ' + o.reminders.length + ' sent (at ' + (o.reminders.join(', ') || 'none') + '); timeout ' + o.timeout +
        ', extension ' + o.extension + '; on timeout ' + (o.proceed_on_timeout ? 'proceed' : 'abort') + '.',
        o.timeout_occurred ? ' Timed out' + (o.proceeded_anyway ? ', proceeded anyway.' : '.') : '',
        o.reason ? ' ' + o.reason : ''),
      o.command && o.command.length ? h('div', null,
        h('code', null, o.command.join(' ')), o.exit_code !== null && o.exit_code !== undefined ? h('span', { class: 'muted' }, ' exit ' + o.exit_code) : null,
        o.output ? h('details', null, h('summary', null, 'Output'), pre(o.output, 'text')) : null) : null);
  }

  const unsub = live.subscribe((ev) => (ev.type.startsWith('operation.') ? load() : undefined));
  load().catch((e) => flash(msg, e.message, 'error'));
  return () => { gone = true; unsub(); };
}
