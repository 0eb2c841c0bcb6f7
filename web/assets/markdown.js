// markdown.js — the Markdown wilco writes for people (an escalation
// message) as elements: headings, paragraphs, bold, italics, inline code,
// lists, tables, fenced code and rules. It is built with h(): every
// character of the source ends up in a text node, so what an agent wrote
// into the message (an error, a file name) stays text whatever it holds.

import { h } from './dom.js';

const FENCE = /^\s{0,3}(`{3,}|~{3,})/;
const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
const ITEM = /^(\s*)([-*+]|(\d{1,9})[.)])\s+(.*)$/;
const TABLE_SEP = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

// markdown renders text as a <div class="markdown">. shift moves the
// headings down (1: "#" is an <h2>), so that they sit under the page's own.
export function markdown(text, shift = 0) {
  const lines = String(text || '').replace(/\r\n?/g, '\n').split('\n');
  return h('div', { class: 'markdown' }, blocks(lines, shift));
}

function blocks(lines, shift) {
  const out = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (line.trim() === '') { i++; continue; }
    const fence = FENCE.exec(line);
    if (fence) {
      const close = new RegExp('^\\s{0,3}' + fence[1][0] + '{' + fence[1].length + ',}\\s*$');
      const code = [];
      for (i++; i < lines.length && !close.test(lines[i]); i++) code.push(lines[i]);
      i++;
      out.push(h('pre', { class: 'code' }, h('code', null, code.join('\n'))));
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      out.push(h('h' + Math.min(6, heading[1].length + shift), null, inline(heading[2])));
      i++;
      continue;
    }
    if (RULE.test(line)) {
      out.push(h('hr'));
      i++;
      continue;
    }
    if (line.includes('|') && i + 1 < lines.length && lines[i + 1].includes('-') && TABLE_SEP.test(lines[i + 1])) {
      const head = cells(line);
      const rows = [];
      for (i += 2; i < lines.length && lines[i].trim() !== '' && lines[i].includes('|'); i++) rows.push(cells(lines[i], head.length));
      out.push(h('div', { class: 'table-wrap' }, h('table', null,
        h('thead', null, h('tr', null, head.map((c) => h('th', null, inline(c))))),
        h('tbody', null, rows.map((r) => h('tr', null, head.map((_, k) => h('td', null, inline(r[k] || '')))))))));
      continue;
    }
    const item = ITEM.exec(line);
    if (item) {
      const ordered = item[3] !== undefined;
      const items = [];
      while (i < lines.length) {
        const m = ITEM.exec(lines[i]);
        if (m && (m[3] !== undefined) === ordered) {
          items.push([m[4]]);
          i++;
        } else if (items.length && lines[i].trim() !== '' && /^\s+\S/.test(lines[i]) && !m) {
          items[items.length - 1].push(lines[i].trim());
          i++;
        } else {
          break;
        }
      }
      const lis = items.map((parts) => h('li', null, inline(parts.join(' '))));
      out.push(ordered ? h('ol', { start: item[3] !== '1' ? Number(item[3]) : null }, lis) : h('ul', null, lis));
      continue;
    }
    // A paragraph: its lines as they are written, one under the other.
    const para = [];
    while (i < lines.length && lines[i].trim() !== '' && !startsBlock(lines, i)) para.push(lines[i++].trim());
    if (!para.length) para.push(lines[i++].trim());
    out.push(h('p', null, para.map((l, k) => [k ? h('br') : null, inline(l)])));
  }
  return out;
}

function startsBlock(lines, i) {
  const l = lines[i];
  return FENCE.test(l) || HEADING.test(l) || RULE.test(l) || ITEM.test(l)
    || (l.includes('|') && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1]) && lines[i + 1].includes('-'));
}

// cells splits a table row at its pipes (not an escaped one). A row with
// more cells than the header (an unescaped pipe in the last cell's text)
// keeps the rest in its last cell.
function cells(row, n) {
  let s = row.trim();
  if (s.startsWith('|')) s = s.slice(1);
  if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1);
  const parts = [];
  let cur = '';
  for (let k = 0; k < s.length; k++) {
    if (s[k] === '\\' && s[k + 1] === '|') { cur += '|'; k++; continue; }
    if (s[k] === '|') { parts.push(cur); cur = ''; continue; }
    cur += s[k];
  }
  parts.push(cur);
  if (n && parts.length > n) parts.splice(n - 1, parts.length - n + 1, parts.slice(n - 1).join('|'));
  return parts.map((c) => c.trim());
}

// INLINE finds `code`, **bold** and *italics* — never _underscores_:
// they are in names such as verification_failed.
const INLINE = /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)|\*\*(?=\S)([\s\S]*?\S)\*\*|\*(?=[^\s*])([^*]*?[^\s*])\*(?!\*)/;

// inline renders a line's code, bold and italics; the rest is text.
export function inline(text) {
  const re = new RegExp(INLINE.source, 'g');
  const out = [];
  let last = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    if (m[1] !== undefined) out.push(h('code', null, m[2].replace(/^ (.*) $/, '$1')));
    else if (m[3] !== undefined) out.push(h('strong', null, inline(m[3])));
    else out.push(h('em', null, inline(m[4])));
    last = re.lastIndex;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}
