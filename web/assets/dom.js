// dom.js — building the page's elements. Text always goes in as text
// nodes (textContent): nothing from the server, least of all what agents
// wrote, is ever parsed as HTML.

const SVG = 'http://www.w3.org/2000/svg';

// h(tag, attrs, ...children) makes an element. attrs: class, for (label),
// onclick and other on* (listeners), dataset (an object), value, checked,
// disabled, hidden, and any other attribute (set with setAttribute).
// children: strings and numbers (text nodes), elements, arrays of them,
// null/undefined/false (skipped).
export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

// s is h for SVG elements.
export function s(tag, attrs, ...children) {
  return build(document.createElementNS(SVG, tag), attrs, children);
}

function build(el, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') {
      el.addEventListener(k.slice(2), v);
    } else if (k === 'dataset') {
      Object.assign(el.dataset, v);
    } else if (k === 'value' || k === 'checked' || k === 'disabled' || k === 'hidden' || k === 'open') {
      el[k] = v;
    } else if (k === 'class') {
      el.setAttribute('class', Array.isArray(v) ? v.filter(Boolean).join(' ') : v);
    } else {
      el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

// replace empties el and puts children in.
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// text is a <pre> of text, or nothing for none.
export function pre(text, cls) {
  if (text === undefined || text === null || text === '') return null;
  return h('pre', { class: cls || 'text' }, text);
}

// --- formats --------------------------------------------------------------

// parseTime reads an RFC 3339 time with nanoseconds (Date.parse wants at
// most milliseconds in some browsers).
export function parseTime(t) {
  if (!t) return NaN;
  return Date.parse(String(t).replace(/(\.\d{3})\d+/, '$1'));
}

export function ago(t, now = Date.now()) {
  const ms = parseTime(t);
  if (Number.isNaN(ms)) return 'never';
  const d = Math.max(0, now - ms);
  if (d < 5000) return 'just now';
  return duration(d) + ' ago';
}

export function duration(ms) {
  if (!(ms >= 0)) return '';
  const s = Math.floor(ms / 1000);
  if (s < 60) return s + 's';
  const m = Math.floor(s / 60);
  if (m < 60) return m + 'm' + String(s % 60).padStart(2, '0') + 's';
  const hr = Math.floor(m / 60);
  if (hr < 48) return hr + 'h' + String(m % 60).padStart(2, '0') + 'm';
  return Math.floor(hr / 24) + 'd' + String(hr % 24).padStart(2, '0') + 'h';
}

// elapsed is how long a task ran: from its start to its end (or now).
export function elapsed(task, now = Date.now()) {
  const start = parseTime(task.started_at);
  if (Number.isNaN(start)) return '';
  const end = task.finished_at ? parseTime(task.finished_at) : now;
  return duration(end - start);
}

export function clock(t) {
  const ms = parseTime(t);
  if (Number.isNaN(ms)) return '';
  const d = new Date(ms);
  const today = new Date();
  const time = d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
  if (d.toDateString() === today.toDateString()) return time;
  return d.toLocaleDateString([], { month: 'short', day: 'numeric' }) + ' ' + time;
}

export function money(usd) {
  if (!usd) return '—';
  return usd < 0.01 ? '<$0.01' : '$' + usd.toFixed(2);
}

export function tokens(n) {
  if (!n) return '0';
  if (n < 1000) return String(n);
  if (n < 1e6) return (n / 1000).toFixed(1) + 'k';
  return (n / 1e6).toFixed(2) + 'M';
}

export function pct(n, of) {
  if (!of) return '—';
  return Math.round((100 * n) / of) + '%';
}

// lines splits a textarea into its non-empty lines.
export function lines(text) {
  return String(text || '').split('\n').map((l) => l.trim()).filter(Boolean);
}

// badge is a task's (or anything's) state as a coloured label.
export function badge(state, extra) {
  return h('span', { class: ['badge', 'st-' + state] }, state, extra ? h('small', null, ' ' + extra) : null);
}

export function taskLink(id) {
  return h('a', { href: '#/tasks/' + encodeURIComponent(id), class: 'mono' }, id);
}

// coalesce makes a function that runs fn one call at a time: a call while
// fn runs schedules one more run after it. Each call's promise resolves
// when a run that started after the call has finished — so a caller knows
// when what it asked for is on the page.
export function coalesce(fn) {
  let running = null;
  let again = null;
  const start = () => {
    running = Promise.resolve().then(fn).catch((e) => console.warn(e)).finally(() => { running = null; });
    return running;
  };
  return () => {
    if (!running) return start();
    if (!again) {
      again = running.then(() => { again = null; return start(); });
    }
    return again;
  };
}
