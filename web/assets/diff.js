// diff.js — a dry run's unified diff (git's format), read into files and
// hunks and shown unified or side by side. Every line is text.

import { h, replace } from './dom.js';

// C escapes of a quoted name, by the letter after the backslash.
const ESCAPES = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };

// unquote reads a file name as git quotes it: between double quotes, with
// C escapes (\t, \n, \", \\…) and each byte above 0x7f (a name's UTF-8)
// as three octal digits — "r\303\251sum\303\251.txt" is résumé.txt. As
// git's quote.c writes it (quote_c_style) and reads it back
// (unquote_c_style), git/git at 00d3278c. It returns the name and what
// follows the closing quote, or null when s does not start with a whole
// quoted name.
export function unquote(s) {
  if (s[0] !== '"') return null;
  const bytes = [];
  const utf8 = new TextEncoder();
  let i = 1;
  while (i < s.length) {
    const c = s[i];
    if (c === '"') return { name: new TextDecoder().decode(new Uint8Array(bytes)), rest: s.slice(i + 1) };
    if (c !== '\\') {
      let j = i;
      while (j < s.length && s[j] !== '"' && s[j] !== '\\') j++;
      for (const b of utf8.encode(s.slice(i, j))) bytes.push(b);
      i = j;
      continue;
    }
    const e = s[i + 1];
    if (e !== undefined && Object.hasOwn(ESCAPES, e)) {
      bytes.push(ESCAPES[e]);
      i += 2;
    } else if (/^[0-3][0-7][0-7]/.test(s.slice(i + 1, i + 4))) {
      bytes.push(parseInt(s.slice(i + 1, i + 4), 8));
      i += 4;
    } else {
      return null;
    }
  }
  return null;
}

// pathField is the name of a "---", "+++", "rename from/to" or "copy
// from/to" line: quoted, or as it is up to a tab (git ends an unquoted
// name that holds a space with one).
function pathField(s) {
  const q = unquote(s);
  if (q && q.rest.trim() === '') return q.name;
  const tab = s.indexOf('\t');
  return tab >= 0 ? s.slice(0, tab) : s;
}

function strip(name, prefix) {
  return name.startsWith(prefix) ? name.slice(prefix.length) : name;
}

// headerNames reads the two names of "diff --git a/<old> b/<new>" (rest is
// what follows "diff --git "). Git quotes a name only for the characters
// above; one with spaces stays as it is, so the line alone may not say
// where the first name ends: when both names are the same (any change
// but a rename or a copy) it is the middle of the line; else the first
// " b/". The "---"/"+++" and "rename" lines that follow, when there are
// some, say it for sure.
export function headerNames(rest) {
  let a = null;
  let b = null;
  const first = unquote(rest);
  if (first) {
    if (first.rest[0] === ' ') {
      a = first.name;
      b = pathField(first.rest.slice(1));
    }
  } else {
    const m = /^(.*?) ("(?:[^"\\]|\\.)*")$/.exec(rest);
    const second = m && unquote(m[2]);
    if (second && second.rest === '') {
      a = m[1];
      b = second.name;
    } else if (rest.length % 2 === 1 && rest[(rest.length - 1) / 2] === ' '
      && strip(rest.slice(0, (rest.length - 1) / 2), 'a/') === strip(rest.slice((rest.length + 1) / 2), 'b/')) {
      a = rest.slice(0, (rest.length - 1) / 2);
      b = rest.slice((rest.length + 1) / 2);
    } else {
      const at = rest.indexOf(' b/');
      if (at >= 0) {
        a = rest.slice(0, at);
        b = rest.slice(at + 1);
      }
    }
  }
  if (a === null) return { oldPath: rest, path: rest };
  return { oldPath: strip(a, 'a/'), path: strip(b, 'b/') };
}

// parse reads a unified diff into files: {path, oldPath, status, hunks:
// [{header, lines: [{kind: ' '|'-'|'+'|'\\', text, old, new}]}], added,
// removed}. The paths are the files' real names (git's quoting undone).
export function parse(text) {
  const files = [];
  let file = null;
  let hunk = null;
  let oldNo = 0;
  let newNo = 0;
  const start = (oldPath, newPath) => {
    file = { path: newPath || oldPath, oldPath, status: 'modified', hunks: [], added: 0, removed: 0, binary: false };
    files.push(file);
    hunk = null;
  };
  for (const line of String(text).split('\n')) {
    if (line.startsWith('diff --git ')) {
      const names = headerNames(line.slice(11));
      start(names.oldPath, names.path);
      continue;
    }
    if (!file && (line.startsWith('--- ') || line.startsWith('@@'))) start('', '');
    if (!file) continue;
    if (!hunk) {
      if (line.startsWith('new file mode')) { file.status = 'new'; continue; }
      if (line.startsWith('deleted file mode')) { file.status = 'deleted'; continue; }
      if (line.startsWith('rename from ')) { file.oldPath = pathField(line.slice(12)); file.status = 'renamed'; continue; }
      if (line.startsWith('rename to ')) { file.path = pathField(line.slice(10)); continue; }
      if (line.startsWith('copy from ')) { file.oldPath = pathField(line.slice(10)); file.status = 'copied'; continue; }
      if (line.startsWith('copy to ')) { file.path = pathField(line.slice(8)); continue; }
      if (line.startsWith('Binary files') || line === 'GIT binary patch') { file.binary = true; continue; }
      if (line.startsWith('--- ')) { const p = pathField(line.slice(4)); if (p !== '/dev/null') file.oldPath = strip(p, 'a/'); continue; }
      if (line.startsWith('+++ ')) { const p = pathField(line.slice(4)); if (p !== '/dev/null') file.path = strip(p, 'b/'); continue; }
    }
    const m = line.match(/^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@(.*)$/);
    if (m) {
      hunk = { header: line, lines: [] };
      file.hunks.push(hunk);
      oldNo = Number(m[1]);
      newNo = Number(m[2]);
      continue;
    }
    if (!hunk) continue;
    const kind = line[0];
    const body = line.slice(1);
    if (kind === '+') { hunk.lines.push({ kind, text: body, new: newNo++ }); file.added++; }
    else if (kind === '-') { hunk.lines.push({ kind, text: body, old: oldNo++ }); file.removed++; }
    else if (kind === ' ') hunk.lines.push({ kind, text: body, old: oldNo++, new: newNo++ });
    else if (kind === '\\') hunk.lines.push({ kind, text: line });
  }
  return files;
}

// view renders the files; mode is 'unified' or 'split'.
export function view(files, mode) {
  if (!files.length) return h('p', { class: 'empty' }, 'The diff is empty: the dry run changed nothing.');
  return h('div', { class: 'diff ' + mode },
    files.map((f) => h('div', { class: 'diff-file', dataset: { path: f.path } },
      h('div', { class: 'diff-file-head' },
        h('span', { class: 'mono' }, f.status === 'renamed' || f.status === 'copied' ? f.oldPath + ' → ' + f.path : f.path),
        f.status !== 'modified' ? h('span', { class: 'tag ' + f.status }, f.status === 'new' ? 'new file' : f.status) : null,
        h('span', { class: 'add' }, '+' + f.added), h('span', { class: 'del' }, '−' + f.removed)),
      f.binary ? h('p', { class: 'muted' }, 'binary file') : null,
      h('table', { class: 'diff-lines' },
        // The columns' widths (the table's layout is fixed: the first row,
        // a hunk header across all of them, would give none).
        h('colgroup', null, mode === 'split'
          ? [h('col', { class: 'ln' }), h('col'), h('col', { class: 'ln' }), h('col')]
          : [h('col', { class: 'ln' }), h('col', { class: 'ln' }), h('col')]),
        h('tbody', null,
        f.hunks.map((hk) => [
          h('tr', { class: 'hunk' }, h('td', { colspan: mode === 'split' ? 4 : 3 }, hk.header)),
          mode === 'split' ? splitRows(hk.lines) : hk.lines.map(unifiedRow),
        ]))))));
}

function num(n) { return h('td', { class: 'ln' }, n === undefined ? '' : String(n)); }

function unifiedRow(l) {
  const cls = l.kind === '+' ? 'add' : l.kind === '-' ? 'del' : l.kind === '\\' ? 'note' : 'ctx';
  return h('tr', { class: cls }, num(l.old), num(l.new), h('td', { class: 'code' }, (l.kind === '\\' ? '' : l.kind) + l.text));
}

// splitRows pairs each run of removed lines with the added lines after it.
function splitRows(list) {
  const rows = [];
  let i = 0;
  while (i < list.length) {
    const l = list[i];
    if (l.kind === ' ' || l.kind === '\\') {
      rows.push(h('tr', { class: l.kind === '\\' ? 'note' : 'ctx' }, num(l.old), h('td', { class: 'code' }, l.text), num(l.new), h('td', { class: 'code' }, l.text)));
      i++;
      continue;
    }
    const dels = [];
    const adds = [];
    while (i < list.length && list[i].kind === '-') dels.push(list[i++]);
    while (i < list.length && list[i].kind === '+') adds.push(list[i++]);
    for (let k = 0; k < Math.max(dels.length, adds.length); k++) {
      const d = dels[k];
      const a = adds[k];
      rows.push(h('tr', null,
        num(d && d.old), h('td', { class: ['code', d ? 'del' : 'blank'] }, d ? d.text : ''),
        num(a && a.new), h('td', { class: ['code', a ? 'add' : 'blank'] }, a ? a.text : '')));
    }
  }
  return rows;
}

// viewer is a diff with its unified / side-by-side switch.
export function viewer(text) {
  const files = parse(text);
  const box = h('div', { class: 'diff-box' });
  let mode = localStorage.getItem('wilco.diff') || 'split';
  const buttons = ['split', 'unified'].map((m) => h('button', {
    type: 'button', class: 'small', dataset: { mode: m },
    onclick: () => { mode = m; localStorage.setItem('wilco.diff', m); show(); },
  }, m === 'split' ? 'Side by side' : 'Unified'));
  function show() {
    for (const b of buttons) b.classList.toggle('active', b.dataset.mode === mode);
    replace(box, view(files, mode));
  }
  show();
  const added = files.reduce((a, f) => a + f.added, 0);
  const removed = files.reduce((a, f) => a + f.removed, 0);
  return h('div', { class: 'diff-viewer' },
    h('div', { class: 'diff-bar' },
      h('span', null, files.length + (files.length === 1 ? ' file' : ' files') + ', ', h('span', { class: 'add' }, '+' + added), ' ', h('span', { class: 'del' }, '−' + removed)),
      h('span', { class: 'seg' }, buttons)),
    box);
}
