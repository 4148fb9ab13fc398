/* The marks of excellence page: the combined damage each tank's 1st, 2nd and 3rd mark takes among a
 * region's tracked players (GET /tanks/marks), filtered by tier, type and nation, sorted and paged
 * by the API as the tanks page is (tankstats.js); each tank links to its page (tank.js), which
 * shows its marks and their daily series. The view lives in the hash:
 * #marks/{region}[/tier=8&type=...&sort=...&order=...&offset=...]. */

import { $, fmtValue, h, isObj, label, nullFigure, NUM, rangeText, rememberNations, scroller, typeLabel, utcText, whose } from './render.js';
import { API, api, csvLink, current, exampleQuery, explainedError, indexParam, loading, paramEnum, rateLine, state, takeToken } from './api.js';
import { navigate } from './nav.js';

const QUERY_KEYS = ['tier', 'type', 'nation', 'sort', 'order', 'offset', 'limit'];
// The thresholds of a row, as the API names them: the game's 1st, 2nd and 3rd mark, and the best player.
export const MARKS = [
  { key: 'first', name: '1st mark', short: '1st', share: 65 },
  { key: 'second', name: '2nd mark', short: '2nd', share: 85 },
  { key: 'third', name: '3rd mark', short: '3rd', share: 95 },
  { key: 'top', name: 'Top', short: 'Top', share: 100 },
];
export const MARKS_MIN_TIER = 5;   // the game awards marks from tier V (the tier filter offers those)
const CHANGE_DAYS = 7;   // the change shown beside each threshold (the API also gives change_30d, in its title)

/** The page's first values: the tank_marks example's region, else the parameters' defaults (empty
 * before the index loads: the API then applies its own defaults). */
export function marksDefaults() {
  const example = exampleQuery('tank_marks');
  const pick = (name, fromExample) => {
    const value = (fromExample ? example[name] : undefined) ?? (indexParam('tank_marks', name) || {}).default;
    return value === undefined || value === null ? '' : String(value);
  };
  // The example's filters (a tier) are an example, not the page's first view: only its region.
  return { region: pick('region', true), sort: pick('sort', false), order: pick('order', false) };
}

/** The route's arguments (region, then the other parameters as a query string) as a query. */
export function marksQuery(args) {
  const extra = new URLSearchParams(args[1] || '');
  const q = { region: args[0] || marksDefaults().region };
  for (const k of QUERY_KEYS) q[k] = extra.get(k) || '';
  return q;
}

export function marksHash(q) {
  const given = QUERY_KEYS.filter((k) => q[k] !== undefined && q[k] !== null && q[k] !== '' && !(k === 'offset' && String(q[k]) === '0'));
  const tail = new URLSearchParams(given.map((k) => [k, String(q[k])])).toString();
  return `#marks/${encodeURIComponent(q.region)}` + (tail ? `/${tail}` : '');
}

/** The way to a region's marks table, with the words the other pages use for it. */
export function marksLink(region, id) {
  return h('a', { href: marksHash({ region }), id: id || null }, `Marks of excellence of ${label(region)}`);
}

/** The note every marks view carries: an estimate, what it is estimated from, and where the method is. */
export function estimateNote(data, id) {
  const who = Number.isInteger(data.min_battles)
    ? `the tracked players with at least ${data.min_battles} battles on the tank` : 'the tank’s tracked players';
  const when = Number.isInteger(data.days) ? ` in the last ${data.days} days` : '';
  return h('p', { class: 'population-note small marks-note', id: id || null },
    h('strong', null, 'An estimate: '),
    'combined damage per battle (damage dealt plus the largest of the average spotting, tracking and stun assistance) '
    + `of ${who}${when}; a mark is the share of them it beats (1st 65 %, 2nd 85 %, 3rd 95 %). The game uses each battle’s `
    + 'figures, a moving average and the whole server, so its thresholds differ. '
    + (Number.isInteger(data.min_players) ? `Thresholds need ${data.min_players} such players, tier V and up. ` : 'Tier V and up. '),
    methodLink(data.method));
}

/** The method's explanation: the API's marks endpoint card here, and the document the answers name. */
function methodLink(method) {
  const where = typeof method === 'string' && method ? method : null;
  return h('span', { class: 'marks-method' }, 'How it is estimated: ',
    h('a', { href: '#endpoint-tank_marks', class: 'method-link' }, 'the method'),
    where ? [' (', h('code', null, where), ')'] : null, '.');
}

// ---------------------------------------------------------------- the table
function columns() {
  return [
    { key: 'name', name: 'Tank', text: true },
    { key: 'tier', name: 'Tier' },
    { key: 'type', name: 'Type', text: true },
    ...MARKS.map((m) => ({ key: m.key, name: m.name, mark: true,
      title: m.key === 'top' ? 'The best combined damage per battle among the tank’s counted players'
        : `Combined damage per battle that beats ${m.share} % of the tank’s counted players; below it, its change over the last ${CHANGE_DAYS} days` })),
    { key: 'players', name: 'Players', title: 'Players counted: tracked accounts with the minimum of battles on the tank in the window' },
    { key: 'battles', name: 'Battles', title: 'Their battles on the tank in the window' },
  ];
}

function changeNode(row, key) {
  const change7 = isObj(row[`change_${CHANGE_DAYS}d`]) ? row[`change_${CHANGE_DAYS}d`][key] : null;
  if (typeof change7 !== 'number') return null;
  const change30 = isObj(row.change_30d) ? row.change_30d[key] : null;
  const text = fmtValue(change7, 'change');
  const node = h('span', { class: 'mark-change small', 'data-change': String(change7),
    title: `Change over the last ${CHANGE_DAYS} days` + (typeof change30 === 'number' ? `; over 30 days: ${fmtValue(change30, 'change').textContent}` : '') },
  text);
  return node;
}

/** Wargaming's published threshold of a mark (row.official.marks) under our estimate, and the
 * estimate's relative error against it (row.estimate_error). */
export function officialNode(row, key) {
  const value = isObj(row.official) && isObj(row.official.marks) ? row.official.marks[key] : null;
  if (typeof value !== 'number') return null;
  const error = isObj(row.estimate_error) ? row.estimate_error[key] : null;
  return h('span', { class: 'mark-official small', 'data-official': String(value),
    title: 'Wargaming’s published threshold (wot/tanks/mastery)' + (typeof error === 'number' ? '; our estimate’s error against it' : '') },
  `WG ${NUM.format(value)}`, typeof error === 'number'
    ? h('span', { class: 'mark-error', 'data-error': String(error) }, ` (${error > 0 ? '+' : ''}${(100 * error).toFixed(1)} %)`) : null);
}

/** What the official figures are, their date, and the estimates' median error per tier (data.official). */
export function officialNote(official, id) {
  if (!isObj(official)) {
    return h('p', { class: 'population-note small', id: id || null }, h('strong', null, 'Official thresholds: '),
      'none fetched yet (Wargaming’s published distribution is read once a day).');
  }
  const tiers = (Array.isArray(official.median_error_by_tier) ? official.median_error_by_tier : []).filter(isObj);
  const pct = (v) => (typeof v === 'number' ? `${v > 0 ? '+' : ''}${(100 * v).toFixed(1)} %` : '—');
  return h('div', { class: 'population-note small', id: id || null },
    h('p', null, h('strong', null, 'Official thresholds: '),
      `Wargaming’s published damage distribution (WG under each estimate) of ${official.date ?? '?'}`
      + (official.stale ? ' — the newest fetch failed, so this is the last good day' : '')
      + '. It is the server’s distribution of players’ average damage per tank, not the game’s moving average, '
      + 'so a mark taken in the game can still differ. In brackets: our estimate’s error against it.'),
    tiers.length ? scroller(h('table', { class: 'grid small marks-errors', id: 'marks-errors' },
      h('caption', null, 'Median error of our estimate by tier'),
      h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Tier'), h('th', { scope: 'col' }, 'Tanks'),
        MARKS.map((m) => h('th', { scope: 'col' }, m.short)))),
      h('tbody', null, tiers.map((t) => h('tr', { 'data-tier': t.tier }, h('th', { scope: 'row' }, String(t.tier)),
        h('td', { class: 'num' }, String(t.tanks ?? '')), MARKS.map((m) => h('td', { class: 'num', 'data-col': m.key }, pct(t[m.key]))))))), false) : null);
}

function cell(col, row, ctx) {
  if (col.key === 'name') {
    const nation = row.nation ? h('span', { class: 'muted small tank-nation' }, ` ${label(row.nation)}`) : null;
    return h('th', { scope: 'row', class: 'tank-name' },
      h('a', { href: `#tank/${encodeURIComponent(ctx.region)}/${row.tank_id}` }, row.name ?? `Tank ${row.tank_id}`), nation);
  }
  const attrs = { class: col.text ? null : 'num', 'data-col': col.key };
  const sample = isObj(row.sample) ? row.sample : {};
  if (col.mark) {
    const value = isObj(row.marks) ? row.marks[col.key] : null;
    const official = officialNode(row, col.key);
    if (typeof value !== 'number') {
      return h('td', attrs, nullFigure(`No estimate yet: fewer than ${ctx.minPlayers} players with at least ${ctx.minBattles} `
        + `battles on this tank in the last ${ctx.days} days (${sample.players ?? '?'}).`), official);
    }
    return h('td', attrs, h('span', { class: 'mark-value' }, NUM.format(value)), changeNode(row, col.key), official);
  }
  const value = col.key === 'players' || col.key === 'battles' ? sample[col.key] ?? null : row[col.key] ?? null;
  if (value === null) return h('td', attrs, nullFigure('The encyclopedia does not list this tank.'));
  if (col.key === 'type') return h('td', attrs, typeLabel(value));
  return h('td', attrs, fmtValue(value, col.key));
}

function headCell(col, sort, sortable, onSort) {
  if (!sortable) return h('th', { scope: 'col', title: col.title || null }, h('span', { class: 'th-plain' }, col.name));
  const active = col.key === sort.key;
  return h('th', { scope: 'col', 'data-sort': col.key, title: col.title || null,
    'aria-sort': active ? (sort.dir > 0 ? 'ascending' : 'descending') : null },
  h('button', { type: 'button', class: 'sort', 'data-sort': col.key, onclick: () => onSort(col) },
    col.name, h('span', { class: 'sort-arrow', 'aria-hidden': 'true' }, active ? (sort.dir > 0 ? '▲' : '▼') : '')));
}

function filterText(q) {
  const parts = [];
  if (q.tier) parts.push(`tier ${q.tier}`);
  if (q.type) parts.push(typeLabel(q.type).toLowerCase() + 's');
  if (q.nation) parts.push(`nation ${label(q.nation)}`);
  return parts.length ? ` (${parts.join(', ')})` : '';
}

function renderMarks(data, q, onSort, onPage, path) {
  const rows = (Array.isArray(data.tanks) ? data.tanks : []).filter(isObj);
  const region = data.region || q.region;
  const ctx = { region, days: data.days ?? '?', minPlayers: data.min_players ?? '?', minBattles: data.min_battles ?? '?' };
  const sort = { key: data.sort || q.sort, dir: (data.order || q.order) === 'asc' ? 1 : -1 };
  const total = Number.isInteger(data.total) ? data.total : rows.length;
  const offset = Number.isInteger(data.offset) ? data.offset : 0;
  const limit = Number.isInteger(data.limit) ? data.limit : Math.max(rows.length, 1);
  const range = rangeText(data.from, data.through);
  const box = h('div', { class: 'tank-stats marks-page' });
  box.append(h('p', { class: 'tank-summary', id: 'marks-summary' },
    h('strong', null, `${NUM.format(total)} tank${total === 1 ? '' : 's'}`), filterText(q),
    ` of tier V and up played by ${whose(data, region)} in the last ${ctx.days} days` + (range ? ` (${range})` : '') + '.',
    typeof data.built_at === 'number' ? ` Built ${utcText(new Date(data.built_at * 1000))}.` : ''));
  box.append(estimateNote(data, 'marks-estimate'));
  box.append(officialNote(data.official, 'marks-official'));
  box.append(h('p', { class: 'population-note small', id: 'marks-population' }, h('strong', null, 'Population: '),
    data.population ? `${data.population}.` : 'the tracked accounts, not a random sample of the server.'));
  box.append(h('p', { class: 'small expected-link' }, h('a', { href: `#tanks/${encodeURIComponent(region)}`, id: 'marks-tanks-link' },
    `Tank statistics of ${label(region)}`), ': win rates, damage and its percentiles per tank.'));
  if (!rows.length) {
    box.append(h('p', { class: 'chart-empty muted tanks-empty' }, total
      ? 'No tanks on this page: go back to the first page.' : 'No tank of tier V or up matches these filters in this window.'));
    if (total && offset) box.append(h('div', { class: 'actions' }, h('button', { type: 'button', class: 'btn', onclick: () => onPage(0) }, 'First page')));
    return box;
  }
  const cols = columns();
  const sorts = paramEnum('tank_marks', 'sort');
  const sortable = (col) => (sorts.length ? sorts.includes(col.key) : col.key !== 'type');
  box.append(scroller(h('table', { class: 'grid tanks tank-stats-table marks-table', id: 'marks-table' },
    h('caption', { class: 'sr-only' }, 'Marks of excellence: the combined damage per battle each mark takes. Column headers with a button sort the whole table.'),
    h('thead', null, h('tr', null, cols.map((col) => headCell(col, sort, sortable(col), onSort)))),
    h('tbody', null, rows.map((row) => h('tr', { 'data-tank-id': row.tank_id }, cols.map((col) => cell(col, row, ctx)))))),
  rows.length > 12));
  box.append(h('p', { class: 'muted small', id: 'marks-change-note' }, `Under each threshold: its change over the last ${CHANGE_DAYS} days `
    + '(hover for the 30-day change); none when the tank had no thresholds then. — is below the minimum sample.'));
  if (total > rows.length || offset > 0) {
    const last = Math.min(offset + rows.length, total);
    box.append(h('nav', { class: 'pager', 'aria-label': 'Pages of the marks table' },
      h('button', { type: 'button', class: 'btn btn-small', 'data-page': 'prev', disabled: offset <= 0,
        onclick: () => onPage(Math.max(0, offset - limit)) }, '← Previous'),
      h('span', { class: 'pager-text', id: 'marks-page' }, `Tanks ${NUM.format(offset + 1)}–${NUM.format(last)} of ${NUM.format(total)}`),
      h('button', { type: 'button', class: 'btn btn-small', 'data-page': 'next', disabled: offset + limit >= total,
        onclick: () => onPage(offset + limit) }, 'Next →')));
  }
  box.append(csvLink('tank_marks', path, 'marks-csv', total > rows.length ? 'These tanks' : 'The table') || '');
  return box;
}

let focusAfter = null;   // the control to focus once the next answer is drawn (a sort or page button)

/** `fresh` (a retry) revalidates with the server: an error answer may sit in the browser's cache for a minute. */
export async function loadMarks(q, fresh) {
  const token = takeToken('marks');
  const out = $('#marks-out');
  state.marksHash = marksHash(q);
  state.tankFrom = 'marks';
  if ($('#marks-table', out)) {
    out.setAttribute('aria-busy', 'true');
    if (!$(':scope > .loading', out)) out.prepend(loading('Fetching the marks of excellence…'));
  } else {
    out.replaceChildren(loading('Fetching the marks of excellence…'));
  }
  const params = new URLSearchParams(['region', ...QUERY_KEYS].filter((k) => q[k] !== '' && q[k] !== undefined && q[k] !== null).map((k) => [k, String(q[k])]));
  const res = await api(`${API}/tanks/marks?${params}`, fresh);
  if (!current('marks', token)) return;
  out.removeAttribute('aria-busy');
  if (!res.ok) {
    const code = res.error && res.error.code;
    out.replaceChildren(explainedError(res, () => loadMarks(q, true), code === 'no_statistics'
      ? 'No marks of excellence yet: they are built once a day with the tank statistics, from the tracked accounts’ per-tank records.' : null));
    return;
  }
  const data = res.data || {};
  rememberNations(Array.isArray(data.tanks) ? data.tanks.filter(isObj) : []);
  const onSort = (col) => {
    const same = col.key === (data.sort || q.sort);
    const order = same ? ((data.order || q.order) === 'asc' ? 'desc' : 'asc') : col.text ? 'asc' : 'desc';
    focusAfter = `button.sort[data-sort="${col.key}"]`;
    navigate(marksHash(Object.assign({}, q, { sort: col.key, order, offset: '' })));
  };
  const onPage = (offset) => {
    focusAfter = offset > (data.offset || 0) ? 'button[data-page=next]' : 'button[data-page=prev]';
    navigate(marksHash(Object.assign({}, q, { offset: String(offset) })));
  };
  out.replaceChildren(renderMarks(data, q, onSort, onPage, res.path), rateLine(res));
  if (focusAfter) {
    const target = $(focusAfter, out);
    focusAfter = null;
    const fallback = $('nav.pager button:not([disabled])', out) || $('#marks-table button.sort', out);
    if (target && !target.disabled) target.focus();
    else if (fallback) fallback.focus();
  }
}
