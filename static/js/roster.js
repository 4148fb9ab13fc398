/* The battle roster page: many players at once (GET /roster), pasted as account IDs or nicknames
 * (ID:TANK_ID or NAME:TANK_ID for the tank each drives), one row per player in the order given, each
 * rating painted with its band's colour from the API (the index's rating_bands), and where each row
 * came from. Routed by main.js (not explorer.js).
 * The view lives in the hash: #roster/{region}/{accounts=...|names=...}. */

import { $, h, isObj, label, nullFigure, NUM, scroller } from './render.js';
import { API, api, current, explainedError, loading, rateLine, state, takeToken } from './api.js';
import { defaultRegion, nav, segment } from './vehicles.js';

const PATH = '/roster';
const MOST = 100;   // the endpoint's description and parameters say so too; the API answers 400 past it
const REASONS = {
  no_account: 'No account has this ID in the region.',
  no_battles: 'The account has no battles.',
  not_found: 'No account has this nickname in the region.',
  upstream_failed: 'The game API did not answer for this player: ask again in a moment.',
};

// ---------------------------------------------------------------- queries and hashes
/** The pasted text as the roster's entries: split on commas, spaces and new lines. */
export function entriesOf(text) {
  return String(text || '').split(/[\s,;]+/).map((e) => e.trim()).filter((e) => e !== '');
}

/** The query of the entries: accounts when every entry is an ID (with its :TANK_ID), else names. */
export function rosterQuery(region, entries) {
  const byId = entries.length > 0 && entries.every((e) => /^[0-9]+(:[0-9]+)?$/.test(e));
  return { region, key: byId ? 'accounts' : 'names', value: entries.join(',') };
}

export function rosterHash(q) {
  const rest = q.value ? new URLSearchParams([[q.key, q.value]]).toString() : '';
  return `#roster/${encodeURIComponent(q.region)}` + (rest ? `/${rest}` : '');
}

function routeQuery(args) {
  const extra = new URLSearchParams(args[1] || '');
  const region = segment(args[0]) || defaultRegion(PATH);
  for (const key of ['accounts', 'names']) if (extra.get(key)) return { region, key, value: extra.get(key) };
  return { region, key: 'accounts', value: '' };
}

// ---------------------------------------------------------------- the table
/** A rating painted with its band (the API's colour), or a dash saying why there is none. */
function banded(row, key, digits, why) {
  const value = row[key];
  if (typeof value !== 'number') return h('td', { class: 'num', 'data-col': key }, nullFigure(why));
  const band = isObj(row.bands) && isObj(row.bands[key]) ? row.bands[key] : null;
  const text = digits === 0 ? NUM.format(Math.round(value)) : NUM.format(value);
  const chip = h('span', { class: `band band-${band ? band.band : 'none'}`, 'data-band': band ? band.band : null,
    title: band ? `${label(band.band)} on the ${key.replace('_', ' ')} scale` : null }, text);
  if (band && /^#[0-9A-Fa-f]{6}$/.test(band.color)) chip.style.setProperty('--band', band.color);
  return h('td', { class: 'num', 'data-col': key }, chip);
}

function plain(row, key, text, why) {
  const value = row[key];
  return h('td', { class: 'num', 'data-col': key }, typeof value === 'number' ? (text ? text(value) : NUM.format(value)) : nullFigure(why));
}

function sourceText(row) {
  if (row.reason) return REASONS[row.reason] || row.reason;
  const seconds = Number.isInteger(row.fetched_at) ? Math.max(0, Math.round(Date.now() / 1000 - row.fetched_at)) : null;
  const age = seconds === null ? '' : seconds < 90 ? `${seconds} s` : `${Math.round(seconds / 60)} min`;
  return row.source === 'live' ? 'fetched now' : `cached, ${age} old`;
}

function playerRow(row, i, region, withTank) {
  const why = row.reason ? REASONS[row.reason] || row.reason : 'Not known for this player.';
  const name = row.nickname || row.asked_name || (row.account_id ? `#${row.account_id}` : '?');
  const who = row.account_id && !row.reason
    ? h('a', { href: `#player/${encodeURIComponent(region)}/${row.account_id}` }, name) : h('span', null, name);
  const clan = isObj(row.clan) && row.clan.tag ? h('span', { class: 'muted small roster-clan' }, ` [${row.clan.tag}]`) : null;
  const cells = [
    h('td', { class: 'num', 'data-col': 'n' }, String(i + 1)),
    h('th', { scope: 'row', 'data-col': 'player' }, who, clan),
    plain(row, 'battles', null, why),
    banded(row, 'win_rate', 2, why),
    plain(row, 'avg_damage', (v) => NUM.format(Math.round(v)), why),
    banded(row, 'wn8', 0, why),
    plain(row, 'wn7', (v) => NUM.format(Math.round(v)), why),
    banded(row, 'efficiency', 0, why),
    banded(row, 'wtr', 0, why),
  ];
  if (withTank) {
    const tank = isObj(row.tank) ? row.tank : null;
    cells.push(h('td', { class: 'num', 'data-col': 'tank' }, tank
      ? `${NUM.format(tank.battles)} · ${typeof tank.win_rate === 'number' ? `${NUM.format(tank.win_rate)} %` : '—'}` : nullFigure(row.tank_id ? why : 'No tank given.')));
  }
  cells.push(h('td', { class: 'small roster-source', 'data-col': 'source' }, sourceText(row)));
  return h('tr', { 'data-account-id': row.account_id, 'data-reason': row.reason || null }, cells);
}

function renderRoster(data) {
  const rows = (Array.isArray(data.rows) ? data.rows : []).filter(isObj);
  const region = data.region || '';
  const counts = isObj(data.counts) ? data.counts : {};
  const withTank = rows.some((r) => r.tank_id);
  const box = h('div', { class: 'roster-page' });
  box.append(h('p', { class: 'tank-summary', id: 'roster-summary' },
    h('strong', null, `${NUM.format(rows.length)} players`), ` in ${label(region)}: ${NUM.format(counts.cached || 0)} from the cache, `
    + `${NUM.format(counts.live || 0)} fetched now in ${NUM.format(data.upstream_requests || 0)} requests to the game API`
    + (counts.failed ? `, ${NUM.format(counts.failed)} without figures` : '') + '.'));
  const head = [['n', '#'], ['player', 'Player'], ['battles', 'Battles'], ['win_rate', 'Win rate %'], ['avg_damage', 'Damage'],
    ['wn8', 'WN8'], ['wn7', 'WN7'], ['efficiency', 'EFF'], ['wtr', 'WTR']];
  if (withTank) head.push(['tank', 'Tank: battles · win rate']);
  head.push(['source', 'Source']);
  box.append(scroller(h('table', { class: 'grid roster-table', id: 'roster-table' },
    h('caption', { class: 'sr-only' }, 'The roster: one row per player asked, in order, each rating in its band’s colour.'),
    h('thead', null, h('tr', null, head.map(([key, name]) => h('th', { scope: 'col', 'data-col': key }, name)))),
    h('tbody', null, rows.map((row, i) => playerRow(row, i, region, withTank)))), rows.length > 15));
  return box;
}

export async function loadRoster(q, fresh) {
  const token = takeToken('roster');
  const out = $('#roster-out');
  out.replaceChildren(loading('Fetching the roster…'));
  const params = new URLSearchParams([['region', q.region], [q.key, q.value]]);
  const res = await api(`${API}${PATH}?${params}`, fresh);
  if (!current('roster', token)) return;
  if (!res.ok) {
    out.replaceChildren(explainedError(res, () => loadRoster(q, true)));
    return;
  }
  out.replaceChildren(renderRoster(res.data || {}), rateLine(res));
}

// ---------------------------------------------------------------- form and route
export function bindRoster() {
  const form = $('#form-roster');
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const region = form.elements.region.value;
    const entries = entriesOf(form.elements.players.value);
    if (!region) return;   // the index has not loaded
    const hint = $('#roster-count');
    if (!entries.length || entries.length > MOST) {
      hint.textContent = entries.length ? `At most ${MOST} players (${entries.length} given).` : 'Paste at least one account ID or nickname.';
      return;
    }
    hint.textContent = '';
    nav.go(rosterHash(rosterQuery(region, entries)));
  });
}

/** #roster/{region}/{accounts=...|names=...}: `args` are the hash's raw segments after the view's name. */
export function routeRoster(args) {
  const form = $('#form-roster');
  const q = routeQuery(args);
  const select = form.elements.region;
  if (q.region && select.options.length && [...select.options].some((o) => o.value === q.region)) select.value = q.region;
  if (q.value) form.elements.players.value = q.value.split(',').join('\n');
  state.rosterQuery = q;
  if (q.region && q.value) loadRoster(q);
  else $('#roster-out').replaceChildren(h('p', { class: 'muted' }, 'Paste a battle’s players above.'));
}
