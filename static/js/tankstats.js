/* The tanks page: the tank statistics of a region's tracked population (GET /tanks/stats), filtered
 * by tier, type and nation, in a table sorted and paged by the API; each tank links to its own
 * page (tank.js). The view lives in the hash: #tanks/{region}/{days}[/tier=8&type=...&sort=...&order=...&offset=...]. */

import { $, fmtValue, h, isObj, label, nullFigure, NUM, rangeText, rememberNations, scroller, typeLabel, utcText, whose } from './render.js';
import { API, api, csvLink, current, explainedError, loading, paramEnum, rateLine, state, takeToken, tankStatsDefaults } from './api.js';
import { navigate } from './nav.js';
import { expectedHash } from './expected.js';
import { marksLink } from './marks.js';

// Sorted and paged by the API (sort, order, limit, offset), not in the browser as the player's
// tank table is: a region's table holds every tank its tracked players played (hundreds), one
// answer only a page of it (at most the index's maximum for limit). Sorting in the browser would
// reorder the tanks of one page only, or need every page first; the API sorts the whole table
// (nulls last). Each order and page is its own cacheable answer (Cache-Control), so going back to
// one comes from the browser's cache, and the hash keeps every view a link.

const QUERY_KEYS = ['tier', 'type', 'nation', 'sort', 'order', 'offset', 'limit'];

/** The route's arguments (region, days, then the other parameters as a query string) as a query. */
export function tanksQuery(args) {
  const d = tankStatsDefaults();
  const extra = new URLSearchParams(args[2] || '');
  const q = { region: args[0] || d.region, days: args[1] || d.days };
  for (const k of QUERY_KEYS) q[k] = extra.get(k) || '';
  return q;
}

export function tanksHash(q) {
  const given = QUERY_KEYS.filter((k) => q[k] !== undefined && q[k] !== null && q[k] !== '' && !(k === 'offset' && String(q[k]) === '0'));
  const tail = new URLSearchParams(given.map((k) => [k, String(q[k])])).toString();
  return `#tanks/${encodeURIComponent(q.region)}/${encodeURIComponent(q.days)}` + (tail ? `/${tail}` : '');
}

// ---------------------------------------------------------------- columns
const FIGURES = [
  { key: 'players', name: 'Players', title: 'Tracked accounts that played the tank in the period' },
  { key: 'battles', name: 'Battles', title: 'Their battles on it in the period' },
  { key: 'win_rate', name: 'Win rate' },
  { key: 'avg_damage', name: 'Avg. damage' },
  { key: 'avg_frags', name: 'Avg. frags' },
  { key: 'avg_xp', name: 'Avg. XP' },
  { key: 'survival_rate', name: 'Survival' },
  { key: 'hit_rate', name: 'Hit rate' },
];

/** The damage percentiles of a row (p50, p65, ...): those the API sorts by, else those the rows carry. */
function percentileKeys(rows) {
  const sorts = paramEnum('tank_stats', 'sort').filter((k) => /^damage_p\d+$/.test(k)).map((k) => k.slice('damage_'.length));
  if (sorts.length) return sorts;
  const keys = new Set();
  for (const row of rows) if (isObj(row.damage_percentiles)) Object.keys(row.damage_percentiles).forEach((k) => keys.add(k));
  return [...keys].sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)));
}

function columns(rows) {
  const pcts = percentileKeys(rows).map((p) => {
    const n = Number(p.slice(1));
    return { key: `damage_${p}`, name: `Dmg. ${p}`, pct: p,
      title: `Average damage per battle above which a player is in the top ${100 - n} % of the tank's players (those with the minimum of battles on it)` };
  });
  return [{ key: 'name', name: 'Tank', text: true }, { key: 'tier', name: 'Tier' }, { key: 'type', name: 'Type', text: true }, ...FIGURES, ...pcts];
}

function cellValue(col, row) {
  if (col.pct) return isObj(row.damage_percentiles) ? row.damage_percentiles[col.pct] ?? null : null;
  return row[col.key] ?? null;
}

/** Why a figure is null: below the minimum sample (it says which), or a tank the encyclopedia lacks. */
function whyNull(col, row, ctx) {
  const sample = isObj(row.sample) ? row.sample : {};
  if (col.key === 'tier' || col.key === 'type') return 'The encyclopedia does not list this tank.';
  if (col.pct) {
    return `Below the minimum sample: fewer than ${ctx.minPlayers} players with at least ${ctx.minBattles} battles on this tank `
      + `in the period (${sample.qualified ?? '?'}); percentiles are shown from ${ctx.minPlayers} such players.`;
  }
  return `Below the minimum sample: fewer than ${ctx.minPlayers} players played this tank in the period (${row.players ?? '?'}); `
    + `its figures are shown from ${ctx.minPlayers} players.`;
}

function cell(col, row, ctx) {
  if (col.key === 'name') {
    const nation = row.nation ? h('span', { class: 'muted small tank-nation' }, ` ${label(row.nation)}`) : null;
    return h('th', { scope: 'row', class: 'tank-name' },
      h('a', { href: `#tank/${encodeURIComponent(ctx.region)}/${row.tank_id}/${ctx.days}` }, row.name ?? `Tank ${row.tank_id}`), nation);
  }
  const value = cellValue(col, row);
  const attrs = { class: col.text ? null : 'num', 'data-col': col.key };
  if (value === null) return h('td', attrs, nullFigure(whyNull(col, row, ctx)));
  if (col.key === 'type') return h('td', attrs, typeLabel(value));
  return h('td', attrs, fmtValue(value, col.pct ? 'avg_damage' : col.key));
}

function headCell(col, sort, sortable, onSort) {
  if (!sortable) return h('th', { scope: 'col', title: col.title || null }, h('span', { class: 'th-plain' }, col.name));
  const active = col.key === sort.key;
  return h('th', { scope: 'col', 'data-sort': col.key, title: col.title || null,
    'aria-sort': active ? (sort.dir > 0 ? 'ascending' : 'descending') : null },
  h('button', { type: 'button', class: 'sort', 'data-sort': col.key, onclick: () => onSort(col) },
    col.name, h('span', { class: 'sort-arrow', 'aria-hidden': 'true' }, active ? (sort.dir > 0 ? '▲' : '▼') : '')));
}

// ---------------------------------------------------------------- the page
/** The way to the region's WN8 expected values (expected.js), under the table or its error. */
function expectedLink(region) {
  return h('p', { class: 'small expected-link' }, h('a', { href: expectedHash(region), id: 'tanks-expected-link' },
    `Expected values (WN8) of ${label(region)}`), ': the loaded table, the one computed from the tracked players, and how they compare.');
}

/** The way to the region's marks of excellence (marks.js), beside the expected values'. */
function marksLine(region) {
  return h('p', { class: 'small expected-link' }, marksLink(region, 'tanks-marks-link'),
    ': the combined damage each tank’s 1st, 2nd and 3rd mark takes, and how it moved.');
}

function filterText(q) {
  const parts = [];
  if (q.tier) parts.push(`tier ${q.tier}`);
  if (q.type) parts.push(typeLabel(q.type).toLowerCase() + 's');
  if (q.nation) parts.push(`nation ${label(q.nation)}`);
  return parts.length ? ` (${parts.join(', ')})` : '';
}

function renderTankStats(data, q, onSort, onPage, path) {
  const rows = (Array.isArray(data.tanks) ? data.tanks : []).filter(isObj);
  const region = data.region || q.region;
  const days = data.days || q.days;
  const ctx = { region, days, minPlayers: data.min_players ?? '?', minBattles: data.min_battles ?? '?' };
  const sort = { key: data.sort || q.sort, dir: (data.order || q.order) === 'asc' ? 1 : -1 };
  const total = Number.isInteger(data.total) ? data.total : rows.length;
  const offset = Number.isInteger(data.offset) ? data.offset : 0;
  const limit = Number.isInteger(data.limit) ? data.limit : Math.max(rows.length, 1);
  const range = rangeText(data.from, data.through);
  const box = h('div', { class: 'tank-stats' });
  box.append(h('p', { class: 'tank-summary', id: 'tank-stats-summary' },
    h('strong', null, `${NUM.format(total)} tank${total === 1 ? '' : 's'}`), filterText(q),
    ` played by ${whose(data, region)} in the last ${days} days` + (range ? ` (${range})` : '') + '.'));
  box.append(h('p', { class: 'population-note small', id: 'tanks-population' },
    h('strong', null, 'Population: '), data.population ? `${data.population}. ` : 'the tracked accounts, not a random sample of the server. ',
    `A tank’s figures need at least ${ctx.minPlayers} players; its damage percentiles need ${ctx.minPlayers} players with at least `
    + `${ctx.minBattles} battles on it in the period. Below that a figure shows as —.`,
    typeof data.built_at === 'number' ? ` Built ${utcText(new Date(data.built_at * 1000))}.` : ''));
  box.append(expectedLink(region), marksLine(region));
  if (!rows.length) {
    box.append(h('p', { class: 'chart-empty muted tanks-empty' }, total
      ? 'No tanks on this page: go back to the first page.' : 'No tank matches these filters in this period.'));
    if (total && offset) box.append(h('div', { class: 'actions' }, h('button', { type: 'button', class: 'btn', onclick: () => onPage(0) }, 'First page')));
    return box;
  }
  const cols = columns(rows);
  const sorts = paramEnum('tank_stats', 'sort');
  const sortable = (col) => (sorts.length ? sorts.includes(col.key) : col.key !== 'type');
  box.append(scroller(h('table', { class: 'grid tanks tank-stats-table', id: 'tank-stats-table' },
    h('caption', { class: 'sr-only' }, 'Tank statistics of the tracked players. Column headers with a button sort the whole table.'),
    h('thead', null, h('tr', null, cols.map((col) => headCell(col, sort, sortable(col), onSort)))),
    h('tbody', null, rows.map((row) => h('tr', { 'data-tank-id': row.tank_id }, cols.map((col) => cell(col, row, ctx)))))),
  rows.length > 12));
  if (total > rows.length || offset > 0) {
    const last = Math.min(offset + rows.length, total);
    box.append(h('nav', { class: 'pager', 'aria-label': 'Pages of the tank table' },
      h('button', { type: 'button', class: 'btn btn-small', 'data-page': 'prev', disabled: offset <= 0,
        onclick: () => onPage(Math.max(0, offset - limit)) }, '← Previous'),
      h('span', { class: 'pager-text', id: 'tank-stats-page' }, `Tanks ${NUM.format(offset + 1)}–${NUM.format(last)} of ${NUM.format(total)}`),
      h('button', { type: 'button', class: 'btn btn-small', 'data-page': 'next', disabled: offset + limit >= total,
        onclick: () => onPage(offset + limit) }, 'Next →')));
  }
  box.append(csvLink('tank_stats', path, 'tank-stats-csv', total > rows.length ? 'These tanks' : 'The table') || '');
  return box;
}

let focusAfter = null;   // the control to focus once the next answer is drawn (a sort or page button)

export async function loadTankStats(q) {
  const token = takeToken('tanks');
  const out = $('#tanks-out');
  state.tanksHash = tanksHash(q);
  state.tankFrom = 'tanks';
  // The table on screen stays (dimmed) until the new answer replaces it.
  if ($('#tank-stats-table', out)) {
    out.setAttribute('aria-busy', 'true');
    if (!$(':scope > .loading', out)) out.prepend(loading('Fetching the tank statistics…'));
  } else {
    out.replaceChildren(loading('Fetching the tank statistics…'));
  }
  const params = new URLSearchParams(['region', 'days', ...QUERY_KEYS].filter((k) => q[k] !== '' && q[k] !== undefined && q[k] !== null).map((k) => [k, String(q[k])]));
  const res = await api(`${API}/tanks/stats?${params}`);
  if (!current('tanks', token)) return;
  out.removeAttribute('aria-busy');
  if (!res.ok) {
    out.replaceChildren(explainedError(res, () => loadTankStats(q)), expectedLink(q.region), marksLine(q.region));
    return;
  }
  const data = res.data || {};
  rememberNations(Array.isArray(data.tanks) ? data.tanks.filter(isObj) : []);
  const onSort = (col) => {
    const same = col.key === (data.sort || q.sort);
    const order = same ? ((data.order || q.order) === 'asc' ? 'desc' : 'asc') : col.text ? 'asc' : 'desc';
    focusAfter = `button.sort[data-sort="${col.key}"]`;
    navigate(tanksHash(Object.assign({}, q, { sort: col.key, order, offset: '' })));
  };
  const onPage = (offset) => {
    focusAfter = offset > (data.offset || 0) ? 'button[data-page=next]' : 'button[data-page=prev]';
    navigate(tanksHash(Object.assign({}, q, { offset: String(offset) })));
  };
  out.replaceChildren(renderTankStats(data, q, onSort, onPage, res.path), rateLine(res));
  if (focusAfter) {
    const target = $(focusAfter, out);
    focusAfter = null;
    const fallback = $('nav.pager button:not([disabled])', out) || $('#tank-stats-table button.sort', out);
    if (target && !target.disabled) target.focus();
    else if (fallback) fallback.focus();
  }
}
