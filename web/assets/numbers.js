// numbers.js — how the agents do over time: first-attempt success and
// retry rate, failure types, escalations, cost per day, as charts.

import { h, replace, money, pct } from './dom.js';
import * as api from './api.js';
import * as live from './live.js';
import { flash, section, empty } from './ui.js';
import { lines, bars, hbars } from './charts.js';

const RANGES = [7, 30, 90];

export function numbersView(root, r) {
  const days = RANGES.includes(Number(r.params.get('days'))) ? Number(r.params.get('days')) : 30;
  const msg = h('div', { class: 'messages' });
  const body = h('div', { id: 'numbers' });
  let gone = false;
  replace(root,
    h('div', { class: 'head' }, h('h1', null, 'Numbers'),
      h('nav', { class: 'tabs' }, RANGES.map((n) => h('a', { href: '#/numbers?days=' + n, class: ['tab', n === days && 'active'] }, n + ' days')))),
    msg, body);

  async function load() {
    const res = await api.get('/v1/stats/daily?days=' + days);
    if (gone) return;
    render(res.days);
  }

  function render(list) {
    const labels = list.map((d) => d.day.slice(5));
    const sum = (f) => list.reduce((a, d) => a + f(d), 0);
    const finished = sum((d) => d.finished);
    const first = sum((d) => d.first_attempt_success);
    const retried = sum((d) => d.retried);
    const retrySuccess = sum((d) => d.retry_success);
    const escalations = sum((d) => d.escalations);
    const cost = sum((d) => d.usage.cost_usd);
    const types = {};
    for (const d of list) for (const [k, v] of Object.entries(d.failures)) types[k] = (types[k] || 0) + v;
    const failures = Object.values(types).reduce((a, b) => a + b, 0);
    const kpi = (label, value, note) => h('div', { class: 'kpi' }, h('div', { class: 'kpi-value' }, value), h('div', { class: 'kpi-label' }, label), note ? h('div', { class: 'muted small' }, note) : null);
    const rate = (n, d) => (d.finished ? (100 * n(d)) / d.finished : null);
    const legend = (items) => h('div', { class: 'legend' }, items.map(([cls, name]) => h('span', { class: 'key ' + cls }, name)));
    replace(body,
      h('div', { class: 'kpis' },
        kpi('tasks ended', String(finished)),
        kpi('first-attempt success', pct(first, finished), first + ' of ' + finished),
        kpi('retried', pct(retried, finished), retrySuccess + ' of them succeeded'),
        kpi('escalations', String(escalations)),
        kpi('failures', String(failures)),
        kpi('cost', money(cost))),
      finished === 0 && failures === 0 && cost === 0 ? empty('Nothing ended in these ' + days + ' days yet: the charts fill as tasks end.') : null,
      h('div', { class: 'charts' },
        section('First-attempt success and retry rate, per day',
          legend([['s-first', 'first-attempt success'], ['s-retry', 'retried']]),
          lines(labels, [
            { name: 'first-attempt success', cls: 's-first', values: list.map((d) => rate((x) => x.first_attempt_success, d)) },
            { name: 'retried', cls: 's-retry', values: list.map((d) => rate((x) => x.retried, d)) },
          ], { max: 100, format: (v) => Math.round(v) + '%', label: 'first-attempt success and retry rate per day' })),
        section('Failure types',
          Object.keys(types).length ? hbars(Object.entries(types).sort((a, b) => b[1] - a[1]).map(([k, v]) => ({ label: k, value: v, cls: 'f-' + k })),
            { label: 'failures by type' }) : empty('No failure in these days.')),
        section('Escalations per day', bars(labels, list.map((d) => d.escalations), { cls: 'b-esc', label: 'escalations per day', counts: true })),
        section('Cost per day', bars(labels, list.map((d) => d.usage.cost_usd), { cls: 'b-cost', format: (v) => '$' + (v >= 10 ? v.toFixed(0) : v.toFixed(2)), label: 'cost per day' })),
        section('Tasks ended per day', bars(labels, list.map((d) => d.finished), { cls: 'b-done', label: 'tasks ended per day', counts: true }))));
  }

  // Numbers move when tasks end, fail or escalate: read them again, at most
  // twice a second. (The wait is on purpose: it is not counted as the
  // time an event takes to reach the page.)
  let timer = 0;
  const unsub = live.subscribe((ev) => {
    if (!/^task\.(state|failure|escalated|success|turn_ended|stuck)$/.test(ev.type) || timer) return;
    timer = setTimeout(() => { timer = 0; load().catch(() => {}); }, 500);
  });
  load().catch((e) => flash(msg, e.message, 'error'));
  return () => { gone = true; clearTimeout(timer); unsub(); };
}
