/* The player's history: the daily chart with its metric switcher, the 7/30/90-day changes
 * and the week-by-week WN8. */

import { dayRange, fmtCell, h, isObj, label, lazyDetails, listTable, muted, NUM, renderAny, scroller, shortDate } from './render.js';
import { drawChart } from './charts.js';

export const HISTORY_DAYS = 90;

const METRICS = [
  { id: 'battles_per_day', name: 'Battles per day', zero: true, integer: true },
  { id: 'wn8', name: 'WN8' },
  { id: 'win_rate', name: 'Win rate', format: (v) => NUM.format(v) + ' %' },
  { id: 'avg_damage', name: 'Avg. damage' },
  { id: 'battles', name: 'Battles (total)' },
  { id: 'period_wn8', name: 'Period WN8' },
];

function metricValues(metric, labels, snapshots) {
  const byDate = new Map(snapshots.map((sn) => [sn.date, sn]));
  if (metric.id === 'battles_per_day') {
    const values = labels.map(() => null);
    const pos = new Map(labels.map((d, i) => [d, i]));
    for (let k = 1; k < snapshots.length; k++) {
      const a = snapshots[k - 1]; const b = snapshots[k];
      if (typeof a.battles === 'number' && typeof b.battles === 'number' && pos.has(b.date)) values[pos.get(b.date)] = b.battles - a.battles;
    }
    return values;
  }
  return labels.map((d) => {
    const sn = byDate.get(d);
    return sn && typeof sn[metric.id] === 'number' ? sn[metric.id] : null;
  });
}

function renderDeltas(deltas, ctx) {
  // recent_100 / recent_1000 and each delta's `period` are the recents panel's; this table shows the changes.
  const periods = Object.keys(deltas).filter((p) => !p.startsWith('recent_'));
  const rows = [];
  for (const p of periods) if (isObj(deltas[p])) for (const k of Object.keys(deltas[p])) if (!rows.includes(k) && !['from', 'to', 'period'].includes(k)) rows.push(k);
  const hasRange = periods.some((p) => isObj(deltas[p]) && (deltas[p].from || deltas[p].to));
  const periodLabel = (p) => (/^\d+d$/.test(p) ? `${p.slice(0, -1)} days` : label(p));
  return scroller(h('table', { class: 'grid deltas' },
    h('thead', null, h('tr', null, h('th', null, ''), periods.map((p) => h('th', { scope: 'col' }, periodLabel(p))))),
    h('tbody', null,
      hasRange ? h('tr', null, h('th', { scope: 'row' }, 'Period'), periods.map((p) => h('td', null,
        isObj(deltas[p]) ? h('span', { title: `${deltas[p].from ?? '?'} → ${deltas[p].to ?? '?'}` },
          `${deltas[p].from ? shortDate(deltas[p].from) : '?'} → ${deltas[p].to ? shortDate(deltas[p].to) : '?'}`)
          : muted('no snapshot that old')))) : null,
      rows.map((k) => h('tr', null, h('th', { scope: 'row' }, label(k)), periods.map((p) =>
        h('td', { class: 'num' }, isObj(deltas[p]) ? fmtCell(deltas[p][k], k, ctx) : muted('—'))))))));
}

function addDays(iso, n) {
  const d = new Date(iso + 'T00:00:00Z');
  return Number.isNaN(d.getTime()) ? null : new Date(d.getTime() + n * 86400000).toISOString().slice(0, 10);
}

/**
 * The history's `weekly` (7-day weeks, oldest first, each the figures of the battles played in
 * it; null before the per-tank records begin) as a sparse series on the daily axis: each week's
 * WN8 on the day it ends, the line broken at a week without battles. Null without `weekly`.
 */
function weeklyWn8Series(labels, weekly) {
  if (!Array.isArray(weekly) || !labels.length) return null;
  const known = weekly.findIndex((w) => isObj(w) && w.to);
  if (known < 0) return null;
  const at = Object.fromEntries(labels.map((d, i) => [d, i]));
  const values = labels.map(() => undefined);
  const hover = labels.map(() => null);
  const titles = labels.map(() => null);
  let points = 0;
  weekly.forEach((w, k) => {
    const to = isObj(w) && w.to ? w.to : addDays(weekly[known].to, 7 * (k - known));   // a null week's end
    const i = at[to];
    const wn8 = isObj(w) && w.battles && typeof w.wn8 === 'number' ? w.wn8 : null;
    if (i === undefined) return;   // ends before the chart's first day
    values[i] = wn8;
    if (wn8 !== null) points += 1;
    const from = isObj(w) && w.from ? w.from : addDays(to, -7);
    for (let j = i; j >= 0 && labels[j] > from; j -= 1) hover[j] = wn8;
    titles[i] = `Week ${from} → ${to}: ` + (wn8 !== null ? `WN8 ${NUM.format(wn8)} over ${NUM.format(w.battles)} battles`
      : isObj(w) ? 'no battles' : 'no per-tank records');
  });
  return { name: 'WN8 per week', cls: 's-main weekly', values, hover, titles, join: 'sparse', dots: true, points };
}

export function renderHistory(data, region) {
  const snapshots = (Array.isArray(data.snapshots) ? data.snapshots : []).filter((sn) => sn && sn.date).sort((a, b) => (a.date < b.date ? -1 : 1));
  const first = data.first_date || (snapshots[0] && snapshots[0].date);
  const last = data.last_date || (snapshots.length && snapshots[snapshots.length - 1].date);
  const labels = first && last ? dayRange(first, last) : snapshots.map((sn) => sn.date);
  const box = h('div', { class: 'history' });
  const head = h('div', { class: 'history-head' }, h('h4', null, `History: last ${data.days || HISTORY_DAYS} days`),
    h('span', { class: 'muted small' }, `${snapshots.length} daily snapshot${snapshots.length === 1 ? '' : 's'}` + (first ? `, ${first} → ${last}` : '')));
  const switcher = h('div', { class: 'segmented', role: 'group', 'aria-label': 'Chart metric' });
  const chart = h('div', { class: 'chart', id: 'player-chart' });
  const series = Object.fromEntries(METRICS.map((mt) => [mt.id, metricValues(mt, labels, snapshots)]));
  const count = (id) => series[id].filter((v) => v !== null).length;
  let chosen = count('battles_per_day') >= 2 ? 'battles_per_day' : count('wn8') ? 'wn8' : 'battles';
  const chartNote = h('p', { class: 'muted small chart-note', hidden: true });
  const draw = () => {
    const mt = METRICS.find((x) => x.id === chosen);
    switcher.querySelectorAll('button').forEach((b) => b.setAttribute('aria-pressed', String(b.dataset.metric === chosen)));
    chartNote.hidden = mt.id !== 'period_wn8';
    if (mt.id === 'period_wn8') {
      const weekly = weeklyWn8Series(labels, data.weekly);
      chartNote.replaceChildren(weekly && weekly.points
        ? 'Each dot is the WN8 of only the battles played in one week (the 7 days ending on the day it is drawn at); the line breaks at a week without battles. The thin line is the career WN8 of each daily snapshot.'
        : 'No week-by-week WN8 yet: it needs the tracker’s per-tank records of battles played in these weeks. The thin line is the career WN8 of each daily snapshot.');
      drawChart(chart, { labels, title: 'WN8 per week over career WN8', legend: true,
        series: [{ name: 'Career WN8', cls: 's-min', values: series.wn8, join: 'connect' }].concat(weekly ? [weekly] : []),
        empty: 'No WN8 to draw yet: it needs ratings and per-tank records.' });
      return;
    }
    drawChart(chart, { labels, zero: mt.zero, integer: mt.integer, format: mt.format, title: `${mt.name} per day`, legend: true,
      series: [{ name: mt.name, cls: 's-main', values: series[mt.id], join: 'connect' }],
      empty: mt.id === 'battles_per_day' ? 'Battles per day need at least two daily snapshots.' : `No ${mt.name} values in this period.` });
  };
  for (const mt of METRICS) {
    switcher.append(h('button', { type: 'button', class: 'seg', 'data-metric': mt.id, onclick: () => { chosen = mt.id; draw(); } }, mt.name));
  }
  box.append(head, switcher, chart, chartNote);
  if (isObj(data.deltas)) box.append(h('h4', null, 'Changes over 7, 30 and 90 days'), renderDeltas(data.deltas, { region }));
  const rest = Object.entries(data).filter(([k]) => !['snapshots', 'deltas', 'account_id', 'region', 'days', 'first_date', 'last_date', 'snapshot_count'].includes(k));
  if (rest.length) box.append(lazyDetails('More fields', () => renderAny(Object.fromEntries(rest), { region }, 1)));
  if (snapshots.length) box.append(lazyDetails('Daily snapshots (table)', () => listTable(snapshots.slice().reverse(), { region })));
  // Drawn after insertion so the chart knows its width.
  requestAnimationFrame(draw);
  return box;
}
