/* The rankings page: the leaderboards of a region's tracked players (GET /leaderboard/players),
 * of its cached clans (GET /leaderboard/clans, once the index lists it) and of one tank's players
 * (GET /tank/{tank_id}/{region}/leaderboard), filtered and paged by the API. Every choice of the
 * forms (windows, figures, tiers, types, bounds) is the index's. The view lives in the hash:
 *   #rankings/players/{region}/{days}[/by=wn8&tier=8&type=heavyTank&min_battles=250&offset=50&limit=50]
 *   #rankings/clans/{region}/{days}[/by=wn8&min_members=...&offset=...&limit=...]
 *   #rankings/tank/{region}/{tank_id}/{days}[/by=avg_damage&min_battles=...&offset=...&limit=...]
 * Also the pieces other views use: the players' rows table (a tank's top players, tank.js) and the
 * link to a player's place (player.js). */

import { $, fmtValue, h, isObj, label, nullFigure, NUM, rangeText, scroller, shortDate, typeLabel, utcText, wn8Node } from './render.js';
import { API, api, csvLink, current, exampleQuery, explainedError, indexParam, loading, paramEnum, rateLine, state, takeToken } from './api.js';
import { go, navigate } from './nav.js';

// Each mode: its endpoint in the index, the query parameters the hash keeps after region and days
// (sent as they are), its form and the words for its rows.
const MODES = {
  players: { endpoint: 'leaderboard_players', keys: ['by', 'tier', 'type', 'min_battles', 'offset', 'limit'], form: '#form-rank-players', rows: 'players' },
  clans: { endpoint: 'leaderboard_clans', keys: ['by', 'min_members', 'offset', 'limit'], form: '#form-rank-clans', rows: 'clans' },
  tank: { endpoint: 'tank_leaderboard', keys: ['by', 'min_battles', 'offset', 'limit'], form: '#form-rank-tank', rows: 'players' },
};
// The clans' figures shown beside the one ranked (the answer's rows carry them all).
const CLAN_FIGURES = ['members', 'active_members', 'battles', 'battles_per_member', 'wn8', 'win_rate', 'elo_10', 'elo_8', 'skirmish_win_rate'];

const last = {};   // the query each mode last showed (a mode's link returns to it)

// ---------------------------------------------------------------- words
/** A leaderboard window (the index's days: "1", "7", ..., "career") in words. */
export function windowLabel(days) {
  const d = String(days);
  if (d === 'career') return 'Career';
  return /^\d+$/.test(d) ? `${d} day${d === '1' ? '' : 's'}` : label(d);
}

/** The window of an answer in words: "in the last 30 days (Jan 1 → Jan 30)", "over the career (through Jan 30)". */
function windowText(days, from, through) {
  if (String(days) === 'career') return `over the career${through ? ` (through ${shortDate(through)})` : ''}`;
  const range = rangeText(from, through);
  return `in the last ${windowLabel(days).toLowerCase()}` + (range ? ` (${range})` : '');
}

export const byLabel = (by) => label(by);

function optionLabel(name, value) {
  if (value === '') return name === 'tier' ? 'Any tier' : name === 'type' ? 'Any type' : 'Any';
  if (name === 'days') return windowLabel(value);
  if (name === 'by') return byLabel(value);
  if (name === 'type') return typeLabel(value);
  if (name === 'tier') return `Tier ${value}`;
  return String(value);
}

/** A ranked figure as the rest of the site shows it (WN8 coloured, rates in %). */
export function figureNode(value, by) {
  if (value === null || value === undefined) return nullFigure('Not known for this row in this window.');
  if (by === 'wn8') return wn8Node(value);
  return fmtValue(value, by);
}

// ---------------------------------------------------------------- queries and hashes
export const clansListed = () => !!indexParam('leaderboard_clans', 'region') || paramEnum('leaderboard_clans', 'days').length > 0;

/** A mode's first values: its endpoint's example, else its parameters' defaults, else the first region. */
function defaults(mode) {
  const endpoint = MODES[mode].endpoint;
  const example = exampleQuery(endpoint);
  const pick = (name) => {
    const value = example[name] ?? (indexParam(endpoint, name) || {}).default;
    return value === undefined || value === null ? '' : String(value);
  };
  return { region: pick('region') || state.regions[0] || '', days: pick('days'), by: pick('by') };
}

/** The index's default rows per page of a mode (the page a rank falls on). */
function defaultLimit(mode) {
  const value = (indexParam(MODES[mode].endpoint, 'limit') || {}).default;
  return Number.isInteger(value) && value > 0 ? value : null;
}

export function rankingsHash(q) {
  const mode = MODES[q.mode] ? q.mode : 'players';
  const given = MODES[mode].keys.filter((k) => q[k] !== undefined && q[k] !== null && q[k] !== '' && !(k === 'offset' && String(q[k]) === '0'));
  const tail = new URLSearchParams(given.map((k) => [k, String(q[k])])).toString();
  const head = mode === 'tank'
    ? `#rankings/tank/${encodeURIComponent(q.region)}/${encodeURIComponent(q.tank_id)}/${encodeURIComponent(q.days)}`
    : `#rankings/${mode}/${encodeURIComponent(q.region)}/${encodeURIComponent(q.days)}`;
  return head + (tail ? `/${tail}` : '');
}

/** The route's arguments as a query: the mode, its path values, then its parameters; what the
 * hash leaves out is the mode's last query, else the form's values, else the index's defaults. */
function rankingsQuery(args) {
  const mode = MODES[args[0]] && !(args[0] === 'tank' && args.length < 3) ? args[0] : 'players';
  const rest = args[0] === mode ? args.slice(1) : [];
  const path = mode === 'tank' ? ['region', 'tank_id', 'days'] : ['region', 'days'];
  if (!rest.length && last[mode]) return Object.assign({}, last[mode]);
  const d = defaults(mode);
  const form = formValues(mode);
  const q = { mode, region: '', days: '', tank_id: '' };
  path.forEach((name, i) => { q[name] = rest[i] || ''; });
  const extra = new URLSearchParams(rest[path.length] || '');
  for (const k of MODES[mode].keys) q[k] = extra.get(k) || '';
  if (!rest.length && form) Object.assign(q, form);
  if (!q.region) q.region = d.region;
  if (!q.days) q.days = d.days;
  if (!q.by) q.by = d.by;
  return q;
}

// ---------------------------------------------------------------- forms
function setSelect(select, values, name, withAny) {
  const keep = select.value;
  const all = values.length && withAny ? [''].concat(values) : values;
  select.replaceChildren(...all.map((v) => h('option', { value: v }, optionLabel(name, v))));
  if (all.map(String).includes(keep)) select.value = keep;
}

function showValue(select, value) {
  const v = value === undefined || value === null ? '' : String(value);
  if (!select.options.length) return;
  if (![...select.options].some((o) => o.value === v)) select.append(h('option', { value: v }, optionLabel(select.name, v)));
  select.value = v;
}

/** The forms' choices from the index: each `data-param="endpoint.name"` control takes that
 * parameter's enum (or its integer range) and bounds. */
export function fillRankings() {
  document.querySelectorAll('#panel-rankings [data-param]').forEach((control) => {
    const [endpoint, name] = control.dataset.param.split('.');
    const p = indexParam(endpoint, name) || {};
    if (control.tagName === 'SELECT') {
      let values = Array.isArray(p.enum) ? p.enum.map(String) : [];
      if (!values.length && Number.isInteger(p.minimum) && Number.isInteger(p.maximum) && p.maximum - p.minimum < 50) {
        for (let v = p.minimum; v <= p.maximum; v++) values.push(String(v));
      }
      setSelect(control, values, name, p.default === undefined && !p.required);
    } else {
      if (Number.isInteger(p.minimum)) control.min = String(p.minimum);
      else control.removeAttribute('min');
      if (Number.isInteger(p.maximum)) control.max = String(p.maximum);
      else control.removeAttribute('max');
      control.placeholder = 'floor';
      control.title = Number.isInteger(p.minimum) && Number.isInteger(p.maximum)
        ? `${p.minimum} to ${p.maximum}; empty: the window’s own floor` : 'empty: the window’s own floor';
    }
  });
  $('#rank-mode-clans').hidden = !clansListed();
  for (const mode of Object.keys(MODES)) {
    const form = $(MODES[mode].form);
    if (!form.dataset.touched && mode !== 'tank') {
      const d = defaults(mode);
      for (const name of ['region', 'days', 'by']) if (d[name] && form.elements[name]) showValue(form.elements[name], d[name]);
    }
    // A form whose choices have not arrived (the index, or an endpoint it does not list) cannot be sent.
    const empty = [...form.querySelectorAll('select')].some((select) => !select.options.length);
    form.querySelectorAll('button[type=submit]').forEach((b) => { b.disabled = empty; });
  }
}

function formValues(mode) {
  const form = $(MODES[mode].form);
  if (!form || !form.dataset.touched || mode === 'tank') return null;
  const f = form.elements;
  const out = {};
  for (const name of ['region', 'days', ...MODES[mode].keys]) if (f[name]) out[name] = f[name].value.trim();
  out.offset = '';
  out.limit = last[mode] ? last[mode].limit : '';
  return out;
}

function setForm(q) {
  const form = $(MODES[q.mode].form);
  const f = form.elements;
  for (const name of ['region', 'days', ...MODES[q.mode].keys]) {
    const control = f[name];
    if (!control) continue;
    if (control.tagName === 'SELECT') showValue(control, q[name]);
    else control.value = q[name] || '';
  }
}

function showMode(mode) {
  for (const m of Object.keys(MODES)) $(MODES[m].form).hidden = m !== mode;
  if (last.tank) $('#rank-mode-tank').hidden = false;
  document.querySelectorAll('#rankings-modes .seg').forEach((a) => {
    if (a.dataset.mode === mode) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  });
}

export function bindRankings() {
  for (const mode of Object.keys(MODES)) {
    const form = $(MODES[mode].form);
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      form.dataset.touched = '1';
      const f = form.elements;
      const q = Object.assign({}, last[mode] || { mode, tank_id: '' }, { mode, offset: '' });
      for (const name of ['region', 'days', ...MODES[mode].keys]) if (f[name]) q[name] = f[name].value.trim();
      q.offset = '';
      go(rankingsHash(q));
    });
    // A chosen value applies at once; a number applies when sent (Enter or the button).
    form.addEventListener('change', (ev) => {
      if (ev.target.tagName === 'SELECT' && !form.querySelector('button[type=submit]').disabled) form.requestSubmit();
    });
  }
  // A mode's link returns to what that mode last showed.
  $('#rankings-modes').addEventListener('click', (ev) => {
    const a = ev.target.closest('a.seg');
    if (!a || !last[a.dataset.mode]) return;
    ev.preventDefault();
    go(rankingsHash(last[a.dataset.mode]));
  });
}

// ---------------------------------------------------------------- the page
export function routeRankings(args) {
  const q = rankingsQuery(args);
  showMode(q.mode);
  const out = $('#rankings-out');
  if (!q.region || !q.days || (q.mode === 'tank' && !q.tank_id)) {
    out.replaceChildren(loading('Loading the index…'));
    return;
  }
  // A short hash (#rankings, #rankings/players) becomes the full one: a link to this very view.
  const full = rankingsHash(q);
  if (location.hash !== full) history.replaceState(null, '', full);
  setForm(q);
  last[q.mode] = q;
  if (q.mode === 'tank') {
    const tank = $('#rank-mode-tank');
    tank.hidden = false;
    tank.href = full;
    tank.textContent = state.tankNames[q.tank_id] || `Tank ${q.tank_id}`;
  }
  if (q.mode === 'clans' && !clansListed()) {
    out.replaceChildren(h('p', { class: 'notice', id: 'rank-clans-absent' },
      'The clan rankings are not in this API’s index yet (no leaderboard_clans endpoint); they appear here once it lists them.'));
    return;
  }
  loadRankings(q);
}

function requestPath(q) {
  const params = new URLSearchParams();
  if (q.mode !== 'tank') params.set('region', q.region);
  params.set('days', q.days);
  for (const k of MODES[q.mode].keys) if (q[k] !== '' && q[k] !== undefined && q[k] !== null) params.set(k, String(q[k]));
  if (q.mode === 'players') return `${API}/leaderboard/players?${params}`;
  if (q.mode === 'clans') return `${API}/leaderboard/clans?${params}`;
  return `${API}/tank/${encodeURIComponent(q.tank_id)}/${encodeURIComponent(q.region)}/leaderboard?${params}`;
}

/** A players' rows (rank, player, clan tag, the figure, battles): the rankings page's and a tank's top players. */
export function playerTable(rows, region, by, id) {
  return scroller(h('table', { class: 'grid rankings', id },
    h('caption', { class: 'sr-only' }, `Players ranked by ${byLabel(by)}, best first; tied players share a rank.`),
    h('thead', null, h('tr', null,
      h('th', { scope: 'col', class: 'num' }, 'Rank'), h('th', { scope: 'col' }, 'Player'), h('th', { scope: 'col' }, 'Clan'),
      h('th', { scope: 'col', class: 'num', 'data-col': 'value' }, byLabel(by)), h('th', { scope: 'col', class: 'num' }, 'Battles'))),
    h('tbody', null, rows.map((row) => h('tr', { 'data-account-id': row.account_id },
      h('td', { class: 'num', 'data-col': 'rank' }, NUM.format(row.rank)),
      h('th', { scope: 'row', 'data-col': 'player' },
        h('a', { href: `#player/${encodeURIComponent(region)}/${row.account_id}`, class: 'rank-player' }, row.nickname ?? `Account ${row.account_id}`)),
      h('td', { 'data-col': 'clan_tag' }, row.clan_tag ?? nullFigure('No clan cached here for this player at the newest measured battle.')),
      h('td', { class: 'num', 'data-col': 'value' }, figureNode(row.value, by)),
      h('td', { class: 'num', 'data-col': 'battles' }, fmtValue(row.battles ?? null, 'battles')))))),
  rows.length > 12);
}

function clanTable(rows, region, by) {
  const others = CLAN_FIGURES.filter((k) => k !== by);
  return scroller(h('table', { class: 'grid rankings', id: 'rank-table' },
    h('caption', { class: 'sr-only' }, `Clans ranked by ${byLabel(by)}, best first; tied clans share a rank.`),
    h('thead', null, h('tr', null,
      h('th', { scope: 'col', class: 'num' }, 'Rank'), h('th', { scope: 'col' }, 'Clan'),
      h('th', { scope: 'col', class: 'num', 'data-col': 'value' }, byLabel(by)),
      others.map((k) => h('th', { scope: 'col', class: 'num' }, label(k))))),
    h('tbody', null, rows.map((row) => h('tr', { 'data-clan-id': row.clan_id },
      h('td', { class: 'num', 'data-col': 'rank' }, NUM.format(row.rank)),
      h('th', { scope: 'row', 'data-col': 'clan' },
        h('a', { href: `#clan/${encodeURIComponent(region)}/${row.clan_id}`, class: 'rank-clan' }, row.tag ? `[${row.tag}]` : `Clan ${row.clan_id}`),
        row.name ? h('span', { class: 'muted small' }, ` ${row.name}`) : null),
      h('td', { class: 'num', 'data-col': 'value' }, figureNode(row.value, by)),
      others.map((k) => h('td', { class: 'num', 'data-col': k }, k === 'wn8' && row[k] !== null && row[k] !== undefined
        ? wn8Node(row[k]) : row[k] === null || row[k] === undefined
          ? nullFigure('Not known for this clan in this window (a rating the clan has none of, or no battles).') : fmtValue(row[k], k))))))),
  rows.length > 12);
}

function filterText(data, q) {
  const tier = data.tier ?? (q.tier || null);
  const type = data.type ?? (q.type || null);
  const parts = [];
  if (tier) parts.push(`tier ${tier}`);
  if (type) parts.push(typeLabel(type).toLowerCase() + 's');
  return parts.length ? ` in ${parts.join(' ')}` : '';
}

/** The floor applied, the window's steps, and what was asked when the API served a higher step. */
function floorNote(data, q) {
  const mode = q.mode;
  const floors = Array.isArray(data.floors) ? data.floors.filter(Number.isInteger) : [];
  const parts = [h('strong', null, 'Floor: ')];
  if (mode === 'clans') {
    parts.push(`a clan is ranked with at least ${NUM.format(data.min_members ?? 0)} active members`
      + (Number.isInteger(data.min_battles) ? ` and ${NUM.format(data.min_battles)} battles in the window` : '') + '.');
  } else {
    const where = mode === 'tank' ? 'on this tank in the window' : `in the window${data.tier || data.type ? ' (in the tanks filtered)' : ''}`;
    parts.push(`at least ${NUM.format(data.min_battles ?? 0)} battles ${where}.`);
    if (q.min_battles && Number(q.min_battles) !== data.min_battles) {
      parts.push(` You asked for ${NUM.format(Number(q.min_battles))}: the API ranks at the smallest of its steps at or above both that and the window’s floor.`);
    }
    if (floors.length) parts.push(` Steps of this window: ${floors.map((f) => NUM.format(f)).join(', ')}.`);
  }
  return h('p', { class: 'small rank-floor', id: 'rank-floor' }, parts);
}

function renderRankings(data, q, onPage, path) {
  const rows = (Array.isArray(data.rows) ? data.rows : []).filter(isObj);
  const region = data.region || q.region;
  const by = data.by || q.by;
  const total = Number.isInteger(data.total) ? data.total : rows.length;
  const offset = Number.isInteger(data.offset) ? data.offset : 0;
  const limit = Number.isInteger(data.limit) && data.limit > 0 ? data.limit : Math.max(rows.length, 1);
  const noun = MODES[q.mode].rows;
  const one = noun === 'clans' ? 'clan' : 'player';
  const box = h('div', { class: 'rankings-view' });
  if (q.mode === 'tank') {
    const name = state.tankNames[q.tank_id] || `Tank ${q.tank_id}`;
    const numeric = /^\d+$/.test(String(q.days)) && paramEnum('tank', 'days').map(String).includes(String(q.days));
    box.append(h('p', { class: 'back small' }, h('a', { href: `#tank/${encodeURIComponent(region)}/${encodeURIComponent(q.tank_id)}` + (numeric ? `/${q.days}` : ''),
      id: 'rank-tank-back' }, `← ${name}`)),
    h('h3', { class: 'tank-title', id: 'rank-title' }, `Top players of ${name}`));
  }
  const who = q.mode === 'tank' ? `tracked ${label(region)} players on this tank` : `tracked ${label(region)} ${noun}`;
  box.append(h('p', { class: 'tank-summary', id: 'rank-summary' },
    h('strong', null, `${NUM.format(total)} ${total === 1 ? one : noun}`), ` ranked by ${byLabel(by)}`, filterText(data, q),
    ` among the ${who} ${windowText(data.days ?? q.days, data.from, data.through)}`
    + (Number.isInteger(data.players) ? `, of ${NUM.format(data.players)} tracked players who ${String(data.days) === 'career' ? 'have a stored career' : 'played in it'}` : '')
    + (Number.isInteger(data.clans) ? `, of ${NUM.format(data.clans)} cached clans considered` : '') + '.'));
  box.append(floorNote(data, q));
  box.append(h('p', { class: 'population-note small', id: 'rank-population' }, h('strong', null, 'Population: '),
    data.population ? `${data.population}.` : 'the tracked accounts, not a random sample of the server.',
    ' Tied ranks are shared (1, 2, 2, 4).',
    typeof data.built_at === 'number' ? ` Built ${utcText(new Date(data.built_at * 1000))}.` : ''));
  if (!rows.length) {
    const floor = q.mode === 'clans' ? 'the floor' : `the floor of ${NUM.format(data.min_battles ?? 0)} battles`;
    box.append(h('p', { class: 'chart-empty muted rank-empty', id: 'rank-empty' }, total
      ? `No ${noun} on this page: go back to the first page.`
      : `No ${one} has reached ${floor}${q.mode === 'tank' ? ' on this tank' : ''} ${windowText(data.days ?? q.days, data.from, data.through)}${filterText(data, q)}.`));
    if (total && offset) box.append(h('div', { class: 'actions' }, h('button', { type: 'button', class: 'btn', onclick: () => onPage(0) }, 'First page')));
    return box;
  }
  box.append(q.mode === 'clans' ? clanTable(rows, region, by) : playerTable(rows, region, by, 'rank-table'));
  if (total > rows.length || offset > 0) {
    const end = Math.min(offset + rows.length, total);
    box.append(h('nav', { class: 'pager', 'aria-label': `Pages of the ${noun} ranking` },
      h('button', { type: 'button', class: 'btn btn-small', 'data-page': 'prev', disabled: offset <= 0,
        onclick: () => onPage(Math.max(0, offset - limit)) }, '← Previous'),
      h('span', { class: 'pager-text', id: 'rank-page' }, `${label(noun)} ${NUM.format(offset + 1)}–${NUM.format(end)} of ${NUM.format(total)}`),
      h('button', { type: 'button', class: 'btn btn-small', 'data-page': 'next', disabled: offset + limit >= total,
        onclick: () => onPage(offset + limit) }, 'Next →')));
  }
  box.append(csvLink(MODES[q.mode].endpoint, path, 'rank-csv', total > rows.length ? `These ${noun}` : 'The ranking') || '');
  return box;
}

let focusAfter = null;   // the pager button to focus once the next page is drawn

export async function loadRankings(q) {
  const token = takeToken('rankings');
  const out = $('#rankings-out');
  const busy = loading('Fetching the ranking…');
  if ($('#rank-table', out)) {
    out.setAttribute('aria-busy', 'true');
    if (!$(':scope > .loading', out)) out.prepend(busy);
  } else {
    out.replaceChildren(busy);
  }
  const res = await api(requestPath(q));
  if (!current('rankings', token)) return;
  out.removeAttribute('aria-busy');
  if (!res.ok) {
    const code = res.error && res.error.code;
    out.replaceChildren(explainedError(res, () => loadRankings(q), code === 'no_statistics'
      ? 'No rankings yet: they are built once a day with the tank statistics, from the tracked accounts’ per-tank records.' : null));
    return;
  }
  const data = res.data || {};
  const onPage = (offset) => {
    focusAfter = offset > (data.offset || 0) ? 'button[data-page=next]' : 'button[data-page=prev]';
    navigate(rankingsHash(Object.assign({}, q, { offset: String(offset) })));
  };
  out.replaceChildren(renderRankings(data, q, onPage, res.path), rateLine(res));
  if (focusAfter) {
    const target = $(focusAfter, out);
    focusAfter = null;
    const fallback = $('nav.pager button:not([disabled])', out);
    if (target && !target.disabled) target.focus();
    else if (fallback) fallback.focus();
  }
}

// ---------------------------------------------------------------- a player's place
/** "Rank N of M", linking to the page of the players' ranking that holds that rank. `place` is the
 * API's {rank, ranked, min_battles, through, days?, by?}; null when it is not an object. */
export function placeNode(place, region, days, by, id) {
  if (!isObj(place) || !Number.isInteger(place.rank)) return null;
  const window = String(place.days ?? days);
  const figure = place.by ?? by;
  const limit = defaultLimit('players');
  const q = { mode: 'players', region, days: window, by: figure, min_battles: Number.isInteger(place.min_battles) ? String(place.min_battles) : '',
    offset: limit ? String(Math.floor((place.rank - 1) / limit) * limit) : '' };
  const over = window === 'career' ? 'over the career' : `over the last ${windowLabel(window).toLowerCase()}`;
  const title = `Rank ${NUM.format(place.rank)} of the ${Number.isInteger(place.ranked) ? NUM.format(place.ranked) + ' ' : ''}tracked ${label(region)} players `
    + `with at least ${NUM.format(place.min_battles ?? 0)} battles, by ${byLabel(figure)} ${over}` + (place.through ? ` through ${place.through}` : '');
  return h('a', { href: rankingsHash(q), class: 'place-link', id: id || null, title },
    `Rank ${NUM.format(place.rank)}` + (Number.isInteger(place.ranked) ? ` of ${NUM.format(place.ranked)}` : ''));
}
