// diff.js — a dry run's unified diff (git's format), read into files and
// hunks and shown unified or side by side. Every line is text.

import { h, replace } from './dom.js';

// parse reads a unified diff into files: {path, oldPath, status, hunks:
// [{header, lines: [{kind: ' '|'-'|'+'|'\\', text, old, new}]}], added,
// removed}.
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
      const m = line.match(/^diff --git a\/(.*) b\/(.*)$/);
      start(m ? m[1] : line.slice(11), m ? m[2] : '');
      continue;
    }
    if (!file && (line.startsWith('--- ') || line.startsWith('@@'))) start('', '');
    if (!file) continue;
    if (!hunk) {
      if (line.startsWith('new file mode')) { file.status = 'new'; continue; }
      if (line.startsWith('deleted file mode')) { file.status = 'deleted'; continue; }
      if (line.startsWith('rename from ')) { file.oldPath = line.slice(12); file.status = 'renamed'; continue; }
      if (line.startsWith('rename to ')) { file.path = line.slice(10); continue; }
      if (line.startsWith('Binary files')) { file.binary = true; continue; }
      if (line.startsWith('--- ')) { const p = line.slice(4); if (p !== '/dev/null') file.oldPath = p.replace(/^a\//, ''); continue; }
      if (line.startsWith('+++ ')) { const p = line.slice(4); if (p !== '/dev/null') file.path = p.replace(/^b\//, ''); continue; }
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
        h('span', { class: 'mono' }, f.status === 'renamed' ? f.oldPath + ' → ' + f.path : f.path),
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
