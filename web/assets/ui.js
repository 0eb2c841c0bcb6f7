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

// confirmButton asks for a second click before doing something that cannot
// be undone (no modal dialog: the page never blocks).
export function confirmButton(label, confirmLabel, attrs, fn) {
  let armed = false;
  let timer = 0;
  const b = h('button', { type: 'button', ...attrs }, label);
  b.addEventListener('click', async () => {
    if (!armed) {
      armed = true;
      b.textContent = confirmLabel;
      b.classList.add('armed');
      timer = setTimeout(() => { armed = false; b.textContent = label; b.classList.remove('armed'); }, 4000);
      return;
    }
    clearTimeout(timer);
    armed = false;
    b.textContent = label;
    b.classList.remove('armed');
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
