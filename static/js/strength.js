/* The tier list page: a tier's tanks ranked by relative win rate (GET /tanks/strength), the drivers'
 * skill taken out: each tank's win rate among its drivers against the same drivers' win rate on their
 * other tanks of the tier, with its 95 % interval, and the same for damage; the tanks below the
 * sample follow, unranked, greyed, with their sample. Routed by main.js (not explorer.js).
 * The view lives in the hash: #strength/{region}[/tier=10&days=30&type=heavyTank&offset=...]. */

import { $, h, isObj, label, nullFigure, NUM, rangeText, pagerNav, focusPager, scroller, typeLabel, utcText, whose } from './render.js';
import { API, api, current, exampleQuery, explainedError, indexParam, loading, paramEnum, rateLine, state, takeToken } from './api.js';
import { defaultRegion, endpointAt, nav, segment, tail } from './vehicles.js';

const PATH = '/tanks/strength';
const QUERY_KEYS = ['tier', 'days', 'type', 'offset', 'limit'];
const DEFAULT_TIER = 10;   // without an example's tier: the tier players compare most
const DEFAULT_DAYS = 30;
const ROMAN = ['', 'I', 'II', 'III', 'IV', 'V', 'VI', 'VII', 'VIII', 'IX', 'X', 'XI'];

// ---------------------------------------------------------------- words and numbers
export const tierName = (tier) => ROMAN[tier] || String(tier);

/** A relative figure as the page writes it: a sign, then two decimals (the API's rounding). */
export function signed(value) {
  return (value > 0 ? '+' : value < 0 ? '−' : '±') + Math.abs(value).toFixed(2);
}

/** "(+0.80 … +3.82)": a figure's 95 % interval ({low, high}, or [low, high]), or null without one. */
export function intervalText(interval) {
  const bounds = Array.isArray(interval) ? interval : isObj(interval) ? [interval.low, interval.high] : [];
  if (bounds.length !== 2 || !bounds.every((v) => typeof v === 'number')) return null;
  return `(${signed(bounds[0])} … ${signed(bounds[1])})`;
}

// ---------------------------------------------------------------- queries and hashes
function param(name, key) {
  const endpoint = endpointAt(PATH);
  const p = endpoint ? indexParam(endpoint, name) : null;
  return p ? p[key] : undefined;
}

/** The first view: the region and tier of the endpoint's example (the API lists every tier without
 * one; a tier list is of one), the period the API defaults to. */
function defaults() {
  const endpoint = endpointAt(PATH);
  const example = endpoint ? exampleQuery(endpoint) : {};
  const tier = param('tier', 'default') ?? Number(example.tier);
  const days = param('days', 'default');
  return { region: defaultRegion(PATH), tier: String(Number.isInteger(tier) ? tier : DEFAULT_TIER),
    days: String(Number.isInteger(days) ? days : DEFAULT_DAYS) };
}

/** The route's raw segments (region, then the other parameters as a query string) as a query. */
export function strengthQuery(args) {
  const d = defaults();
  const extra = new URLSearchParams(args[1] || '');
  const q = { region: segment(args[0]) || d.region };
  for (const k of QUERY_KEYS) q[k] = extra.get(k) || '';
  if (!q.tier) q.tier = d.tier;
  if (!q.days) q.days = d.days;
  return q;
}

export function strengthHash(q) {
  const rest = tail(q, QUERY_KEYS);
  return `#strength/${encodeURIComponent(q.region)}` + (rest ? `/${rest}` : '');
}

function formQuery(form) {
  const f = form.elements;
  return { region: f.region.value, tier: f.tier.value, days: f.days.value, type: f.type.value,
    limit: (state.strengthQuery || {}).limit || '', offset: '' };
}

// ---------------------------------------------------------------- the table
function relativeCell(key, value, interval, unit, why) {
  const attrs = { class: 'num strength-figure', 'data-col': key };
  if (typeof value !== 'number') return h('td', attrs, nullFigure(why));
  const range = intervalText(interval);
  return h('td', attrs, h('span', { class: 'rel-value', 'data-value': String(value) }, signed(value) + unit),
    range ? [' ', h('span', { class: 'rel-interval small', title: 'The 95 % interval' }, range)] : null);
}

function basisCell(key, row, ctx) {
  const attrs = { class: 'strength-basis small', 'data-col': key };
  if (key === 'basis_win_rate') {
    if (typeof row.win_rate !== 'number' || typeof row.baseline_win_rate !== 'number') return h('td', attrs, nullFigure(ctx.why));
    return h('td', attrs, `${NUM.format(row.win_rate)} % vs ${NUM.format(row.baseline_win_rate)} % on their other tier ${tierName(row.tier ?? ctx.tier)} tanks`);
  }
  if (typeof row.avg_damage !== 'number' || typeof row.baseline_damage !== 'number') return h('td', attrs, nullFigure(ctx.why));
  return h('td', attrs, `${NUM.format(row.avg_damage)} vs ${NUM.format(row.baseline_damage)} expected of them`);
}

function tankRow(row, ctx) {
  const ranked = Number.isInteger(row.rank);
  const nation = row.nation ? h('span', { class: 'muted small tank-nation' }, ` ${label(row.nation)}`) : null;
  const type = row.type ? h('span', { class: 'muted small tank-type' }, ` · ${typeLabel(row.type)}`) : null;
  const why = `Below the sample: fewer than ${ctx.minPlayers} players with at least ${ctx.minOther} battles on their other tier `
    + `${tierName(row.tier ?? ctx.tier)} tanks, or fewer than ${ctx.minBattles} battles of theirs on it, in the last ${ctx.days} days `
    + `(${row.players ?? '?'} players, ${row.battles ?? '?'} battles).`;
  const rowCtx = Object.assign({}, ctx, { why });
  return h('tr', { 'data-tank-id': row.tank_id, 'data-rank': ranked ? row.rank : null, class: ranked ? null : 'unranked' },
    h('td', { class: 'num strength-rank', 'data-col': 'rank' }, ranked ? String(row.rank) : nullFigure(why)),
    h('th', { scope: 'row', class: 'tank-name', 'data-col': 'name' },
      h('a', { href: `#tank/${encodeURIComponent(ctx.region)}/${row.tank_id}/${ctx.days}` }, row.name ?? `Tank ${row.tank_id}`), nation, type),
    relativeCell('relative_win_rate', row.relative_win_rate, row.relative_win_rate_interval, '', why),
    basisCell('basis_win_rate', row, rowCtx),
    relativeCell('relative_damage', row.relative_damage, row.relative_damage_interval, ' %', why),
    basisCell('basis_damage', row, rowCtx),
    h('td', { class: 'num', 'data-col': 'players' }, NUM.format(row.players ?? 0)),
    h('td', { class: 'num', 'data-col': 'battles' }, NUM.format(row.battles ?? 0)));
}

/** The method in a few words, and where it is explained: the endpoint's card here and the document the answer names. */
function methodNote(data, ctx) {
  const endpoint = endpointAt(PATH);
  const where = typeof data.method === 'string' && data.method ? data.method : null;
  return h('p', { class: 'population-note small', id: 'strength-method' }, h('strong', null, 'How it is ranked: '),
    'a tank’s win rate among its drivers minus the same drivers’ win rate on their other tanks of the tier '
    + `(those with at least ${ctx.minOther} battles there), so a tank good players pick does not look strong for that; `
    + 'relative damage likewise, against what the drivers deal in the tier’s average tank. '
    + `A tank is ranked with at least ${ctx.minPlayers} such players and ${ctx.minBattles} of their battles on it; `
    + 'in brackets, the 95 % interval: ranks whose intervals overlap are not told apart by the data. ',
    h('span', { class: 'strength-method' }, 'The method: ',
      endpoint ? h('a', { href: `#endpoint-${endpoint}`, class: 'method-link', id: 'strength-method-link' }, 'the endpoint')
        : h('span', null, 'the endpoint'),
      where ? [' and ', h('code', { id: 'strength-method-doc' }, where)] : null, '.'));
}

function renderStrength(data, q, onPage) {
  const rows = (Array.isArray(data.tanks) ? data.tanks : []).filter(isObj);
  const region = data.region || q.region;
  const ctx = { region, days: data.days ?? q.days, tier: Number(q.tier), minPlayers: data.min_players ?? '?',
    minBattles: data.min_battles ?? '?', minOther: data.min_other_battles ?? '?' };
  const total = Number.isInteger(data.total) ? data.total : rows.length;
  const ranked = Number.isInteger(data.ranked) ? data.ranked : rows.filter((r) => Number.isInteger(r.rank)).length;
  const offset = Number.isInteger(data.offset) ? data.offset : 0;
  const limit = Number.isInteger(data.limit) ? data.limit : Math.max(rows.length, 1);
  const range = rangeText(data.from, data.through);
  const kind = q.type ? `${typeLabel(q.type).toLowerCase()}s` : 'tanks';
  const box = h('div', { class: 'tank-stats strength-page' });
  box.append(h('p', { class: 'tank-summary', id: 'strength-summary' },
    h('strong', null, `Tier ${tierName(ctx.tier)}: ${NUM.format(ranked)} of ${NUM.format(total)} ${kind} ranked`),
    ` by relative win rate, among ${whose(data, region)} in the last ${ctx.days} days` + (range ? ` (${range})` : '') + '.',
    typeof data.built_at === 'number' ? ` Built ${utcText(new Date(data.built_at * 1000))}.` : ''));
  box.append(methodNote(data, ctx));
  box.append(h('p', { class: 'population-note small', id: 'strength-population' }, h('strong', null, 'Population: '),
    data.population ? `${data.population}.` : 'the tracked accounts, not a random sample of the server.'));
  if (!rows.length) {
    box.append(h('p', { class: 'chart-empty muted tanks-empty' }, total
      ? 'No tanks on this page: go back to the first page.' : `No tier ${tierName(ctx.tier)} ${kind} were driven by tracked players in this period.`));
    if (total && offset) box.append(h('div', { class: 'actions' }, h('button', { type: 'button', class: 'btn', onclick: () => onPage(0) }, 'First page')));
    return box;
  }
  const head = [['rank', 'Rank'], ['name', 'Tank'],
    ['relative_win_rate', 'Relative win rate', 'Win rate on the tank minus its drivers’ win rate on their other tanks of the tier, in percentage points; in brackets its 95 % interval'],
    ['basis_win_rate', 'Win rate vs their other tanks'],
    ['relative_damage', 'Relative damage', 'Damage per battle on the tank against what its drivers deal in the tier’s average tank; in brackets its 95 % interval'],
    ['basis_damage', 'Damage vs expected'],
    ['players', 'Players', 'Drivers with a baseline: at least the minimum of battles on their other tanks of the tier'], ['battles', 'Battles', 'Their battles on the tank']];
  box.append(scroller(h('table', { class: 'grid tanks strength-table', id: 'strength-table' },
    h('caption', { class: 'sr-only' }, 'The tier list: tanks ranked by relative win rate, then the tanks below the sample, unranked.'),
    h('thead', null, h('tr', null, head.map(([key, name, title]) => h('th', { scope: 'col', 'data-col': key, title: title || null }, h('span', { class: 'th-plain' }, name))))),
    h('tbody', null, rows.map((row) => tankRow(row, ctx)))), rows.length > 12));
  if (total > rows.length || offset > 0) {
    box.append(pagerNav('Pages of the tier list', 'strength-page', 'Tanks', offset, limit, rows.length, total, onPage));
  }
  return box;
}

let focusAfter = null;   // the pager button to focus once the next page is drawn

export async function loadStrength(q, fresh) {
  const token = takeToken('strength');
  const out = $('#strength-out');
  state.tankFrom = 'strength';
  if ($('#strength-table', out)) {
    out.setAttribute('aria-busy', 'true');
    if (!$(':scope > .loading', out)) out.prepend(loading('Fetching the tier list…'));
  } else {
    out.replaceChildren(loading('Fetching the tier list…'));
  }
  const params = new URLSearchParams(['region', ...QUERY_KEYS].filter((k) => q[k] !== '' && q[k] !== undefined && q[k] !== null).map((k) => [k, String(q[k])]));
  const res = await api(`${API}${PATH}?${params}`, fresh);
  if (!current('strength', token)) return;
  out.removeAttribute('aria-busy');
  if (!res.ok) {
    const code = res.error && res.error.code;
    out.replaceChildren(explainedError(res, () => loadStrength(q, true), code === 'no_statistics'
      ? 'No tier list yet: it is built once a day with the tank statistics, from the tracked accounts’ per-tank records.' : null));
    return;
  }
  const data = res.data || {};
  const onPage = (offset) => {
    focusAfter = offset > (data.offset || 0) ? 'button[data-page=next]' : 'button[data-page=prev]';
    nav.navigate(strengthHash(Object.assign({}, q, { offset: String(offset) })));
  };
  out.replaceChildren(renderStrength(data, q, onPage), rateLine(res));
  focusPager(out, focusAfter);
  focusAfter = null;
}

// ---------------------------------------------------------------- form and route
function setOptions(select, values, text) {
  const keep = select.value;
  select.replaceChildren(...values.map((v) => h('option', { value: v }, text(v))));
  if (values.includes(keep)) select.value = keep;
}

/** The tiers (the index's bounds for the endpoint's tier, else the tank statistics', else I–X): no
 * "any tier", a tier list compares the tanks of one. */
export function fillStrength() {
  const select = $('#form-strength').elements.tier;
  let low = param('tier', 'minimum');
  let high = param('tier', 'maximum');
  if (!Number.isInteger(low) || !Number.isInteger(high)) {
    const p = indexParam('tank_stats', 'tier') || {};
    [low, high] = Number.isInteger(p.minimum) && Number.isInteger(p.maximum) ? [p.minimum, p.maximum] : [1, 10];
  }
  const tiers = [];
  for (let t = low; t <= high; t++) tiers.push(String(t));
  setOptions(select, tiers, (v) => `Tier ${v}`);
  if (!$('#form-strength').dataset.touched) select.value = defaults().tier;
  const days = $('#form-strength').elements.days;
  const allowed = (param('days', 'enum') || paramEnum('tank_stats', 'days')).map(String);
  if (allowed.length) setOptions(days, allowed, (v) => `${v} days`);
  if (!$('#form-strength').dataset.touched) days.value = defaults().days;
}

function ensureOption(select, value) {
  if (value && ![...select.options].some((o) => o.value === value)) select.append(h('option', { value }, value));
  select.value = value;
}

export function bindStrength() {
  const form = $('#form-strength');
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    if (!form.elements.region.value) return;   // the index has not loaded
    form.dataset.touched = '1';
    nav.go(strengthHash(formQuery(form)));
  });
  form.addEventListener('change', (ev) => {
    if (ev.target.tagName === 'SELECT') form.requestSubmit();
  });
}

/** #strength/{region}/{query}: `args` are the hash's raw segments after the view's name. */
export function routeStrength(args) {
  const form = $('#form-strength');
  const f = form.elements;
  // #strength alone: the form's values once sent, else the defaults.
  const q = args.length || !form.dataset.touched ? strengthQuery(args) : formQuery(form);
  if (args.length) form.dataset.touched = '1';
  if (q.region && f.region.options.length) ensureOption(f.region, q.region);
  if (f.tier.options.length) ensureOption(f.tier, q.tier);
  if (f.days.options.length) ensureOption(f.days, q.days);
  if (f.type.options.length) ensureOption(f.type, q.type);
  state.strengthQuery = q;
  if (q.region) loadStrength(q);
  else $('#strength-out').replaceChildren(loading('Loading the index…'));
}
