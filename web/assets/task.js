// task.js — one task: what it is, where it stands, what it needs from you
// (escalation, clarification, blocked, a dry run's diff, a stuck report),
// each attempt (prompt, retry context, transcript, failure record, verify
// log) and the timeline of its events, all live.

import { h, replace, pre, badge, elapsed, clock, duration, money, tokens, taskLink, coalesce } from './dom.js';
import * as api from './api.js';
import * as live from './live.js';
import { flash, act, confirmButton, section, json } from './ui.js';
import { viewer } from './diff.js';
import { markdown } from './markdown.js';

const ENDED = new Set(['success', 'unverified', 'cancelled', 'stuck', 'skipped', 'aborted', 'failed']);

export function taskView(root, r) {
  const id = r.id;
  const path = '/v1/tasks/' + api.enc(id);
  const msg = h('div', { class: 'messages' });
  const head = h('div', { class: 'head' });
  const overview = h('div', { id: 'overview' });
  const answer = h('div', { id: 'answer' });
  const attempts = h('div', { id: 'attempts' });
  const timeline = h('ol', { class: 'timeline', id: 'timeline' });
  let task = null;
  let answerKey = '';
  let gone = false;
  const attemptEls = new Map();
  const seenEvents = new Set();

  replace(root,
    h('p', null, h('a', { href: '#/tasks' }, '← Tasks')),
    head, msg, overview, answer,
    section('Attempts', attempts),
    section('Timeline', h('p', { class: 'muted' }, 'Every event of the task, as it happens.'), timeline));

  const load = coalesce(async () => {
    let t;
    try {
      t = await api.get(path);
    } catch (e) {
      if (e.status === 404) {
        replace(head, h('h1', null, id));
        flash(msg, 'No task ' + id + ' (a queued task that was cancelled leaves no trace).', 'error');
        return;
      }
      throw e;
    }
    if (gone) return;
    task = t;
    renderHead();
    renderOverview();
    renderAnswer();
    renderAttempts();
  });

  function renderHead() {
    const t = task;
    replace(head,
      h('h1', null, h('span', { class: 'mono' }, t.id), ' ', badge(t.state, t.phase || ''), t.dry_run ? h('span', { class: 'tag' }, 'dry run') : null),
      h('div', { class: 'head-actions' }, ENDED.has(t.state) ? null : confirmButton('Cancel', 'Cancel ' + t.id + '?', { class: 'danger', id: 'cancel' },
        (b) => act(b, msg, async () => { await api.post(path + '/cancel'); flash(msg, t.id + ' cancelled.'); await load(); }))));
  }

  function renderOverview() {
    const t = task;
    const meta = [
      ['State', t.state + (t.phase ? ' · ' + t.phase : '')],
      ['Attempt', t.attempt ? t.attempt + ' of ' + t.max_attempts : '—'],
      // An ended task shows how it ended (its last milestone says it), and when.
      ENDED.has(t.state) ? ['Ended', (t.milestone || t.state) + (t.finished_at ? ' · ' + clock(t.finished_at) : '')] : ['Milestone', t.milestone || '—'],
      ['Agent', t.agent || '—'],
      ['Position', t.position ? String(t.position) : '—'],
      ['Created', clock(t.created_at)],
      ['Started', t.started_at ? clock(t.started_at) : '—'],
      ['Elapsed', elapsed(t) || '—'],
      ['Failures', t.consecutive_failures + ' in a row, ' + t.total_verify_loops + ' verify loops, ' + t.replans + ' replans'],
      ['Cost', money(t.usage.cost_usd) + ' · ' + tokens(t.usage.input_tokens) + ' in, ' + tokens(t.usage.output_tokens) + ' out'],
    ];
    if (t.package) meta.push(['Package', t.package]);
    // A task that lands as a commit says which, once it did.
    if (t.land === 'commit') {
      meta.push(['Landed', t.landed_commit ? h('span', { class: 'mono', title: t.landed_commit }, t.landed_commit.slice(0, 7))
        : ENDED.has(t.state) ? 'not committed' : 'as a commit, once verified']);
    }
    // A task worked in parallel: where it works, its place in the landing
    // queue, and what it landed as.
    if (t.worktree) {
      meta.push(['Branch', h('span', { class: 'mono' }, t.branch)], ['Worktree', h('span', { class: 'mono' }, t.worktree)]);
      if (t.land_position) meta.push(['Landing position', String(t.land_position)]);
      meta.push(['Landed', t.landed_commit ? h('span', { class: 'mono', title: t.landed_commit }, t.landed_commit.slice(0, 7))
        : ENDED.has(t.state) ? 'not landed' : 'by ' + t.land + ', once verified']);
    }
    // A task that lands as a pull request: which, and its checks.
    const pr = t.pull_request;
    if (pr) {
      meta.push(['Pull request', pr.url ? h('a', { href: pr.url, rel: 'noreferrer' }, '#' + pr.number) : '#' + pr.number],
        ['Checks', pr.checks_done + ' of ' + pr.checks + ' ended' + (pr.merging ? ' · merging' : pr.ready ? ' · ready to merge' : '')]);
    }
    if (t.review) meta.push(['Review', t.review.reviewer + (t.review.verdict ? ': ' + t.review.verdict : ': waiting')]);
    if (t.plan_id) meta.push(['Plan', t.plan_id]);
    if (t.resumed_from) meta.push(['Resumed from', taskLink(t.resumed_from)]);
    if (t.depends_on && t.depends_on.length) meta.push(['Depends on', t.depends_on.map((d) => [taskLink(d), ' '])]);
    const list = (title, items) => items && items.length ? h('div', { class: 'spec' }, h('h3', null, title), h('ul', null, items.map((x) => h('li', null, x)))) : null;
    replace(overview,
      h('div', { class: 'card' },
        pre(t.description, 'text description'),
        h('dl', { class: 'meta', id: 'meta' }, meta.map(([k, v]) => [h('dt', null, k), h('dd', { dataset: { key: k.toLowerCase() } }, v)])),
        h('div', { class: 'specs' },
          list('Acceptance criteria', t.acceptance_criteria), list('Constraints', t.constraints),
          list('Non-goals', t.non_goals), list('Boundaries', t.boundaries)),
        t.warnings && t.warnings.length ? h('div', { class: 'flash warn' }, t.warnings.map((w) => h('div', null, w))) : null,
        t.review && t.review.reasons ? h('details', { id: 'review' }, h('summary', null, 'The reviewer\'s reasons (' + (t.review.verdict || 'waiting') + ')'), pre(t.review.reasons, 'text')) : null,
        t.consultations && t.consultations.length ? h('div', { class: 'spec', id: 'consultations' }, h('h3', null, 'Scouts consulted'),
          t.consultations.map((c) => h('details', null,
            h('summary', null, c.from + ' asked ' + c.scout + ' (' + c.state + '): ' + c.question),
            pre(c.state === 'answered' ? c.answer : c.state === 'failed' ? 'No answer: ' + c.error : 'Waiting for the answer…', 'text')))) : null));
  }

  // The answer panel is rebuilt only when what it asks changes, so that a
  // half-typed answer survives the task's other events.
  function renderAnswer() {
    const t = task;
    const key = [t.state, t.escalation && t.escalation.at, t.blocked_by, (t.questions || []).join('\n'), t.proposal && t.proposal.run_id,
      t.summary && t.summary.run_id, t.stuck_report && t.stuck_report.path].join('|');
    if (key === answerKey) return;
    answerKey = key;
    replace(answer, answerPanel(t));
  }

  function answerPanel(t) {
    switch (t.state) {
      case 'escalated':
        return needsYou(escalatedAfter(t), escalationView(t.escalation), respondControls(t));
      case 'blocked':
        return needsYou('Blocked', pre(t.blocked_by || 'The agent says it is blocked.', 'text'), respondControls(t));
      case 'clarifying':
        return needsYou('The agent asks', clarifyControls(t));
      case 'proposed':
        return needsYou('A dry run to review', proposalControls(t));
      case 'stuck':
        return needsYou('Stuck after ' + t.total_verify_loops + ' verify loops', stuckControls(t));
      case 'success':
        return t.summary ? h('section', { class: 'block ok', id: 'summary' }, h('h2', null, 'Verified'),
          pre(t.summary.text, 'text'), runLogButton(t.summary.run_id)) : null;
      case 'unverified':
        return h('section', { class: 'block warn' }, h('h2', null, 'Done, not verified'),
          h('p', null, 'No verify step is configured: nothing checked the agent\'s work. Add verify.steps to wilco.yaml.'),
          t.summary ? pre(t.summary.text, 'text') : null);
      default:
        return null;
    }
  }

  function needsYou(title, ...children) {
    return h('section', { class: 'block needs-you', id: 'needs-you' }, h('h2', null, title), ...children);
  }

  function respond(action, instruction) {
    return api.post(path + '/respond', instruction ? { action, instruction } : { action }).then(() => { flash(msg, 'Sent: ' + action + '.'); answerKey = ''; return load(); });
  }

  function respondControls(t) {
    const fix = h('textarea', { id: 'fix-instruction', rows: 3, placeholder: 'An instruction for the agent: it goes first in the next prompt, marked high priority' });
    const sendFix = h('button', { type: 'button', class: 'primary', id: 'respond-fix' }, 'Send the fix');
    sendFix.addEventListener('click', () => {
      if (!fix.value.trim()) { flash(msg, 'Write the instruction first.', 'error'); return; }
      act(sendFix, msg, () => respond('fix', fix.value.trim()));
    });
    const retry = h('button', { type: 'button', id: 'respond-retry' }, 'Retry');
    retry.addEventListener('click', () => act(retry, msg, () => respond('retry')));
    return h('div', { class: 'respond' },
      h('div', { class: 'field' }, h('label', { for: 'fix-instruction' }, 'Fix'), fix), sendFix,
      h('div', { class: 'row' }, retry,
        confirmButton('Skip', 'Skip ' + t.id + '?', { id: 'respond-skip' }, (b) => act(b, msg, () => respond('skip'))),
        confirmButton('Abort', 'Abort ' + t.id + '?', { id: 'respond-abort', class: 'danger' }, (b) => act(b, msg, () => respond('abort')))),
      h('p', { class: 'hint' }, 'Retry starts again with the counters reset; skip ends the task (its dependants are warned); abort stops it and keeps what it changed.'));
  }

  function clarifyControls(t) {
    const qs = t.questions || [];
    const inputs = qs.map((q, i) => h('textarea', { id: 'answer-' + i, rows: 2 }));
    const send = h('button', { type: 'button', class: 'primary', id: 'clarify-send' }, 'Send the answers');
    send.addEventListener('click', () => act(send, msg, async () => {
      const answers = inputs.map((x) => x.value.trim());
      if (answers.some((a) => !a)) throw new Error('Answer every question.');
      await api.post(path + '/clarify', { answers });
      flash(msg, 'Answers sent: the agent acknowledges again.');
      answerKey = '';
      await load();
    }));
    return h('div', { class: 'clarify' },
      qs.length ? h('ol', null, qs.map((q, i) => h('li', null, h('label', { for: 'answer-' + i }, q), inputs[i]))) : h('p', null, 'The agent needs clarification.'),
      send);
  }

  function proposalControls(t) {
    const box = h('div', { id: 'diff' }, h('p', { class: 'muted' }, 'Loading the diff…'));
    api.get(path + '/diff', { text: true }).then((text) => replace(box, viewer(text)))
      .catch((e) => replace(box, h('p', { class: 'error' }, e.message)));
    const apply = h('button', { type: 'button', class: 'primary', id: 'apply' }, 'Apply');
    apply.addEventListener('click', () => act(apply, msg, async () => {
      await api.post(path + '/apply');
      flash(msg, 'Applying: the diff is written when the task\'s turn in the queue comes, then verified.');
      answerKey = '';
      await load();
    }));
    return h('div', null,
      h('p', null, 'The agent worked in a throw-away worktree. Apply writes this diff into your working tree and verifies it; discard drops it.'),
      box,
      h('div', { class: 'row' }, apply,
        confirmButton('Discard', 'Discard the dry run?', { id: 'discard', class: 'danger' }, (b) => act(b, msg, async () => {
          await api.post(path + '/discard');
          flash(msg, 'Discarded.');
          answerKey = '';
          await load();
        }))));
  }

  function stuckControls(t) {
    const rep = t.stuck_report || {};
    const resume = h('button', { type: 'button', class: 'primary', id: 'resume' }, 'Resume from the report');
    resume.addEventListener('click', () => act(resume, msg, async () => {
      const n = await api.post(path + '/resume');
      location.hash = '#/tasks/' + api.enc(n.id);
    }));
    return h('div', null,
      rep.hypotheses && rep.hypotheses.length ? h('div', null, h('h3', null, 'Hypotheses'), h('ul', null, rep.hypotheses.map((x) => h('li', null, x)))) : null,
      h('details', null, h('summary', null, 'The stuck report'), pre(rep.markdown, 'text')),
      h('p', null, 'Resuming starts a new task from the report, not from the whole history.'), resume);
  }

  function runLogButton(runID) {
    if (!runID) return null;
    const box = h('div');
    const b = h('button', { type: 'button', class: 'small', dataset: { log: runID } }, 'Verify log of ' + runID);
    b.addEventListener('click', () => act(b, msg, async () => {
      try {
        replace(box, pre(await api.get('/v1/runs/' + api.enc(runID) + '/log', { text: true }) || '(empty)', 'text log'));
      } catch (e) {
        replace(box, h('p', { class: 'muted' }, e.status === 404 ? 'No verify log for ' + runID + ': no verification ran.' : e.message));
      }
    }));
    return h('div', { class: 'runlog' }, b, box);
  }

  function failureOf(n) {
    return (task.failures || []).find((f) => f.attempt === n);
  }

  function outcome(n) {
    const f = failureOf(n);
    if (f) return h('span', { class: 'badge st-failed' }, f.failure_type);
    if (n === task.attempt) {
      if (task.state === 'success') return h('span', { class: 'badge st-success' }, 'verified');
      return badge(task.state, task.phase || '');
    }
    return null;
  }

  function renderAttempts() {
    const n = task.attempt || 0;
    if (!n) {
      replace(attempts, h('p', { class: 'empty' }, 'No attempt yet.'));
      attemptEls.clear();
      return;
    }
    if (!attemptEls.size) attempts.replaceChildren();
    for (let i = 1; i <= n; i++) {
      let a = attemptEls.get(i);
      if (!a) {
        a = attemptBlock(i);
        attemptEls.set(i, a);
        attempts.append(a.el);
      }
      replace(a.outcome, outcome(i));
      a.refreshFailure();
    }
  }

  function attemptBlock(n) {
    const out = h('span', { class: 'outcome' });
    const failureBox = h('div');
    const content = h('div', { class: 'attempt-body' });
    const el = h('details', { class: 'attempt', dataset: { attempt: String(n) } },
      h('summary', null, 'Attempt ' + n, ' ', out), failureBox, content);
    let loaded = false;
    const refreshFailure = () => {
      const f = failureOf(n);
      const u = (task.usages || []).filter((x) => x.attempt === n);
      replace(failureBox,
        f ? failureRecord(f) : null,
        u.length ? h('p', { class: 'muted' }, 'Used: ', u.map((x) => money(x.usage.cost_usd) + ', ' + tokens(x.usage.input_tokens) + ' tokens in, ' + tokens(x.usage.output_tokens) + ' out (' + (x.usage.model || x.agent) + ')').join('; ')) : null);
    };
    const loadBody = async () => {
      replace(content, h('p', { class: 'muted' }, 'Loading…'));
      let tr;
      try {
        tr = await api.get(path + '/transcript?attempt=' + n);
      } catch (e) {
        replace(content, h('p', { class: 'error' }, e.message));
        return;
      }
      replace(content, transcriptView(tr), runLogButton(failureOf(n) ? failureOf(n).run_id || tr.run_id : tr.run_id),
        h('button', { type: 'button', class: 'small link', onclick: () => loadBody() }, 'Reload the transcript'));
    };
    el.addEventListener('toggle', () => { if (el.open && !loaded) { loaded = true; loadBody(); } });
    return { el, outcome: out, refreshFailure };
  }

  // Events of this task come in as they happen: a line in the timeline,
  // then the task is read again (coalesced).
  async function loadTimeline() {
    let after = 0;
    for (let i = 0; i < 10; i++) {
      const page = await api.get('/v1/events' + api.q({ follow: 'false', task: id, after, limit: 1000 }));
      for (const ev of page.events) addEvent(ev);
      if (page.events.length < 1000) break;
      after = page.next;
    }
  }

  function addEvent(ev) {
    if (seenEvents.has(ev.seq)) return;
    seenEvents.add(ev.seq);
    const [text, detail] = eventText(ev);
    timeline.append(h('li', { dataset: { type: ev.type, seq: String(ev.seq) }, title: ev.type },
      h('time', null, clock(ev.time)),
      h('div', { class: 'ev' }, h('span', { class: 'ev-text' }, text), detail ? h('div', { class: 'ev-detail' }, detail) : null)));
  }

  const unsub = live.subscribe((ev) => {
    if (ev.task_id !== id) return undefined;
    addEvent(ev);
    return load();
  });

  load().then(loadTimeline).catch((e) => flash(msg, e.message, 'error'));
  const tick = setInterval(() => {
    if (task && task.started_at && !task.finished_at) {
      const dd = overview.querySelector('dd[data-key="elapsed"]');
      if (dd) dd.textContent = elapsed(task);
    }
  }, 1000);
  return () => { gone = true; unsub(); clearInterval(tick); };
}

function failureRecord(f) {
  const v = f.executor_output && f.executor_output.verification;
  const rows = [
    ['Type', f.failure_type],
    v ? ['Command', h('code', null, v.command)] : null,
    v ? ['Exit code', String(v.exit_code)] : null,
    f.executor_output && f.executor_output.error ? ['Error', f.executor_output.error] : null,
    f.executor_output && f.executor_output.files_modified && f.executor_output.files_modified.length ? ['Files modified', f.executor_output.files_modified.join(', ')] : null,
    f.root_cause_guess ? ['Guessed cause', f.root_cause_guess] : null,
    f.suggested_fix ? ['Suggested fix', f.suggested_fix] : null,
    f.run_id ? ['Run', h('span', { class: 'mono' }, f.run_id)] : null,
  ].filter(Boolean);
  return h('div', { class: 'failure' },
    h('h3', null, 'Failure record'),
    h('dl', { class: 'meta' }, rows.map(([k, x]) => [h('dt', null, k), h('dd', null, x)])),
    v && v.output_summary ? [h('h4', null, 'Output summary'), pre(v.output_summary, 'text')] : null,
    f.details ? [h('h4', null, 'Failing output'), pre(f.details, 'text')] : null);
}

// retryContext is the <retry_context> block that starts a retry's prompt.
function retryContext(prompt) {
  const m = /^\s*(<retry_context[\s\S]*?<\/retry_context>)/.exec(prompt || '');
  return m ? m[1] : '';
}

function transcriptView(tr) {
  const entries = tr.entries || [];
  if (!entries.length) return h('p', { class: 'muted' }, 'No transcript: the agent is not one wilco runs itself, or its turn has not started.');
  const prompt = entries.find((e) => e.kind === 'prompt');
  const rc = retryContext(prompt && prompt.text);
  return h('div', { class: 'transcript' },
    rc ? h('div', { class: 'retry-context' }, h('h3', null, 'Retry context sent with this attempt'), pre(rc, 'text')) : null,
    prompt ? h('details', { class: 'prompt' }, h('summary', null, 'The prompt sent (' + prompt.text.length + ' characters)'), pre(prompt.text, 'text')) : null,
    h('h3', null, 'Transcript'),
    h('ol', { class: 'entries' }, merged(entries.filter((e) => e !== prompt)).map((e) => h('li', { class: 'entry ' + e.kind, dataset: { kind: e.kind } },
      h('span', { class: 'kind' }, e.kind === 'tool_call' ? 'tool call ' + (e.tool || '') : e.kind === 'tool_result' ? 'result' : e.kind),
      e.text ? pre(e.text, 'text') : null,
      e.input ? json(e.input) : null))));
}

// merged joins runs of text entries (an agent that writes plain lines has
// one entry a line) into one.
function merged(entries) {
  const out = [];
  for (const e of entries) {
    const last = out[out.length - 1];
    if (e.kind === 'text' && last && last.kind === 'text' && !last.input) {
      out[out.length - 1] = { ...last, text: last.text + '\n' + e.text };
    } else {
      out.push(e);
    }
  }
  return out;
}

// --- escalations -------------------------------------------------------------

// escalatedAfter is the heading of an escalated task: how many of its
// attempts failed (its failure records, as the message counts them; not
// the policy that counted them).
function escalatedAfter(t) {
  const n = (t.failures || []).length;
  return n > 0 ? 'Escalated after ' + plural(n, 'failed attempt') : 'Escalated';
}

// escalationView is the escalation as a part of the page: why, in words,
// then the message's Markdown rendered.
function escalationView(e) {
  if (!e) return null;
  const why = reasonWords(e.reason);
  return h('div', { class: 'escalation', id: 'escalation' },
    why ? h('p', { class: 'why' }, why) : null,
    markdown(escalationBody(e.message)));
}

// escalationBody is the message without its title (the section's heading
// says it) and without the answers a terminal types (retry, skip, abort,
// fix: the buttons below the message do them).
function escalationBody(text) {
  let s = String(text || '').replace(/^\s*#{1,6}\s[^\n]*\n/, '');
  const options = s.search(/\n(?:\s*(?:-{3,}|\*{3,}|_{3,})\s*\n)?\s*\*\*Your options:\*\*/);
  if (options >= 0) s = s.slice(0, options);
  return s;
}

// reasonWords says why a task was escalated, in words; nothing when the
// heading says it already (so many failed attempts).
function reasonWords(reason) {
  const r = String(reason || '').trim();
  if (!r || /^(escalate_after|max_retries)\b/.test(r)) return '';
  const m = /^([a-z]+(?:_[a-z]+)*): ([\s\S]*)$/.exec(r);
  if (!m) return upper(r);
  const rest = m[2];
  switch (m[1]) {
    case 'budget': return 'Over its budget: ' + rest;
    case 'impossible': return 'The agent says it cannot be done: ' + rest;
    case 'environment': return 'Not the code but its environment (no retry can fix it): ' + rest;
    default: return upper(m[1].replace(/_/g, ' ')) + ': ' + rest;
  }
}

// upper is s with its first letter in capitals.
function upper(s) {
  return s ? s[0].toUpperCase() + s.slice(1) : s;
}

// --- the timeline ------------------------------------------------------------

// STATE_WORDS say a task's state in a sentence; PHASE_WORDS what a
// running task does.
const STATE_WORDS = {
  queued: 'Queued',
  awaiting_ack: 'Waiting for the agent to acknowledge the task',
  running: 'Running',
  escalated: 'Escalated: waiting for you',
  blocked: 'Blocked: waiting for you',
  clarifying: 'Waiting for your answers to the agent\'s questions',
  proposed: 'The proposed diff waits for your review',
  success: 'The task succeeded',
  unverified: 'The task is done, not verified',
  cancelled: 'The task was cancelled',
  stuck: 'The task is stuck',
  skipped: 'The task was skipped',
  aborted: 'The task was aborted',
  failed: 'The task failed',
};
const PHASE_WORDS = {
  executing: 'the agent works',
  verifying: 'verifying the change',
  retrying: 'a retry starts',
  replanning: 'a replan starts',
  reviewing: 'the reviewer looks at the change',
  landing: 'the verified change is being committed',
  preparing: 'its worktree is being made',
};

// TURN_WORDS say how an agent's turn ended, by its status.
const TURN_WORDS = {
  success: 'the agent reports success',
  failure: 'the agent reports a failure',
  blocked: 'the agent reports it is blocked',
  impossible: 'the agent says it cannot be done',
  unacknowledged: 'it ended without acknowledging the task',
  stopped: 'stopped by wilco',
};

// SEND_WORDS say what a send of a message was, by its kind.
const SEND_WORDS = {
  first: 'Sent',
  retry: 'Sent again',
  ack_request: 'Asked again for the acknowledgment of',
  resend: 'Sent again, after the wait,',
  correction: 'Sent a correction of',
  wrong_id: 'Told the agent it named another task than',
  task_clarification: 'Sent your answers about',
  reminder: 'Sent a reminder of',
  followup: 'Asked whether work started on',
  timeout_notice: 'Sent the timeout notice of',
  extension_granted: 'Granted more time for',
  cancel: 'Told the agent to stop',
  operation_outcome: 'Sent the outcome of',
};

const ATTEMPT_KINDS = { first: '', retry: ', a retry', replan: ', after a replan', fix: ', with your fix' };

// plural is n and its noun: "1 file", "2 files".
function plural(n, one, many) {
  return n + ' ' + (n === 1 ? one : many || one + 's');
}

// firstLine is the first line of s, at most max characters.
function firstLine(s, max = 200) {
  const l = String(s || '').trim().split('\n')[0].trim();
  return l.length > max ? l.slice(0, max) + '…' : l;
}

// plainSummary is what an agent's turn says it did: its text, or — when
// an agent ended with a JSON object (a completion report wilco did not
// read as one) — the text in it.
function plainSummary(s) {
  const text = String(s || '').trim();
  if (text.startsWith('{') && text.endsWith('}')) {
    try {
      const o = JSON.parse(text);
      for (const k of ['summary', 'result', 'response', 'message', 'text', 'reason', 'error']) {
        if (typeof o[k] === 'string' && o[k].trim()) return o[k].trim();
      }
    } catch (e) {
      // Not JSON: the text as it is.
    }
  }
  return text.length > 600 ? text.slice(0, 600) + '…' : text;
}

// fields says an event of a kind the page does not know as "name: value"
// pairs of its plain values.
function fields(d) {
  return Object.entries(d).filter(([, v]) => v !== null && v !== '' && ['string', 'number', 'boolean'].includes(typeof v))
    .map(([k, v]) => k.replace(/_/g, ' ') + ': ' + (typeof v === 'string' ? firstLine(v) : String(v))).join(', ');
}

// eventText says an event of a task as a sentence, and the text it
// carries (a summary, an instruction) when it has some: [sentence,
// detail].
function eventText(ev) {
  const d = ev.data || {};
  const agent = ev.agent || '';
  switch (ev.type) {
    case 'task.queued': {
      const t = d.task || {};
      return ['Submitted' + (t.dry_run ? ' as a dry run' : '') + (t.agent || t.requested_agent ? ', for ' + (t.agent || t.requested_agent) : '') + '.'];
    }
    case 'task.state': {
      const words = (STATE_WORDS[d.to] || 'Now ' + d.to) + (d.to === 'running' && d.phase ? ': ' + (PHASE_WORDS[d.phase] || d.phase) : '');
      // An escalation's reason has a line of its own (task.escalated); what
      // blocks the agent is its own text.
      const reason = d.reason && d.to !== 'escalated' && d.to !== 'blocked' ? ' — ' + d.reason : '';
      return [words + reason + '.', d.to === 'blocked' ? d.reason : ''];
    }
    case 'task.milestone': return [d.text];
    case 'task.attempt':
      return ['Attempt ' + d.attempt + (d.max_attempts ? ' of ' + d.max_attempts : '') + (ATTEMPT_KINDS[d.kind] ?? ', ' + (d.kind || '')) + ': sent to ' + d.agent + '.'];
    case 'task.turn_ended': {
      const u = d.usage || {};
      const said = TURN_WORDS[d.status] || (d.status ? 'status ' + d.status : 'no status');
      const files = d.files && d.files.length ? ' Files: ' + d.files.join(', ') + '.' : '';
      const cost = u.cost_usd ? ' It cost ' + money(u.cost_usd) + '.' : u.input_tokens || u.output_tokens ? ' ' + tokens(u.input_tokens) + ' tokens in, ' + tokens(u.output_tokens) + ' out.' : '';
      const blocker = d.blocker ? ' Its output shows: ' + firstLine(d.blocker) + '.' : '';
      return [(agent ? agent + '\'s turn' : 'The turn') + ' of attempt ' + d.attempt + ' ended' + (d.duration_ms > 0 ? ' after ' + duration(d.duration_ms) : '') +
        ', exit code ' + d.exit_code + ': ' + said + '.' + files + blocker + cost, plainSummary(d.summary)];
    }
    case 'task.failure': {
      const r = d.record || {};
      const v = r.executor_output && r.executor_output.verification;
      const how = v ? ' (' + v.command + ' exited ' + v.exit_code + ')' : '';
      return ['Attempt ' + r.attempt + ' failed: ' + String(r.failure_type || '').replace(/_/g, ' ') + how + '.',
        r.root_cause_guess ? 'Guessed cause: ' + r.root_cause_guess + (r.suggested_fix ? '\nSuggested fix: ' + r.suggested_fix : '') : ''];
    }
    case 'task.replan': return ['Replanning (replan ' + d.number + ') after ' + plural(d.failures, 'failure') + '.'];
    case 'task.escalated': {
      const m = /^(?:escalate_after|max_retries): (\d+) failed attempts$/.exec(d.reason || '');
      return [m ? 'Escalated to you after ' + plural(Number(m[1]), 'failed attempt') + '.' : 'Escalated to you.', m ? '' : reasonWords(d.reason)];
    }
    case 'task.response': {
      const words = { retry: 'You answered: retry, with the counters reset.', fix: 'You sent a fix.', skip: 'You skipped the task.', abort: 'You aborted the task.' };
      return [words[d.action] || 'You answered ' + d.action + '.', d.instruction];
    }
    case 'task.success': {
      const sum = d.summary || {};
      return ['Verified' + (sum.run_id ? ' in run ' + sum.run_id : '') + (d.verify_ms > 0 ? ' (' + duration(d.verify_ms) + ')' : '') +
        (sum.files && sum.files.length ? '; changed ' + sum.files.join(', ') : '') + '.', sum.why];
    }
    case 'task.unverified': return ['Done, but not verified: no verify step is configured.', (d.summary || {}).why];
    case 'task.landing': return ['Committing the verified change' + (d.change && d.change.branch ? ' on ' + d.change.branch : '') + '.'];
    case 'task.landed': {
      const left = d.left && d.left.length ? ' Left uncommitted (changed before the task began): ' + d.left.join(', ') + '.' : '';
      return [(d.commit ? 'Landed as ' + d.commit.slice(0, 7) + ' on ' + d.branch + '.' : 'Nothing was committed on ' + d.branch + '.') + left];
    }
    case 'task.worktree': return ['Works in ' + d.worktree + ' on branch ' + d.branch + (d.from ? ', made from ' + d.from : '') + '.'];
    case 'task.prepared': return ['Its worktree starts from ' + (d.base || '').slice(0, 7) + '.'];
    case 'task.land_started': return [d.on ? 'Combined behind the task landing ahead of it (on ' + d.on.slice(0, 7) + '), verified while that one lands.' : 'Its turn to land came.'];
    case 'task.integrating': {
      const i = d.integration;
      if (i && i.void) return ['Its combination behind the task ahead of it does not pass: it is combined again once it is first to land.'];
      return [i ? 'Combined with what landed since it started (' + (i.onto || '').slice(0, 7) + ') as ' + (i.combined || '').slice(0, 7) + ': verifying it in run ' + i.run_id + '.' : 'The target moved again: combining again.'];
    }
    case 'task.integrated': return ['The combination passed its checks (run ' + d.run_id + ').'];
    case 'task.stuck': {
      const r = d.report || {};
      return ['Stopped at the hard stop: ' + plural((r.hypotheses || []).length, 'hypothesis', 'hypotheses') + (r.path ? ', the report in ' + r.path : '') + '.'];
    }
    case 'task.proposed': {
      const files = (d.proposal && d.proposal.files) || [];
      return ['Proposed a diff of ' + plural(files.length, 'file') + (files.length ? ': ' + files.join(', ') : '') + '.'];
    }
    case 'task.removed': return ['Removed from the queue.'];
    case 'task.warning': return [d.text];
    case 'task.review_requested': {
      const r = d.review || {};
      return ['Review of attempt ' + r.attempt + ' asked of ' + r.reviewer + '.'];
    }
    case 'task.reviewed': return ['The reviewer ' + (d.verdict === 'APPROVED' ? 'approved the change' : d.verdict === 'REJECTED' ? 'rejected the change' : 'answered ' + d.verdict) + '.', d.reasons];
    case 'scout.asked': {
      const c = d.consultation || {};
      return [c.from + ' asked the scout ' + c.scout + ' (' + c.id + ').', c.question];
    }
    case 'scout.answered': return ['The scout answered ' + d.id + '.', d.answer];
    case 'scout.failed': return ['No answer from the scout to ' + d.id + ': ' + d.reason + '.'];
    case 'agent.permission':
      return [agent + ' asks permission' + (d.tool ? ' to use ' + d.tool : '') + (d.answer ? ': ' + d.answer : ': waiting for you') + '.', d.text];
    case 'delivery.queued': {
      const m = d.message || {};
      return [(m.type === 'task_delegation' ? 'The task' : 'A message') + ' (' + m.id + ') waits for ' + m.to + ' to fetch it.'];
    }
    case 'delivery.sent':
    case 'delivery.retried':
    case 'delivery.notice':
      return [(SEND_WORDS[d.kind] || 'Sent (' + String(d.kind || '').replace(/_/g, ' ') + ')') + ' ' + d.id + ' to ' + agent + (d.attempt > 1 ? ' (send ' + d.attempt + ')' : '') + '.'];
    case 'delivery.acknowledged': {
      const by = { caller: 'You acknowledged', matcher: agent + '\'s reply acknowledged', turn: agent + '\'s finished turn acknowledged' }[d.by] || (agent || d.by) + ' acknowledged';
      return [by + ' ' + d.id + (d.status ? ' (' + d.status.toLowerCase() + ')' : '') + '.', [d.understanding ? 'Understanding: ' + d.understanding : '', d.note ? 'Note: ' + d.note : ''].filter(Boolean).join('\n')];
    }
    case 'delivery.clarifying': return [agent + ' asks before starting ' + d.id + ':', (d.questions || []).join('\n')];
    case 'delivery.reply': {
      const kinds = { attempt_failed: 'The attempt failed: the agent is released from ' + d.id + '.', task_ended: 'The task ended: the agent is released from ' + d.id + '.' };
      return [kinds[d.kind] || (agent || 'The agent') + ' replied' + (d.kind && d.kind !== 'message' ? ' (' + d.kind.replace(/_/g, ' ') + ')' : '') + (d.id ? ' to ' + d.id : '') + '.', d.text];
    }
    case 'delivery.failed': return [d.id + ' failed' + (d.attempts ? ' after ' + plural(d.attempts, 'send') : '') + ': ' + d.reason + '.'];
    case 'delivery.cancelled': return [d.id + ' was withdrawn: ' + d.reason + '.'];
    case 'delivery.escalated': return [d.id + ' was escalated to you: ' + d.reason + '.'];
    case 'delivery.deferred': return [d.id + ' waits' + (d.timer_at ? ' until ' + clock(d.timer_at) : '') + ': ' + d.reason + '.'];
    case 'delivery.reassigned': return [d.id + ' passed from ' + d.from + ' to ' + d.to + ' as ' + d.new_id + '.'];
    case 'notification.queued': {
      const n = d.notification || {};
      return ['Notification ' + n.id + ' (' + n.hook + ') of ' + n.event + ' queued.'];
    }
    case 'notification.retried': return ['Notification ' + d.id + ': attempt ' + d.attempt + ' starts.'];
    case 'notification.attempt': return ['Notification ' + d.id + ': attempt ' + d.attempt + ' failed' + (d.status ? ' (HTTP ' + d.status + ')' : '') + (d.error ? ': ' + d.error : '') + (d.retry_at ? '; next at ' + clock(d.retry_at) : '') + '.'];
    case 'notification.delivered': return ['Notification ' + d.id + ' delivered' + (d.status ? ' (HTTP ' + d.status + ')' : '') + '.'];
    case 'notification.failed': return ['Notification ' + d.id + ' given up after ' + plural(d.attempts, 'attempt') + (d.error ? ': ' + d.error : '') + '.'];
    default: return [fields(d) || ev.type.replace(/[._]/g, ' ')];
  }
}
