// agents.js — the agents: adapter, status, when wilco last heard from
// each, the task it holds, how often it succeeds at the first attempt, what
// it cost; a new token; removal. Live.

import { h, replace, badge, ago, money, tokens, pct, taskLink, coalesce } from './dom.js';
import * as api from './api.js';
import * as live from './live.js';
import { flash, act, confirmButton, table, empty } from './ui.js';

export function agentsView(root) {
  const msg = h('div', { class: 'messages' });
  const tokenBox = h('div', { id: 'token-box' });
  const list = h('div', { id: 'agents' });
  const next = h('p', { class: 'muted', id: 'next-agent' });
  let gone = false;
  let agents = [];
  replace(root, h('div', { class: 'head' }, h('h1', null, 'Agents')), msg, tokenBox, next, list);

  let drawn = '';
  const load = coalesce(async () => {
    const r = await api.get('/v1/agents');
    if (gone) return;
    // Drawn again only when something changed.
    const key = JSON.stringify(r);
    if (key === drawn) return;
    drawn = key;
    agents = r.agents;
    next.textContent = r.next && r.next.agent ? 'The next task that names no agent goes to ' + r.next.agent + ': ' + r.next.why + '.' : (r.next && r.next.why) || '';
    render();
  });

  function render() {
    if (!agents.length) {
      replace(list, empty('No agent: add one to wilco.yaml (agents:) or with `wilco agents add`.'));
      return;
    }
    replace(list, table(
      [['Agent'], ['Adapter'], ['Status'], ['Last seen'], ['Task'], ['First-attempt success', 'num'], ['Cost', 'num'], ['Tokens', 'num'], ['Waiting', 'num'], ['']],
      agents.map((a) => h('tr', { dataset: { agent: a.name }, class: a.removed ? 'removed' : null },
        h('td', null, h('strong', null, a.name), a.capabilities.length ? h('div', { class: 'muted small' }, a.capabilities.join(', ')) : null),
        h('td', null, a.adapter + (a.pull ? ' (pulls)' : '')),
        h('td', null, a.removed ? badge('removed') : badge(a.status === 'available' ? 'idle' : a.status), a.polling ? h('span', { class: 'tag' }, 'polling') : null),
        h('td', { class: 'last-seen', dataset: { seen: a.last_seen || '' } }, ago(a.last_seen)),
        h('td', null, a.current_task ? taskLink(a.current_task) : '—'),
        h('td', { class: 'num' }, a.finished_tasks ? pct(a.first_attempt_success, a.finished_tasks) + ' (' + a.first_attempt_success + ' of ' + a.finished_tasks + ')' : '—'),
        h('td', { class: 'num' }, money(a.usage.cost_usd)),
        h('td', { class: 'num' }, tokens(a.usage.input_tokens + a.usage.output_tokens)),
        h('td', { class: 'num' }, a.waiting + (a.unacknowledged ? ' · ' + a.unacknowledged + ' unacked' : '')),
        h('td', { class: 'actions' }, a.removed ? null : [
          confirmButton('New token', 'Replace ' + a.name + '\'s token?', { class: 'small', dataset: { rotate: a.name } }, (b) => act(b, msg, async () => {
            const r = await api.post('/v1/agents/' + api.enc(a.name) + '/token');
            showToken(a, r.token);
          })),
          ' ',
          confirmButton('Remove', 'Remove ' + a.name + '?', { class: 'small danger', dataset: { remove: a.name } }, (b) => act(b, msg, async () => {
            await api.del('/v1/agents/' + api.enc(a.name));
            flash(msg, a.name + ' removed: no more work for it, its token refused.' + (a.from_config ? ' It is in wilco.yaml: it comes back at the next start unless you take it out.' : ''));
            await load();
          })),
        ]))),
      { class: 'agents' }));
  }

  function showToken(a, token) {
    const input = h('input', { class: 'mono', readonly: true, value: token, id: 'new-token', size: 48 });
    replace(tokenBox, h('div', { class: 'card flash ok' },
      h('p', null, h('strong', null, a.name), '\'s new token — shown once; the old one stopped working.',
        a.adapter === 'exec' ? ' wilco gives it to the agent itself.' : ' Give it to the agent (Authorization: Bearer).'),
      input,
      h('button', { type: 'button', class: 'small', onclick: () => { input.select(); navigator.clipboard && navigator.clipboard.writeText(token).catch(() => {}); } }, 'Copy'),
      h('button', { type: 'button', class: 'small link', onclick: () => tokenBox.replaceChildren() }, 'Done')));
    input.select();
  }

  const unsub = live.subscribe((ev) => {
    if (ev.type.startsWith('agent.') || ev.agent && agents.some((a) => a.name === ev.agent)) return load();
    return undefined;
  });
  const tick = setInterval(() => {
    for (const td of list.querySelectorAll('td.last-seen')) td.textContent = ago(td.dataset.seen);
  }, 5000);
  load().catch((e) => flash(msg, e.message, 'error'));
  return () => { gone = true; unsub(); clearInterval(tick); };
}
