// ui.js — small pieces the views share: messages, two-step buttons,
// tables, tabs.

import { h, replace } from './dom.js';

// flash shows a message in el for a while (errors stay until replaced).
export function flash(el, text, kind = 'ok') {
  replace(el, h('div', { class: ['flash', kind], role: kind === 'error' ? 'alert' : 'status' }, text));
  if (kind !== 'error') {
    const shown = el.firstChild;
    setTimeout(() => { if (el.firstChild === shown) el.replaceChildren(); }, 6000);
  }
}

// act runs fn for a button: the button is disabled meanwhile, and an error
// goes to the message element.
export async function act(button, msgEl, fn) {
  button.disabled = true;
  try {
    return await fn();
  } catch (e) {
    if (msgEl) flash(msgEl, e.message, 'error');
    return undefined;
  } finally {
    button.disabled = false;
  }
}

// armedUntil keeps which two-step buttons wait for their second click, by
// key, so that a view drawn again by a live update keeps them armed.
const armedUntil = new Map();
const ARMED_MS = 4000;

// confirmButton asks for a second click before doing something that cannot
// be undone (no modal dialog: the page never blocks).
export function confirmButton(label, confirmLabel, attrs, fn) {
  const key = confirmLabel + '|' + (attrs.id || JSON.stringify(attrs.dataset || {}));
  const b = h('button', { type: 'button', ...attrs }, label);
  let timer = 0;
  const show = (armed) => {
    b.textContent = armed ? confirmLabel : label;
    b.classList.toggle('armed', armed);
  };
  const arm = (until) => {
    show(true);
    clearTimeout(timer);
    timer = setTimeout(() => { armedUntil.delete(key); show(false); }, until - Date.now());
  };
  if ((armedUntil.get(key) || 0) > Date.now()) arm(armedUntil.get(key));
  b.addEventListener('click', async () => {
    if (!((armedUntil.get(key) || 0) > Date.now())) {
      const until = Date.now() + ARMED_MS;
      armedUntil.set(key, until);
      arm(until);
      return;
    }
    clearTimeout(timer);
    armedUntil.delete(key);
    show(false);
    await fn(b);
  });
  return b;
}

// table makes a table: cols are [header, class?]; rows are arrays of cells.
export function table(cols, rows, attrs) {
  return h('table', attrs || null,
    h('thead', null, h('tr', null, cols.map((c) => h('th', { class: c[1] || null }, c[0])))),
    h('tbody', null, rows));
}

// section is a titled block.
export function section(title, ...children) {
  return h('section', { class: 'block' }, h('h2', null, title), ...children);
}

// field is a label and its input.
export function field(label, input, hint) {
  return h('div', { class: 'field' }, h('label', { for: input.id }, label), input, hint ? h('small', { class: 'hint' }, hint) : null);
}

export function empty(text) {
  return h('p', { class: 'empty' }, text);
}

// json renders a value as indented JSON text.
export function json(v) {
  return h('pre', { class: 'text json' }, JSON.stringify(v, null, 2));
}
