// live.js — wilco's event stream (GET /v1/events, Server-Sent Events),
// read with fetch rather than EventSource: the session cookie goes with it,
// a 401 is told apart from a network error, and every event type comes
// through one reader. After a break it reconnects from the last event it
// got, so no event is lost or repeated.
//
// It also measures how late events reach the page: received is the time
// from the event's commit (its time) to its arrival here; rendered, to the
// moment the views that show it have updated (a listener returns a promise
// that settles then).

import { parseTime } from './dom.js';

const listeners = new Set();
const stateListeners = new Set();
const MAX_SAMPLES = 5000;
const samples = { received: [], rendered: [] };
let lastSeq = 0;
let state = 'connecting';
let controller = null;
let running = false;
let loggedOut = () => {};

// subscribe calls fn(event) for every event; fn may return a promise that
// settles once the page shows it. It returns the unsubscribe function.
export function subscribe(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

export function onState(fn) {
  stateListeners.add(fn);
  fn(state);
  return () => stateListeners.delete(fn);
}

function setState(s) {
  state = s;
  for (const fn of stateListeners) fn(s);
}

export function setLoggedOutHandler(fn) { loggedOut = fn; }

// start reads the stream from after the event afterSeq.
export function start(afterSeq) {
  lastSeq = afterSeq;
  if (running) return;
  running = true;
  loop();
}

export function stop() {
  running = false;
  if (controller) controller.abort();
  setState('stopped');
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function loop() {
  let backoff = 250;
  while (running) {
    controller = new AbortController();
    try {
      const r = await fetch('/v1/events?after=' + lastSeq, {
        headers: { Accept: 'text/event-stream' }, credentials: 'same-origin', cache: 'no-store', signal: controller.signal,
      });
      if (r.status === 401) {
        running = false;
        setState('logged out');
        loggedOut('the session ended');
        return;
      }
      if (!r.ok) throw new Error('HTTP ' + r.status);
      setState('live');
      backoff = 250;
      await read(r.body);
    } catch (e) {
      if (!running) return;
    }
    if (!running) return;
    setState('reconnecting');
    await sleep(backoff);
    backoff = Math.min(backoff * 2, 5000);
  }
}

async function read(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
      }
      if (data.length) {
        let ev;
        try { ev = JSON.parse(data.join('\n')); } catch { continue; }
        dispatch(ev);
      }
    }
  }
}

function sample(list, v) {
  list.push(v);
  if (list.length > MAX_SAMPLES) list.splice(0, list.length - MAX_SAMPLES);
}

function dispatch(ev) {
  if (ev.seq <= lastSeq) return;
  lastSeq = ev.seq;
  const at = parseTime(ev.time);
  sample(samples.received, Date.now() - at);
  const pending = [];
  for (const fn of listeners) {
    try {
      const p = fn(ev);
      if (p && typeof p.then === 'function') pending.push(p);
    } catch (e) {
      console.warn('event listener failed', e);
    }
  }
  if (pending.length) {
    Promise.allSettled(pending).then(() => sample(samples.rendered, Date.now() - at));
  }
}

export function lastEventSeq() { return lastSeq; }

function median(list) {
  if (!list.length) return null;
  const s = [...list].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

// latency is what was measured: every sample (ms) and the medians.
export function latency() {
  return {
    received: [...samples.received], rendered: [...samples.rendered],
    median_received: median(samples.received), median_rendered: median(samples.rendered),
  };
}

export function resetLatency() {
  samples.received.length = 0;
  samples.rendered.length = 0;
}
