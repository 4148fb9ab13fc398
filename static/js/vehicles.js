/* The vehicle list page: a region's vehicle catalogue as the encyclopedia last gave it (GET /vehicles),
 * with each vehicle's small icon (Wargaming's URL, loaded from Wargaming), its flags and its headline
 * figures among the tracked players (null when nobody tracked drove it), filtered by tier, type,
 * nation, premium and a piece of its name, paged by the API. Routed by main.js (not explorer.js).
 * The view lives in the hash: #vehicles/{region}[/tier=8&type=heavyTank&nation=ussr&premium=true&search=tiger&offset=100]. */

import { $, fmtValue, h, isObj, label, nullFigure, NUM, pagerNav, focusPager, rememberNations, scroller, typeLabel } from './render.js';
import { API, api, current, exampleQuery, explainedError, indexParam, loading, rateLine, state, takeToken, tankStatsDefaults } from './api.js';
import { nav } from './nav.js';

const QUERY_KEYS = ['tier', 'type', 'nation', 'premium', 'search', 'offset', 'limit'];
const FLAGS = [['is_premium', 'premium', 'Premium'], ['is_gift', 'gift', 'Gift'], ['is_wheeled', 'wheeled', 'Wheeled']];

// ---------------------------------------------------------------- the index
/** The index's name of the endpoint at `path` (e.g. '/vehicles'), or null before the index loads. */
export function endpointAt(path) {
  const endpoints = state.index && Array.isArray(state.index.endpoints) ? state.index.endpoints : [];
  const found = endpoints.find((e) => e && typeof e.path === 'string' && (e.path === path || e.path.endsWith(path)));
  return found ? found.name : null;
}

/** A page's first region: its endpoint's example, else the parameter's default, else the tanks page's. */
export function defaultRegion(path) {
  const name = endpointAt(path);
  const value = name ? exampleQuery(name).region ?? (indexParam(name, 'region') || {}).default : undefined;
  return value ? String(value) : tankStatsDefaults().region || state.regions[0] || '';
}

/** One raw hash segment, decoded (as it is when it is not valid percent-encoding). */
export function segment(raw) {
  try { return decodeURIComponent(raw || ''); } catch (e) { return raw || ''; }
}

/** A query's given keys as the hash's last segment (URLSearchParams encoding: no '/' in it). */
export function tail(q, keys) {
  const given = keys.filter((k) => q[k] !== undefined && q[k] !== null && q[k] !== '' && !(k === 'offset' && String(q[k]) === '0'));
  return new URLSearchParams(given.map((k) => [k, String(q[k])])).toString();
}

// The ways to another view (nav.js), re-exported for strength.js and roster.js.
export { nav };

// ---------------------------------------------------------------- queries and hashes
/** The route's raw segments (region, then the other parameters as a query string) as a query. */
export function vehiclesQuery(args) {
  const extra = new URLSearchParams(args[1] || '');
  const q = { region: segment(args[0]) || defaultRegion('/vehicles') };
  for (const k of QUERY_KEYS) q[k] = extra.get(k) || '';
  return q;
}

export function vehiclesHash(q) {
  const rest = tail(q, QUERY_KEYS);
  return `#vehicles/${encodeURIComponent(q.region)}` + (rest ? `/${rest}` : '');
}

function formQuery(form) {
  const f = form.elements;
  return { region: f.region.value, tier: f.tier.value, type: f.type.value, nation: f.nation.value.trim().toLowerCase(),
    premium: f.premium.value, search: f.search.value.trim(), limit: (state.vehiclesQuery || {}).limit || '', offset: '' };
}

function ensureOption(select, value) {
  if (value && ![...select.options].some((o) => o.value === value)) select.append(h('option', { value }, value));
  select.value = value;
}

// ---------------------------------------------------------------- the table
function nameOf(row) {
  return row.name ?? `Tank ${row.tank_id}`;
}

function iconCell(row) {
  const images = isObj(row.images) ? row.images : null;
  const src = images && typeof images.small_icon === 'string' && images.small_icon ? images.small_icon : null;
  // Wargaming's URL as the API gives it; a picture that does not load leaves an empty cell.
  return h('td', { class: 'vehicle-icon', 'data-col': 'icon' }, src
    // width/height: the encyclopedia's small icons are 124 x 31; the space is kept before they load.
    ? h('img', { src, alt: nameOf(row), width: 124, height: 31, loading: 'lazy', decoding: 'async', referrerpolicy: 'no-referrer',
      onerror: (ev) => ev.target.classList.add('icon-failed') })
    : null);
}

function nameCell(row, ctx) {
  const missing = row.in_encyclopedia === false
    ? h('span', { class: 'muted small' }, ' not in the encyclopedia') : null;
  // A tank nobody tracked drove has no tank page to show (its figures are the API's 404).
  const name = row.stats ? h('a', { href: `#tank/${encodeURIComponent(ctx.region)}/${row.tank_id}` }, nameOf(row))
    : h('span', { title: `No tracked player drove it in the last ${ctx.days} days: no tank page.` }, nameOf(row));
  return h('th', { scope: 'row', class: 'tank-name', 'data-col': 'name' }, name, missing);
}

function flagsCell(row) {
  const flags = FLAGS.filter(([key]) => row[key] === true);
  return h('td', { 'data-col': 'flags' }, flags.map(([, flag, text], i) =>
    [i ? ' ' : null, h('span', { class: `badge vehicle-flag flag-${flag}`, 'data-flag': flag }, text)]));
}

function statCell(row, key, ctx) {
  const attrs = { class: 'num', 'data-col': key };
  const stats = isObj(row.stats) ? row.stats : null;
  if (!stats) return h('td', attrs, nullFigure(`No tracked player drove it in the last ${ctx.days} days.`));
  const value = stats[key] ?? null;
  if (value === null) {
    return h('td', attrs, nullFigure(`Below the minimum sample: too few tracked players drove it in the last ${ctx.days} days (${stats.players ?? '?'}).`));
  }
  return h('td', attrs, fmtValue(value, key));
}

function plainCell(row, key, text) {
  const value = row[key] ?? null;
  return h('td', { class: key === 'tier' ? 'num' : null, 'data-col': key },
    value === null ? nullFigure('The encyclopedia does not list this tank.') : text(value));
}

function filterText(q) {
  const parts = [];
  if (q.tier) parts.push(`tier ${q.tier}`);
  if (q.type) parts.push(typeLabel(q.type).toLowerCase() + 's');
  if (q.nation) parts.push(`nation ${label(q.nation)}`);
  if (q.premium === 'true') parts.push('premium');
  if (q.premium === 'false') parts.push('not premium');
  if (q.search) parts.push(`name has “${q.search}”`);
  return parts.length ? ` (${parts.join(', ')})` : '';
}

function renderVehicles(data, q, onPage) {
  const rows = (Array.isArray(data.vehicles) ? data.vehicles : []).filter(isObj);
  const region = data.region || q.region;
  const ctx = { region, days: data.headline_days ?? '?' };
  const total = Number.isInteger(data.total) ? data.total : rows.length;
  const offset = Number.isInteger(data.offset) ? data.offset : 0;
  const limit = Number.isInteger(data.limit) ? data.limit : Math.max(rows.length, 1);
  const box = h('div', { class: 'tank-stats vehicles-page' });
  box.append(h('p', { class: 'tank-summary', id: 'vehicles-summary' },
    h('strong', null, `${NUM.format(total)} vehicle${total === 1 ? '' : 's'}`), filterText(q),
    ` in the ${label(region)} `, h('span', { id: 'vehicles-catalogue' }, `catalogue of ${data.fetched_on ?? '?'}`),
    `. Players, win rate and damage: the tracked players over the last ${ctx.days} days.`));
  if (data.stale === true) {
    box.append(h('p', { class: 'notice small', id: 'vehicles-stale', role: 'status' }, h('strong', null, 'An old catalogue: '),
      `the encyclopedia could not be fetched lately, so this is the last good one, of ${data.fetched_on ?? '?'}. `
      + 'Vehicles added since are missing.'));
  }
  if (!rows.length) {
    box.append(h('p', { class: 'chart-empty muted tanks-empty' }, total
      ? 'No vehicles on this page: go back to the first page.' : 'No vehicle matches these filters.'));
    if (total && offset) box.append(h('div', { class: 'actions' }, h('button', { type: 'button', class: 'btn', onclick: () => onPage(0) }, 'First page')));
    return box;
  }
  const head = [['icon', ''], ['name', 'Vehicle'], ['tier', 'Tier'], ['type', 'Type'], ['nation', 'Nation'], ['flags', 'Flags'],
    ['players', 'Players', 'Tracked players who drove it in the period'], ['win_rate', 'Win rate'], ['avg_damage', 'Avg. damage']];
  box.append(scroller(h('table', { class: 'grid tanks tank-stats-table vehicles-table', id: 'vehicles-table' },
    h('caption', { class: 'sr-only' }, 'The vehicle catalogue: icon, name, tier, type, nation, flags and the tracked players’ figures.'),
    h('thead', null, h('tr', null, head.map(([key, name, title]) =>
      h('th', { scope: 'col', 'data-col': key, title: title || null }, key === 'icon' ? h('span', { class: 'sr-only' }, 'Icon') : h('span', { class: 'th-plain' }, name))))),
    h('tbody', null, rows.map((row) => h('tr', { 'data-tank-id': row.tank_id, class: row.in_encyclopedia === false ? 'muted' : null },
      iconCell(row), nameCell(row, ctx),
      plainCell(row, 'tier', String), plainCell(row, 'type', typeLabel), plainCell(row, 'nation', label), flagsCell(row),
      statCell(row, 'players', ctx), statCell(row, 'win_rate', ctx), statCell(row, 'avg_damage', ctx))))),
  rows.length > 12));
  if (total > rows.length || offset > 0) {
    box.append(pagerNav('Pages of the vehicle list', 'vehicles-page', 'Vehicles', offset, limit, rows.length, total, onPage));
  }
  return box;
}

let focusAfter = null;   // the pager button to focus once the next page is drawn

export async function loadVehicles(q, fresh) {
  const token = takeToken('vehicles');
  const out = $('#vehicles-out');
  state.tankFrom = 'vehicles';
  if ($('#vehicles-table', out)) {
    out.setAttribute('aria-busy', 'true');
    if (!$(':scope > .loading', out)) out.prepend(loading('Fetching the vehicles…'));
  } else {
    out.replaceChildren(loading('Fetching the vehicles…'));
  }
  const params = new URLSearchParams(['region', ...QUERY_KEYS].filter((k) => q[k] !== '' && q[k] !== undefined && q[k] !== null).map((k) => [k, String(q[k])]));
  const res = await api(`${API}/vehicles?${params}`, fresh);
  if (!current('vehicles', token)) return;
  out.removeAttribute('aria-busy');
  if (!res.ok) {
    out.replaceChildren(explainedError(res, () => loadVehicles(q, true)));
    return;
  }
  const data = res.data || {};
  rememberNations(Array.isArray(data.vehicles) ? data.vehicles.filter(isObj) : []);
  const onPage = (offset) => {
    focusAfter = offset > (data.offset || 0) ? 'button[data-page=next]' : 'button[data-page=prev]';
    nav.navigate(vehiclesHash(Object.assign({}, q, { offset: String(offset) })));
  };
  out.replaceChildren(renderVehicles(data, q, onPage), rateLine(res));
  focusPager(out, focusAfter);
  focusAfter = null;
}

// ---------------------------------------------------------------- form and route
export function bindVehicles() {
  const form = $('#form-vehicles');
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    if (!form.elements.region.value) return;   // the index has not loaded
    form.dataset.touched = '1';
    nav.go(vehiclesHash(formQuery(form)));
  });
  // A chosen value applies at once; the nation and the name apply when sent (Enter or the button).
  form.addEventListener('change', (ev) => {
    if (ev.target.tagName === 'SELECT') form.requestSubmit();
  });
}

/** #vehicles/{region}/{query}: `args` are the hash's raw segments after the view's name. */
export function routeVehicles(args) {
  const form = $('#form-vehicles');
  const f = form.elements;
  // #vehicles alone: the form's values once sent, else the defaults.
  const q = args.length || !form.dataset.touched ? vehiclesQuery(args) : formQuery(form);
  if (args.length) form.dataset.touched = '1';
  if (q.region && f.region.options.length) ensureOption(f.region, q.region);
  if (f.tier.options.length) ensureOption(f.tier, q.tier);
  if (f.type.options.length) ensureOption(f.type, q.type);
  f.premium.value = ['true', 'false'].includes(q.premium) ? q.premium : '';
  f.nation.value = q.nation;
  f.search.value = q.search;
  state.vehiclesQuery = q;
  // Before the index has loaded there is no region to ask for: start() routes again once it has.
  if (q.region) loadVehicles(q);
  else $('#vehicles-out').replaceChildren(loading('Loading the index…'));
}
