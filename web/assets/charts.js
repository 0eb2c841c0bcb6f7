// charts.js — charts as inline SVG, drawn from numbers; every label is a
// text node.

import { s } from './dom.js';

const W = 640;
const H = 220;
const PAD = { l: 44, r: 12, t: 12, b: 34 };

function frame(label) {
  return s('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', 'aria-label': label });
}

// yAxis draws gridlines and labels for values 0..max.
function yAxis(svg, max, format) {
  const steps = 4;
  for (let i = 0; i <= steps; i++) {
    const v = (max * i) / steps;
    const y = PAD.t + (H - PAD.t - PAD.b) * (1 - i / steps);
    svg.append(s('line', { x1: PAD.l, x2: W - PAD.r, y1: y, y2: y, class: 'grid' }));
    svg.append(s('text', { x: PAD.l - 6, y: y + 4, class: 'axis', 'text-anchor': 'end' }, format(v)));
  }
}

// xLabels writes some of the labels under the plot (at most ~8).
function xLabels(svg, labels, xOf) {
  // Counted from the last (today's), so that it is always there.
  const every = Math.max(1, Math.ceil(labels.length / 8));
  labels.forEach((l, i) => {
    if ((labels.length - 1 - i) % every !== 0) return;
    svg.append(s('text', { x: xOf(i), y: H - PAD.b + 16, class: 'axis', 'text-anchor': 'middle' }, l));
  });
}

function niceMax(v) {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}

// lines draws series of points over labels: series [{name, cls, values:
// [number|null]}]; a null is a gap (a day with nothing to measure).
export function lines(labels, series, { max, format = String, label = 'chart' } = {}) {
  const svg = frame(label);
  const top = max || niceMax(Math.max(0, ...series.flatMap((x) => x.values.filter((v) => v !== null)))); 
  yAxis(svg, top, format);
  const plotW = W - PAD.l - PAD.r;
  const xOf = (i) => PAD.l + (labels.length <= 1 ? plotW / 2 : (plotW * i) / (labels.length - 1));
  const yOf = (v) => PAD.t + (H - PAD.t - PAD.b) * (1 - v / top);
  xLabels(svg, labels, xOf);
  for (const ser of series) {
    let d = '';
    ser.values.forEach((v, i) => {
      if (v === null) return;
      const prev = i > 0 ? ser.values[i - 1] : null;
      d += (prev === null ? 'M' : 'L') + xOf(i).toFixed(1) + ' ' + yOf(v).toFixed(1) + ' ';
    });
    svg.append(s('path', { d: d.trim() || 'M0 0', class: 'line ' + ser.cls }));
    ser.values.forEach((v, i) => {
      if (v === null) return;
      svg.append(s('circle', { cx: xOf(i), cy: yOf(v), r: 3, class: 'dot ' + ser.cls },
        s('title', null, labels[i] + ' · ' + ser.name + ': ' + format(v))));
    });
  }
  return svg;
}

// bars draws one bar per label: values [number].
export function bars(labels, values, { format = String, cls = '', label = 'chart', counts = false } = {}) {
  const svg = frame(label);
  // Counts have whole steps: at least 4 at the top.
  const top = counts ? Math.max(4, Math.ceil(niceMax(Math.max(0, ...values)) / 4) * 4) : niceMax(Math.max(0, ...values));
  yAxis(svg, top, format);
  const plotW = W - PAD.l - PAD.r;
  const slot = plotW / Math.max(1, labels.length);
  const bw = Math.max(2, slot * 0.7);
  const xOf = (i) => PAD.l + slot * i + slot / 2;
  xLabels(svg, labels, xOf);
  values.forEach((v, i) => {
    const hgt = (H - PAD.t - PAD.b) * (v / top);
    svg.append(s('rect', { x: xOf(i) - bw / 2, y: H - PAD.b - hgt, width: bw, height: Math.max(0, hgt), class: 'bar ' + cls },
      s('title', null, labels[i] + ': ' + format(v))));
  });
  return svg;
}

// hbars draws one horizontal bar per item: items [{label, value, cls}].
export function hbars(items, { format = String, label = 'chart' } = {}) {
  const rowH = 26;
  const height = Math.max(1, items.length) * rowH + 8;
  const svg = s('svg', { viewBox: `0 0 ${W} ${height}`, class: 'chart', role: 'img', 'aria-label': label });
  const top = Math.max(1, ...items.map((x) => x.value));
  const left = 170;
  items.forEach((it, i) => {
    const y = 4 + i * rowH;
    const w = ((W - left - 60) * it.value) / top;
    svg.append(s('text', { x: left - 8, y: y + 16, class: 'axis', 'text-anchor': 'end' }, it.label));
    svg.append(s('rect', { x: left, y: y + 3, width: Math.max(1, w), height: rowH - 8, class: 'bar ' + (it.cls || '') }, s('title', null, it.label + ': ' + format(it.value))));
    svg.append(s('text', { x: left + w + 6, y: y + 16, class: 'axis' }, format(it.value)));
  });
  return svg;
}
