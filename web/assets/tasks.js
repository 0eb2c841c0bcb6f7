// tasks.js — the queue and the tasks: a page of tasks at a time, filtered
// by state on the server, live; cancel; submit a task. With tasks worked in
// parallel, the slots (who holds each, on which branch) and the landing
// queue (each verified task's position) above them.

import { h, replace, badge, elapsed, money, lines, taskLink, coalesce } from './dom.js';
import * as api from './api.js';
import * as live from './live.js';
import { flash, act, confirmButton, field } from './ui.js';

const PAGE = 50;

// Filters: a name, its label and the states it keeps.
const FILTERS = [
  { name: '', label: 'All', states: [] },
  { name: 'needs-you', label: 'Needs you', states: ['escalated', 'blocked', 'clarifying', 'proposed'] },
  { name: 'active', label: 'Active', states: ['awaiting_ack', 'running'] },
  { name: 'queued', label: 'Queued', states: ['queued'] },
  { name: 'success', label: 'Success', states: ['success'] },
  { name: 'unverified', label: 'Unverified', states: ['unverified'] },
  { name: 'stuck', label: 'Stuck', states: ['stuck'] },
  { name: 'failed', label: 'Failed', states: ['failed'] },
  { name: 'aborted', label: 'Aborted', states: ['aborted'] },
  { name: 'skipped', label: 'Skipped', states: ['skipped'] },
  { name: 'cancelled', label: 'Cancelled', states: ['cancelled'] },
];

const ENDED = new Set(['success', 'unverified', 'cancelled', 'stuck', 'skipped', 'aborted', 'failed']);

export function tasksView(root, r) {
  const filter = FILTERS.find((f) => f.name === (r.params.get('state') || '')) || FILTERS[0];
  const msg = h('div', { class: 'messages' });
  const tabs = h('nav', { class: 'tabs', id: 'task-filters' });
  const body = h('tbody', { id: 'task-rows' });
  const pager = h('div', { class: 'pager' });
  const summary = h('span', { class: 'muted', id: 'task-total' });
  const parallel = h('div', { class: 'card parallel', id: 'parallel', hidden: true });
  // cursors[i] is the cursor of page i (page 0 has none).
  const cursors = [''];
  let pageIndex = 0;
  let rows = [];
  let next = '';
  let gone = false;
  let drawn = '';

  replace(root,
    h('div', { class: 'head' }, h('h1', null, 'Tasks'), summary),
    submitForm(msg),
    msg, parallel, tabs,
    h('table', { class: 'tasks' },
      h('thead', null, h('tr', null,
        h('th', { class: 'num' }, '#'), h('th', null, 'Task'), h('th', null, 'State'), h('th', { class: 'num' }, 'Attempt'),
        h('th', null, 'Milestone'), h('th', null, 'Agent'), h('th', { class: 'num' }, 'Elapsed'), h('th', { class: 'num' }, 'Cost'), h('th', null, ''))),
      body),
    pager);

  const load = coalesce(async () => {
    const [page, queue] = await Promise.all([
      api.get('/v1/tasks' + api.q({
        view: 'brief', order: 'newest', limit: PAGE, cursor: cursors[pageIndex], state: filter.states.join(','),
      })),
      api.get('/v1/queue'),
    ]);
    if (gone) return;
    // Drawn again only when something changed.
    const key = JSON.stringify(page) + '|' + JSON.stringify(queue) + '|' + pageIndex;
    if (key === drawn) return;
    drawn = key;
    renderParallel(queue);
    rows = page.tasks;
    next = page.next;
    renderTabs(page.counts);
    summary.textContent = page.total + (page.total === 1 ? ' task' : ' tasks') + (filter.name ? ' ' + filter.label.toLowerCase() : '');
    renderRows();
    renderPager();
  });

  // renderParallel shows the slots and the landing queue, when tasks are
  // worked in parallel (more than one slot).
  function renderParallel(q) {
    parallel.hidden = !(q.slots > 1);
    if (parallel.hidden) { replace(parallel); return; }
    const working = q.working || [];
    const landing = q.landing || [];
    const slots = working.map((w, i) => h('li', { dataset: { task: w.id, slot: String(i + 1) } },
      taskLink(w.id), ' ', badge(w.state, w.phase || ''), w.agent ? h('span', { class: 'muted' }, ' ' + w.agent) : null,
      w.branch ? h('span', { class: 'mono branch' }, ' ' + w.branch) : null));
    for (let i = working.length; i < q.slots; i++) slots.push(h('li', { class: 'muted free', dataset: { slot: String(i + 1) } }, 'free'));
    replace(parallel, h('div', { class: 'grid2' },
      h('div', { id: 'slots' },
        h('h3', null, 'Slots ', h('span', { class: 'muted', id: 'slots-held' }, working.length + ' of ' + q.slots + ' held')),
        h('ol', { class: 'slots' }, slots)),
      h('div', { id: 'land-queue' },
        h('h3', null, 'Landing queue ', h('span', { class: 'muted' }, landing.length ? landing.length + ' waiting' : '')),
        landing.length
          ? h('ol', { class: 'land-queue' }, landing.map((e) => h('li', { dataset: { task: e.id, position: String(e.position) } },
            h('span', { class: 'position' }, '#' + e.position), ' ', taskLink(e.id), ' ', h('span', { class: 'desc-text' }, e.description),
            h('span', { class: 'tag' }, e.position === 1 ? 'landing now' : 'waits its turn'))))
          : h('p', { class: 'muted empty' }, 'No verified task waits to land.'))));
  }

  function renderTabs(counts) {
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    replace(tabs, FILTERS.map((f) => {
      const n = f.states.length ? f.states.reduce((a, st) => a + (counts[st] || 0), 0) : total;
      if (n === 0 && f.name && f !== filter && !['needs-you', 'active', 'queued'].includes(f.name)) return null;
      return h('a', {
        href: '#/tasks' + (f.name ? '?state=' + f.name : ''), class: ['tab', f === filter && 'active', f.name === 'needs-you' && n > 0 && 'attention'],
        dataset: { filter: f.name || 'all' },
      }, f.label, ' ', h('span', { class: 'count' }, String(n)));
    }));
  }

  function renderRows() {
    if (!rows.length) {
      replace(body, h('tr', null, h('td', { colspan: 9, class: 'empty' }, filter.name ? 'No task here.' : 'No task yet: submit one above, or with `wilco submit`.')));
      return;
    }
    replace(body, rows.map(row));
  }

  function row(t) {
    const phase = t.phase ? t.phase : '';
    return h('tr', { dataset: { task: t.id, state: t.state }, class: 'st-row-' + t.state },
      h('td', { class: 'num muted' }, t.position ? String(t.position) : ''),
      h('td', { class: 'desc' }, taskLink(t.id), ' ', h('span', { class: 'desc-text' }, t.description),
        t.dry_run ? h('span', { class: 'tag' }, 'dry run') : null, t.plan_id ? h('span', { class: 'tag' }, 'plan ' + t.plan_id) : null),
      h('td', null, badge(t.state, phase)),
      h('td', { class: 'num attempt' }, t.attempt ? t.attempt + '/' + t.max_attempts : ''),
      h('td', { class: 'milestone' }, t.milestone || ''),
      h('td', null, t.agent || ''),
      h('td', { class: 'num elapsed', dataset: { started: t.started_at || '', finished: t.finished_at || '' } }, elapsed(t)),
      h('td', { class: 'num' }, money(t.cost_usd)),
      h('td', { class: 'actions' }, ENDED.has(t.state) ? null : confirmButton('Cancel', 'Cancel ' + t.id + '?', { class: 'small danger', dataset: { cancel: t.id } },
        (b) => act(b, msg, async () => {
          await api.post('/v1/tasks/' + api.enc(t.id) + '/cancel');
          flash(msg, t.id + ' cancelled.');
          await load();
        }))));
  }

  function renderPager() {
    replace(pager,
      h('button', { type: 'button', class: 'small', disabled: pageIndex === 0, onclick: () => { pageIndex--; load(); } }, '← Newer'),
      h('span', { class: 'muted' }, 'page ' + (pageIndex + 1)),
      h('button', { type: 'button', class: 'small', disabled: !next, onclick: () => { cursors[pageIndex + 1] = next; pageIndex++; load(); } }, 'Older →'));
  }

  // Elapsed times move on their own.
  const tick = setInterval(() => {
    for (const td of body.querySelectorAll('td.elapsed')) {
      if (td.dataset.started && !td.dataset.finished) td.textContent = elapsed({ started_at: td.dataset.started });
    }
  }, 1000);

  // Any change of a task on this page, or of the counts, reloads the page
  // (one request at a time, coalesced).
  const unsub = live.subscribe((ev) => {
    if (!ev.type.startsWith('task.')) return undefined;
    const shown = rows.some((t) => t.id === ev.task_id);
    if (shown || ev.type === 'task.queued' || ev.type === 'task.state' || ev.type === 'task.removed' || ev.type === 'task.land_started' || ev.type === 'task.landed') return load();
    return undefined;
  });

  load().catch((e) => flash(msg, e.message, 'error'));
  return () => { gone = true; clearInterval(tick); unsub(); };
}

function submitForm(msg) {
  const id = (n) => 'submit-' + n;
  const desc = h('textarea', { id: id('description'), rows: 3, required: true, placeholder: 'What should the agent do?' });
  const criteria = h('textarea', { id: id('criteria'), rows: 2, placeholder: 'one per line' });
  const constraints = h('textarea', { id: id('constraints'), rows: 2, placeholder: 'one per line' });
  const nonGoals = h('textarea', { id: id('non-goals'), rows: 2, placeholder: 'one per line' });
  const boundaries = h('textarea', { id: id('boundaries'), rows: 2, placeholder: 'paths the agent must not touch, one per line' });
  const agent = h('select', { id: id('agent') }, h('option', { value: '' }, 'any available agent'));
  const taskID = h('input', { id: id('id'), placeholder: 'T-<n> by default', autocomplete: 'off' });
  const dry = h('input', { type: 'checkbox', id: id('dry-run') });
  const button = h('button', { type: 'submit', class: 'primary', id: id('button') }, 'Submit');
  const form = h('form', { class: 'submit-form', id: 'submit-form' },
    field('Task', desc),
    h('div', { class: 'grid2' },
      field('Acceptance criteria', criteria), field('Constraints', constraints),
      field('Non-goals', nonGoals), field('Boundaries', boundaries)),
    h('div', { class: 'row' },
      field('Agent', agent), field('Id', taskID),
      h('div', { class: 'field check' }, dry, h('label', { for: dry.id }, 'Dry run: propose a diff, change nothing')),
      button));
  const details = h('details', { class: 'card', id: 'submit' }, h('summary', null, 'Submit a task'), form);
  details.addEventListener('toggle', () => {
    if (!details.open || agent.options.length > 1) return;
    api.get('/v1/agents').then((r) => {
      for (const a of r.agents) if (!a.removed) agent.append(h('option', { value: a.name }, a.name + ' (' + a.adapter + ', ' + a.status + ')'));
    }).catch(() => {});
  });
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    act(button, msg, async () => {
      const body = {
        description: desc.value.trim(), acceptance_criteria: lines(criteria.value), constraints: lines(constraints.value),
        non_goals: lines(nonGoals.value), boundaries: lines(boundaries.value), dry_run: dry.checked,
      };
      if (agent.value) body.agent = agent.value;
      if (taskID.value.trim()) body.id = taskID.value.trim();
      const t = await api.post('/v1/tasks', body);
      flash(msg, [taskLink(t.id), t.state === 'queued' ? ' queued at position ' + t.position + '.' : ' submitted: ' + t.state.replace('_', ' ') + '.']);
      for (const el of [desc, criteria, constraints, nonGoals, boundaries, taskID]) el.value = '';
      dry.checked = false;
    });
  });
  return details;
}
