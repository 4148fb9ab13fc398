/* One tank's page (GET /tank/{tank_id}/{region}?days=): its figures over the period, its top
 * players (GET /tank/{tank_id}/{region}/leaderboard), the daily series, the percentiles of its
 * players' average damage and WN8, the sample behind them, and its marks of excellence
 * (thresholds, sample, their daily series). The view lives in the hash: #tank/{region}/{tank_id}/{days}. */

import { $, dayRange, fmtValue, h, isObj, label, nullFigure, NUM, rangeText, scroller, typeLabel, utcText } from './render.js';
import { API, api, csvLink, current, exampleQuery, explainedError, indexParam, loading, paramEnum, rateLine, state, takeToken } from './api.js';
import { drawChart } from './charts.js';
import { shareBox } from './share.js';
import { navigate } from './nav.js';
import { estimateNote, MARKS, MARKS_MIN_TIER, marksHash } from './marks.js';
import { byLabel, playerTable, rankingsHash, windowLabel } from './rankings.js';

const FIGURES = [
  ['players', 'Players'], ['battles', 'Battles'], ['win_rate', 'Win rate'], ['avg_damage', 'Avg. damage'],
  ['avg_frags', 'Avg. frags'], ['avg_xp', 'Avg. XP'], ['survival_rate', 'Survival rate'], ['hit_rate', 'Hit rate'],
];

// The daily series' figures; a day nobody played has no point in the answer: 0 players and
// battles, no rate (a gap in the line).
const SERIES = [
  { id: 'players', name: 'Players', zero: true, integer: true, fill: 0 },
  { id: 'battles', name: 'Battles', zero: true, integer: true, fill: 0 },
  { id: 'win_rate', name: 'Win rate', format: (v) => NUM.format(v) + ' %' },
  { id: 'avg_damage', name: 'Avg. damage' },
];

const TOP_PLAYERS = 10;   // rows of the tank page's top players (a UI choice; the full ranking pages on)

export const tankHash = (region, tankId, days) => `#tank/${encodeURIComponent(region)}/${encodeURIComponent(tankId)}` + (days ? `/${days}` : '');

// The marks' daily series: one line per threshold.
const MARK_SERIES = { first: 's-mark1', second: 's-mark2', third: 's-mark3', top: 's-marktop' };

function head(region, tankId, days, data) {
  // The way back: to the marks table when the page was reached from it, else to the tank table.
  const fromMarks = state.tankFrom === 'marks' && state.marksHash;
  const back = fromMarks ? state.marksHash : state.tanksHash || `#tanks/${encodeURIComponent(region)}` + (days ? `/${days}` : '');
  const sub = [];
  if (data) {
    if (data.tier) sub.push(`Tier ${data.tier}`);
    if (data.type) sub.push(typeLabel(data.type));
    if (data.nation) sub.push(label(data.nation));
  }
  sub.push(label(region), `tank ${tankId}`);
  const choices = paramEnum('tank', 'days').map(String);
  const shown = String((data && data.days) || days || '');
  return h('div', { class: 'tank-head' },
    h('p', { class: 'back small' }, h('a', { href: back, id: 'tank-back' }, fromMarks ? '← Marks of excellence' : '← All tanks')),
    h('div', { class: 'history-head' },
      h('h3', { class: 'tank-title', id: 'tank-title' }, (data && data.name) || `Tank ${tankId}`),
      choices.length ? h('div', { class: 'segmented', role: 'group', 'aria-label': 'Period', id: 'tank-period' },
        choices.map((d) => h('button', { type: 'button', class: 'seg', 'data-days': d, 'aria-pressed': String(d === shown),
          onclick: () => navigate(tankHash(region, tankId, d)) }, `${d} days`))) : null),
    h('p', { class: 'subline' }, sub.join(' · ')));
}

function figureTile(key, name, value, why) {
  return h('div', { class: 'tile', 'data-field': key }, h('span', { class: 'tile-label' }, name),
    h('span', { class: 'tile-value' }, value === null || value === undefined ? nullFigure(why) : fmtValue(value, key)));
}

function percentileKeys(grid) {
  if (!isObj(grid)) return [];
  return Object.keys(grid).filter((k) => /^p\d+$/.test(k) && typeof grid[k] === 'number').sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)));
}

function drawPercentiles(container, grid, name, cls, empty) {
  const keys = percentileKeys(grid);
  drawChart(container, {
    labels: keys, xs: keys.map((k) => Number(k.slice(1))), labelText: (k) => k, title: `${name}: percentiles of the tank's players`,
    series: [{ name, cls, values: keys.map((k) => grid[k]), join: 'connect', dots: true }], empty,
  });
}

function percentileTable(percentiles) {
  const damage = isObj(percentiles.damage) ? percentiles.damage : {};
  const wn8 = isObj(percentiles.wn8) ? percentiles.wn8 : {};
  const keys = [...new Set(percentileKeys(damage).concat(percentileKeys(wn8)))].sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)));
  if (!keys.length) return null;
  return h('details', { class: 'more' }, h('summary', null, 'Percentiles (table)'),
    scroller(h('table', { class: 'grid percentiles', id: 'tank-percentile-table' },
      h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Percentile'), h('th', { scope: 'col' }, 'Avg. damage'), h('th', { scope: 'col' }, 'WN8'))),
      h('tbody', null, keys.map((k) => h('tr', null, h('th', { scope: 'row' }, k),
        h('td', { class: 'num' }, fmtValue(damage[k] ?? null, 'avg_damage')), h('td', { class: 'num' }, fmtValue(wn8[k] ?? null, 'wn8'))))))));
}

// ---------------------------------------------------------------- marks of excellence
/** Why a tank has no marks (`marks` null): below tier V, or no counted player in the window yet. */
function noMarksText(data, region) {
  if (Number.isInteger(data.tier) && data.tier < MARKS_MIN_TIER) {
    return 'No marks of excellence: the game awards them from tier V.';
  }
  return 'No marks of excellence for this tank yet: no tracked player has the minimum of battles on it over the marks’ window '
    + `(with the assistance known), or the marks of ${label(region)} are not built yet.`;
}

function marksTable(series) {
  if (!series.length) return null;
  return h('details', { class: 'more', id: 'tank-marks-details' }, h('summary', null, 'Thresholds day by day (table)'),
    scroller(h('table', { class: 'grid marks-series', id: 'tank-marks-table' },
      h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Day'), MARKS.map((m) => h('th', { scope: 'col' }, m.name)))),
      h('tbody', null, series.map((p) => h('tr', { 'data-date': p.date }, h('th', { scope: 'row' }, p.date),
        MARKS.map((m) => h('td', { class: 'num', 'data-col': m.key }, fmtValue(p[m.key] ?? null, 'avg_damage')))))))));
}

// Wargaming's mastery badges, as the API names their XP thresholds (official.mastery_xp).
const MASTERY = [
  { key: 'third_class', name: '3rd class', share: 50 },
  { key: 'second_class', name: '2nd class', share: 80 },
  { key: 'first_class', name: '1st class', share: 95 },
  { key: 'ace', name: 'Ace Tanker', share: 99 },
];

/** Wargaming's published thresholds of the tank (marks.official): its damage marks beside our
 * estimate with the estimate's error, and the mastery badges' base XP. */
function officialBlock(m) {
  const official = isObj(m.official) ? m.official : null;
  const box = h('div', { class: 'tank-official', id: 'tank-official' }, h('h5', { class: 'sub-title' }, 'Wargaming’s published thresholds'));
  if (!official) {
    box.append(h('p', { class: 'muted small', id: 'tank-official-none' }, 'Wargaming’s distribution does not cover this tank (or none was fetched yet).'));
    return box;
  }
  const errors = isObj(m.estimate_error) ? m.estimate_error : {};
  const pct = (v) => `${v > 0 ? '+' : ''}${(100 * v).toFixed(1)} %`;
  if (isObj(official.marks)) {
    box.append(h('div', { class: 'tiles', id: 'tank-official-marks' }, MARKS.map((mk) => h('div', { class: 'tile', 'data-mark': mk.key },
      h('span', { class: 'tile-label' }, `${mk.name} (WG)`), h('span', { class: 'tile-value' }, fmtValue(official.marks[mk.key] ?? null, 'avg_damage')),
      h('span', { class: 'tile-note', 'data-error': typeof errors[mk.key] === 'number' ? String(errors[mk.key]) : null },
        typeof errors[mk.key] === 'number' ? `our estimate ${pct(errors[mk.key])}` : 'no estimate to compare')))));
  }
  if (isObj(official.mastery_xp)) {
    box.append(h('div', { class: 'tiles', id: 'tank-official-mastery' }, MASTERY.map((b) => h('div', { class: 'tile', 'data-badge': b.key },
      h('span', { class: 'tile-label' }, b.name), h('span', { class: 'tile-value' }, fmtValue(official.mastery_xp[b.key] ?? null, 'xp')),
      h('span', { class: 'tile-note' }, `base XP in a battle beating ${b.share} % of its players`)))));
  }
  box.append(h('p', { class: 'muted small' }, `Of ${official.date ?? '?'}, from ${official.source ?? 'Wargaming'}: the server’s distribution of `
    + 'players’ average combined damage (marks) and base XP (mastery) on this tank, read once a day. The game’s own mark uses a moving '
    + 'average of each battle, so it can still differ a little.'));
  return box;
}

/** The tank's marks: the thresholds now, their sample, and the daily series of the page's period. */
function marksBlock(data, region) {
  const box = h('section', { class: 'tank-marks', id: 'tank-marks', 'aria-labelledby': 'tank-marks-title' },
    h('h4', { id: 'tank-marks-title' }, 'Marks of excellence'));
  const m = isObj(data.marks) ? data.marks : null;
  if (!m) {
    box.append(h('p', { class: 'chart-empty muted', id: 'tank-marks-none' }, noMarksText(data, region)));
    return { box, draw: () => {} };
  }
  const sample = isObj(m.sample) ? m.sample : {};
  const minPlayers = m.min_players ?? '?';
  const minBattles = m.min_battles ?? '?';
  const range = rangeText(m.from, m.through);
  const marks = isObj(m.marks) ? m.marks : null;
  box.append(h('p', { class: 'tank-summary' }, `Last ${m.days ?? '?'} days` + (range ? ` (${range})` : '')
    + (typeof m.built_at === 'number' ? ` · built ${utcText(new Date(m.built_at * 1000))}` : '') + ' · ',
  h('a', { href: marksHash({ region }), id: 'tank-marks-link' }, `all tanks’ marks of ${label(region)}`)));
  const tooFew = `No thresholds yet: fewer than ${minPlayers} players with at least ${minBattles} battles on this tank `
    + `in the last ${m.days ?? '?'} days (${sample.players ?? '?'}).`;
  if (marks) {
    box.append(h('div', { class: 'tiles', id: 'tank-marks-tiles' }, MARKS.map((mk) => h('div', { class: 'tile', 'data-mark': mk.key },
      h('span', { class: 'tile-label' }, mk.name), h('span', { class: 'tile-value' }, fmtValue(marks[mk.key] ?? null, 'avg_damage')),
      h('span', { class: 'tile-note' }, mk.key === 'top' ? 'the best player' : `beats ${mk.share} % of its players`)))));
  } else {
    box.append(h('p', { class: 'notice', id: 'tank-marks-none' }, tooFew));
  }
  box.append(officialBlock(m));
  box.append(h('p', { class: 'tank-sample', id: 'tank-marks-sample' }, h('strong', null, 'Sample: '),
    `${NUM.format(sample.players ?? 0)} players with at least ${minBattles} battles on it and ${NUM.format(sample.battles ?? 0)} battles `
    + `in the window; thresholds need at least ${minPlayers} players.`));
  box.append(estimateNote(m, 'tank-marks-estimate'));

  // The thresholds of each day of the page's period that had them.
  const points = (Array.isArray(m.series) ? m.series : []).filter((p) => isObj(p) && p.date);
  const labels = data.from && data.through ? dayRange(data.from, data.through) : points.map((p) => p.date);
  const byDate = new Map(points.map((p) => [p.date, p]));
  const chart = h('div', { class: 'chart', id: 'tank-marks-chart' });
  box.append(h('h5', { class: 'sub-title' }, 'Thresholds per day'), chart,
    h('p', { class: 'muted small' }, 'Each day of the period that had thresholds (built that day over its own window).'),
    marksTable(points) || '');
  const draw = () => drawChart(chart, {
    labels, title: 'Mark thresholds per day', legend: true,
    series: MARKS.map((mk) => ({ name: mk.name, cls: MARK_SERIES[mk.key], join: 'gap',
      values: labels.map((d) => { const p = byDate.get(d); return p && typeof p[mk.key] === 'number' ? p[mk.key] : null; }) })),
    empty: marks ? 'No daily thresholds in this period yet.' : tooFew,
  });
  return { box, draw };
}

// ---------------------------------------------------------------- top players
/** The leaderboard's window for the page's period (the same days when the leaderboard has that
 * window), and its figure: the tank leaderboard's example, else its defaults (the index's). */
function topQuery(days) {
  const example = exampleQuery('tank_leaderboard');
  const pick = (name) => example[name] ?? (indexParam('tank_leaderboard', name) || {}).default;
  const windows = paramEnum('tank_leaderboard', 'days').map(String);
  const window = days && windows.includes(String(days)) ? String(days) : pick('days');
  const by = pick('by');
  return { days: window === undefined || window === null ? '' : String(window), by: by === undefined || by === null ? '' : String(by) };
}

async function loadTopPlayers(box, region, tankId, days, token) {
  const top = topQuery(days);
  const params = new URLSearchParams();
  if (top.days) params.set('days', top.days);
  if (top.by) params.set('by', top.by);
  params.set('limit', String(TOP_PLAYERS));
  const title = h('h4', { id: 'tank-top-title' }, 'Top players');
  box.replaceChildren(title, loading('Fetching the tank’s top players…'));
  const res = await api(`${API}/tank/${encodeURIComponent(tankId)}/${encodeURIComponent(region)}/leaderboard?${params}`);
  if (!current('tank', token)) return;
  if (!res.ok) {
    const code = res.error && res.error.code;
    box.replaceChildren(title, explainedError(res, () => loadTopPlayers(box, region, tankId, days, token), code === 'no_statistics'
      ? 'No rankings yet: they are built once a day with the tank statistics, from the tracked accounts’ per-tank records.' : null));
    return;
  }
  const data = res.data || {};
  const rows = (Array.isArray(data.rows) ? data.rows : []).filter(isObj);
  const window = String(data.days ?? top.days);
  const by = data.by || top.by;
  const over = window === 'career' ? 'over the career' : `over the last ${windowLabel(window).toLowerCase()}`;
  const range = rangeText(data.from, data.through);
  const total = Number.isInteger(data.total) ? data.total : rows.length;
  const full = rankingsHash({ mode: 'tank', region, tank_id: String(tankId), days: window, by });
  box.replaceChildren(title, h('p', { class: 'top-summary', id: 'tank-top-summary' },
    `By ${byLabel(by)} ${over}` + (range ? ` (${range})` : '')
    + `, players with at least ${NUM.format(data.min_battles ?? 0)} battles on it: ${NUM.format(total)} ranked.`));
  if (!rows.length) {
    box.append(h('p', { class: 'chart-empty muted', id: 'tank-top-empty' },
      `Nobody has reached the floor of ${NUM.format(data.min_battles ?? 0)} battles on this tank ${over} yet.`));
  } else {
    box.append(playerTable(rows, data.region || region, by, 'tank-top-table'),
      csvLink('tank_leaderboard', res.path, 'tank-top-csv', 'These players') || '');
  }
  box.append(h('p', { class: 'small' }, h('a', { href: full, id: 'tank-top-link' }, 'Full ranking of this tank'),
    ': every ranked player, other windows and figures.'));
}

function renderTank(data, region, tankId) {
  const minPlayers = data.min_players ?? '?';
  const minBattles = data.min_battles ?? '?';
  const sample = isObj(data.sample) ? data.sample : {};
  const box = h('div', { class: 'tank-page' });
  const range = rangeText(data.from, data.through);
  box.append(head(region, tankId, data.days, data));
  box.append(h('p', { class: 'tank-summary' }, `Last ${data.days} days` + (range ? ` (${range})` : '')
    + (typeof data.built_at === 'number' ? ` · built ${utcText(new Date(data.built_at * 1000))}` : '')));

  const whyFigure = `Below the minimum sample: fewer than ${minPlayers} players played this tank in the period `
    + `(${data.players ?? '?'}); its figures are shown from ${minPlayers} players.`;
  box.append(h('div', { class: 'tiles', id: 'tank-figures' }, FIGURES.map(([key, name]) => figureTile(key, name, data[key], whyFigure))));
  box.append(h('p', { class: 'tank-sample', id: 'tank-sample' }, h('strong', null, 'Sample: '),
    `${NUM.format(sample.players ?? data.players ?? 0)} players and ${NUM.format(sample.battles ?? data.battles ?? 0)} battles; `,
    `${NUM.format(sample.qualified ?? 0)} of these players with at least ${minBattles} battles on it (the percentiles’ players)`,
    typeof sample.rated === 'number' ? `, ${NUM.format(sample.rated)} of them rated for WN8` : '',
    `. A figure needs at least ${minPlayers} players.`));
  box.append(h('p', { class: 'population-note small' }, h('strong', null, 'Population: '),
    data.population ? `${data.population}.` : 'the tracked accounts, not a random sample of the server.'));
  // The tank's top players: filled by loadTank (their own request) when the index lists them.
  if (indexParam('tank_leaderboard', 'days')) box.append(h('section', { class: 'tank-top', id: 'tank-top', 'aria-labelledby': 'tank-top-title' }));

  // The daily series, one figure at a time.
  const points = (Array.isArray(data.series) ? data.series : []).filter((p) => isObj(p) && p.date);
  const labels = data.from && data.through ? dayRange(data.from, data.through) : points.map((p) => p.date);
  const byDate = new Map(points.map((p) => [p.date, p]));
  const values = (metric) => labels.map((d) => {
    if (!points.length) return null;
    const p = byDate.get(d);
    if (!p) return metric.fill ?? null;
    return typeof p[metric.id] === 'number' ? p[metric.id] : null;
  });
  let chosen = 'players';
  const switcher = h('div', { class: 'segmented', role: 'group', 'aria-label': 'Series figure', id: 'tank-series-metric' });
  const seriesChart = h('div', { class: 'chart', id: 'tank-series-chart' });
  const drawSeries = () => {
    const mt = SERIES.find((x) => x.id === chosen);
    switcher.querySelectorAll('button').forEach((b) => b.setAttribute('aria-pressed', String(b.dataset.metric === chosen)));
    drawChart(seriesChart, { labels, zero: mt.zero, integer: mt.integer, format: mt.format, title: `${mt.name} per day`, legend: true,
      series: [{ name: mt.name, cls: 's-main', values: values(mt), join: 'gap' }],
      empty: 'No daily series for this period yet.' });
  };
  for (const mt of SERIES) {
    switcher.append(h('button', { type: 'button', class: 'seg', 'data-metric': mt.id, onclick: () => { chosen = mt.id; drawSeries(); } }, mt.name));
  }
  box.append(h('h4', null, 'Day by day'), switcher, seriesChart,
    h('p', { class: 'muted small' }, `Each day of the period (UTC); a day on which none of ${data.population_kind === 'panel' ? 'the random panel’s players' : 'the tracked players'} played the tank counts 0 players and has no rate.`));

  // The percentiles of the qualified players' average damage and WN8 on the tank.
  const percentiles = isObj(data.percentiles) ? data.percentiles : {};
  const tooFew = `Below the minimum sample: fewer than ${minPlayers} players with at least ${minBattles} battles on this tank in the period `
    + `(${sample.qualified ?? '?'}), so no percentiles.`;
  const damageChart = h('div', { class: 'chart', id: 'tank-damage-chart' });
  const wn8Chart = h('div', { class: 'chart', id: 'tank-wn8-chart' });
  const wn8Empty = isObj(percentiles.damage)
    ? `No WN8 percentiles: fewer than ${minPlayers} of these players are rated for WN8 (${sample.rated ?? '?'}); the expected-values table may lack this tank.`
    : tooFew;
  box.append(h('h4', null, 'Percentiles'),
    h('p', { class: 'muted small' }, `Of the players with at least ${minBattles} battles on this tank in the period: the average damage `
      + 'per battle and the WN8 on it that the given share of them stays below (p85: 85 % below, the top 15 % above).'),
    h('div', { class: 'subgrid' },
      h('div', { class: 'sub' }, h('h5', { class: 'sub-title' }, 'Average damage'), damageChart),
      h('div', { class: 'sub' }, h('h5', { class: 'sub-title' }, 'WN8 on this tank'), wn8Chart)),
    percentileTable(percentiles) || '');
  // The marks of excellence (absent from an answer of an API without them).
  const marks = 'marks' in data ? marksBlock(data, region) : null;
  if (marks) box.append(marks.box);
  // Drawn after insertion so the charts know their width.
  requestAnimationFrame(() => {
    drawSeries();
    drawPercentiles(damageChart, percentiles.damage, 'Avg. damage', 's-main', tooFew);
    drawPercentiles(wn8Chart, percentiles.wn8, 'WN8', 's-avg', wn8Empty);
    if (marks) marks.draw();
  });
  return box;
}

export async function loadTank(region, tankId, days) {
  const token = takeToken('tank');
  const out = $('#tank-out');
  out.replaceChildren(head(region, tankId, days, null), loading('Fetching the tank…'));
  const query = days ? `?days=${encodeURIComponent(days)}` : '';
  const res = await api(`${API}/tank/${encodeURIComponent(tankId)}/${encodeURIComponent(region)}${query}`);
  if (!current('tank', token)) return;
  if (!res.ok) {
    const code = res.error && res.error.code;
    out.replaceChildren(head(region, tankId, days, null), explainedError(res, () => loadTank(region, tankId, days), code === 'no_statistics'
      ? `No statistics for this tank ${days ? `over ${days} days ` : ''}yet: no tracked player played it in the period, or the tank statistics are not built yet.` : null));
    return;
  }
  const data = res.data || {};
  if (data.name) state.tankNames[String(tankId)] = data.name;
  const tankPath = `/tank/${encodeURIComponent(tankId)}/${encodeURIComponent(region)}`;
  out.replaceChildren(renderTank(data, region, tankId), rateLine(res),
    shareBox(tankPath, `${API}${tankPath}`, days ? { days } : {}, data.name || `Tank ${tankId}`));
  const top = $('#tank-top', out);
  if (top) loadTopPlayers(top, region, tankId, data.days || days, token);
}
