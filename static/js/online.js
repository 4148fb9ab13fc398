/* The player counts view: online now per game, and the daily series. */

import { $, h, isObj, label, listTable, NUM, renderAny, tile } from './render.js';
import { API, api, csvLink, current, errorBox, loading, rateLine, state, takeToken } from './api.js';
import { drawChart } from './charts.js';

// ---------------------------------------------------------------- online view
function renderOnlineNow(data) {
  const out = [h('h3', null, 'Players online now')];
  const games = isObj(data.games) ? data.games : null;
  if (games && Object.keys(games).length) {
    out.push(h('div', { class: 'tiles' }, Object.entries(games).map(([game, g]) => {
      if (!isObj(g)) return tile(label(game), g, 'players');
      const peak = isObj(g.peak) ? g.peak : {};
      const notes = [];
      if (isObj(peak.today) && typeof peak.today.players === 'number') notes.push(`peak today ${NUM.format(peak.today.players)}`);
      if (isObj(peak.all_time) && typeof peak.all_time.players === 'number') notes.push(`all-time ${NUM.format(peak.all_time.players)}`);
      return tile(`${label(game)} (${game})`, g.players, 'players', notes.join('\n') || null);
    })));
  } else {
    out.push(h('p', { class: 'chart-empty muted' }, 'No player counts have been recorded yet.'));
  }
  return h('div', { class: 'online-now' }, out);
}

function renderOnlineDetails(data) {
  if (!isObj(data) || !Object.keys(data).length) return '';
  return h('div', { class: 'online-details' }, h('h3', null, 'Current counts per game and region'), renderAny(data, {}, 0));
}

function renderOnlineHistory(data, game, region) {
  const points = (Array.isArray(data.series) ? data.series : []).filter((p) => p && p.date);
  const labels = points.map((p) => p.date);
  const val = (p, k) => (p.samples === 0 || typeof p[k] !== 'number' ? null : p[k]);
  const days = points.filter((p) => val(p, 'peak') !== null).length;
  const box = h('div', { class: 'online-history' },
    h('div', { class: 'history-head' }, h('h3', null, `Daily player counts: ${label(data.game || game)}, ${state.regions.length && !state.regions.includes(data.region || region) ? `${label(data.region || region).toLowerCase()} regions` : label(data.region || region)}`),
      h('span', { class: 'muted small' }, `${data.from ?? labels[0] ?? ''} → ${data.to ?? labels[labels.length - 1] ?? ''}, ${days} of ${points.length} days with samples`)));
  const chart = h('div', { class: 'chart', id: 'online-chart' });
  box.append(chart, h('p', { class: 'muted small' }, 'Days without samples are left as gaps.'));
  const rest = Object.entries(data).filter(([k]) => !['series', 'game', 'region', 'from', 'to', 'days'].includes(k));
  if (rest.length) box.append(renderAny(Object.fromEntries(rest), {}, 1));
  if (points.length) box.append(h('details', { class: 'more' }, h('summary', null, 'Daily values (table)'), listTable(points.slice().reverse(), {})));
  requestAnimationFrame(() => drawChart(chart, {
    labels, zero: true, integer: true, title: 'Daily player counts', empty: 'No samples in this period yet.',
    series: [
      { name: 'Peak', cls: 's-peak', values: points.map((p) => val(p, 'peak')), join: 'gap' },
      { name: 'Average', cls: 's-avg', values: points.map((p) => val(p, 'avg')), join: 'gap' },
      { name: 'Minimum', cls: 's-min', values: points.map((p) => val(p, 'min')), join: 'gap' },
    ],
  }));
  return box;
}

export async function loadOnline(game, region, days) {
  const token = takeToken('online');
  const nowBox = h('div', { class: 'block', id: 'online-now' }, loading('Fetching current counts…'));
  const histBox = h('div', { class: 'block', id: 'online-history' }, loading('Fetching the daily series…'));
  const detailBox = h('div', { class: 'block', id: 'online-details' });
  $('#online-out').replaceChildren(nowBox, histBox, detailBox);
  const now = async () => {
    const res = await api(`${API}/online`);
    if (!current('online', token)) return;
    nowBox.replaceChildren(res.ok ? renderOnlineNow(res.data || {}) : errorBox(res, now));
    detailBox.replaceChildren(res.ok ? renderOnlineDetails(res.data || {}) : '', res.ok ? rateLine(res) : '');
    detailBox.hidden = !res.ok;
  };
  const hist = async () => {
    // A value not known yet (no index) is left out: the API's default applies.
    const q = new URLSearchParams(Object.entries({ game, region, days: days ? String(days) : '' }).filter(([, v]) => v));
    const res = await api(`${API}/online/history?${q}`);
    if (!current('online', token)) return;
    histBox.replaceChildren(res.ok ? renderOnlineHistory(res.data || {}, game, region) : errorBox(res, hist),
      res.ok ? csvLink('online_history', res.path, 'online-csv', 'The daily values') || '' : '', res.ok ? rateLine(res) : '');
  };
  await Promise.all([now(), hist()]);
}
