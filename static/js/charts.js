/* Line charts as inline SVG, with a hover guide and tooltip; redrawn on resize. */

import { COMPACT, h, NUM, s, shortDate } from './render.js';

// ---------------------------------------------------------------- charts (inline SVG)
function niceTicks(lo, hi, count) {
  const span = hi - lo || 1;
  const raw = span / count;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const err = raw / mag;
  const step = (err >= 7.5 ? 10 : err >= 3.5 ? 5 : err >= 1.5 ? 2 : 1) * mag;
  const start = Math.floor(lo / step) * step;
  const ticks = [];
  for (let v = start; v <= hi + step * 0.5; v += step) ticks.push(Number(v.toPrecision(12)));
  if (ticks.length < 2) ticks.push(Number((start + step).toPrecision(12)));
  return ticks;
}

/**
 * spec: {labels: ['YYYY-MM-DD', ...], series: [{name, cls, values: [number|null], join: 'gap'|'connect'|'sparse',
 *        dots, titles, hover}], zero: bool, format: fn, empty: text, title: text}
 * 'gap' breaks the line at nulls; 'connect' joins the measured points; 'sparse' has a point
 * only where a value is given (undefined: no point that day) and breaks the line at nulls.
 * A point with no neighbour is drawn as a dot; `dots` draws every point; `titles[i]` replaces
 * a point's tooltip; `hover[i]` is the value the hover box shows for day i.
 * Not days: `xs` (numbers, one per label) places the points by value instead of evenly, and
 * `labelText(label)` writes a label on the axis and in the hover box (default: a short date).
 */
export function drawChart(container, spec) {
  container._chart = spec;
  container.classList.add('chart');
  const values = spec.series.flatMap((sr) => sr.values).filter((v) => typeof v === 'number' && Number.isFinite(v));
  if (!values.length) {
    container.replaceChildren(h('p', { class: 'chart-empty muted' }, spec.empty || 'Nothing to draw for this period.'));
    return;
  }
  const W = Math.max(260, Math.floor(container.clientWidth || 640));
  const H = W < 520 ? 200 : 250;
  const m = { l: 52, r: 14, t: 12, b: 28 };
  const n = spec.labels.length;
  const fmt = spec.format || ((v) => NUM.format(v));
  let lo = Math.min(...values);
  let hi = Math.max(...values);
  if (spec.zero) lo = Math.min(0, lo);
  if (lo === hi) {
    const pad = Math.abs(hi) * 0.1 || 1;
    lo = spec.zero && lo >= 0 ? Math.max(0, lo - pad) : lo - pad;
    hi += pad;
  }
  let ticks = niceTicks(lo, hi, W < 520 ? 4 : 5);
  if (spec.integer && ticks[1] - ticks[0] < 1) ticks = niceTicks(lo, Math.max(hi, lo + 1), Math.max(1, Math.ceil(hi - lo)));
  lo = ticks[0];
  hi = ticks[ticks.length - 1];
  const plotW = W - m.l - m.r;
  const plotH = H - m.t - m.b;
  const xs = Array.isArray(spec.xs) && spec.xs.length === n ? spec.xs : null;
  const xlo = xs ? Math.min(...xs) : 0;
  const xspan = xs ? Math.max(...xs) - xlo || 1 : 1;
  const x = (i) => m.l + (n <= 1 ? plotW / 2 : xs ? ((xs[i] - xlo) * plotW) / xspan : (i * plotW) / (n - 1));
  const labelText = spec.labelText || shortDate;
  const y = (v) => m.t + ((hi - v) / (hi - lo)) * plotH;

  const svg = s('svg', { class: 'chart-svg', width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: 'img',
    'aria-label': spec.title || spec.series.map((sr) => sr.name).join(', ') });
  const grid = s('g', { class: 'grid-lines' });
  for (const t of ticks) {
    grid.append(s('line', { x1: m.l, x2: W - m.r, y1: y(t), y2: y(t) }));
    grid.append(s('text', { x: m.l - 6, y: y(t), class: 'y-label', 'text-anchor': 'end', 'dominant-baseline': 'middle' }, COMPACT.format(t)));
  }
  svg.append(grid);
  const xlabels = s('g', { class: 'x-labels' });
  // Evenly spaced day labels, counted back from the newest day so it is always labelled; with
  // `xs`, every point's label that keeps clear of the one to its right.
  const maxLabels = Math.max(2, Math.floor(plotW / 78));
  const step = xs ? 1 : Math.max(1, Math.ceil((n - 1) / (maxLabels - 1)));
  let lastX = Infinity;
  for (let i = n - 1; i >= 0; i -= step) {
    if (xs && i < n - 1 && lastX - x(i) < 30) continue;
    lastX = x(i);
    const anchor = n === 1 ? 'middle' : i === n - 1 ? 'end' : x(i) - m.l < 30 ? 'start' : 'middle';
    xlabels.append(s('text', { x: x(i), y: H - 8, 'text-anchor': anchor }, labelText(spec.labels[i])));
  }
  svg.append(xlabels);

  const few = n <= 45;
  spec.series.forEach((sr) => {
    const g = s('g', { class: 'series ' + (sr.cls || '') });
    const segments = [];
    let seg = [];
    sr.values.forEach((v, i) => {
      if (typeof v === 'number' && Number.isFinite(v)) seg.push([i, v]);
      else if (sr.join === 'sparse' && v === undefined) return;
      else if ((sr.join === 'gap' || sr.join === 'sparse') && seg.length) { segments.push(seg); seg = []; }
    });
    if (seg.length) segments.push(seg);
    for (const part of segments) {
      if (part.length > 1) {
        const d = part.map(([i, v], k) => `${k ? 'L' : 'M'}${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
        g.append(s('path', { d, class: 'line' }));
      }
      for (const [i, v] of part) {
        if (part.length === 1 || few || sr.dots) {
          g.append(s('circle', { cx: x(i), cy: y(v), r: part.length === 1 ? 4 : sr.dots ? 3 : 2.5, class: part.length === 1 ? 'dot lone' : 'dot',
            'data-date': spec.labels[i], 'data-value': v },
          s('title', null, (sr.titles && sr.titles[i]) || `${spec.labels[i]}: ${sr.name} ${fmt(v)}`)));
        }
      }
    }
    svg.append(g);
  });

  // Hover: a guide line and a tooltip with every series' value for the nearest day.
  const guide = s('line', { class: 'guide', y1: m.t, y2: m.t + plotH, x1: 0, x2: 0, visibility: 'hidden' });
  svg.append(guide);
  const tip = h('div', { class: 'chart-tip', hidden: true });
  const overlay = s('rect', { x: m.l, y: m.t, width: plotW, height: plotH, class: 'overlay' });
  const hide = () => { tip.hidden = true; guide.setAttribute('visibility', 'hidden'); };
  overlay.addEventListener('pointermove', (ev) => {
    const rect = svg.getBoundingClientRect();
    const px = ev.clientX - rect.left;
    let i = n <= 1 ? 0 : Math.max(0, Math.min(n - 1, Math.round(((px - m.l) / plotW) * (n - 1))));
    if (xs) for (let k = 0; k < n; k++) if (Math.abs(x(k) - px) < Math.abs(x(i) - px)) i = k;
    guide.setAttribute('x1', x(i));
    guide.setAttribute('x2', x(i));
    guide.setAttribute('visibility', 'visible');
    tip.replaceChildren(h('strong', null, spec.labelText ? spec.labelText(spec.labels[i]) : spec.labels[i]), ...spec.series.map((sr) => {
      const v = sr.hover ? sr.hover[i] : sr.values[i];
      return h('div', null, h('span', { class: 'swatch ' + (sr.cls || '') }), `${sr.name}: `, typeof v === 'number' ? fmt(v) : 'no data');
    }));
    tip.hidden = false;
    const left = Math.min(Math.max(x(i) + 10, 0), W - 170);
    tip.style.left = (x(i) > W / 2 ? Math.max(0, x(i) - 180) : left) + 'px';
    tip.style.top = m.t + 'px';
  });
  overlay.addEventListener('pointerleave', hide);
  svg.append(overlay);

  const legend = spec.series.length > 1 || spec.legend
    ? h('div', { class: 'legend' }, spec.series.map((sr) => h('span', null, h('span', { class: 'swatch ' + (sr.cls || '') }), sr.name)))
    : null;
  container.replaceChildren(svg, tip, legend || '');
}

let resizeTimer = null;
window.addEventListener('resize', () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => {
    document.querySelectorAll('.chart').forEach((c) => { if (c._chart && c.isConnected) drawChart(c, c._chart); });
  }, 150);
});
