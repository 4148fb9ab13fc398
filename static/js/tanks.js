/* The player's per-tank table: figures of the selected period and career totals, sortable, and
 * (when the API sends `standing`) where the period stands among each tank's tracked players. */

import { fmtValue, h, isObj, label, muted, nullFigure, NUM, rangeText, scroller, typeLabel, wn8Node } from './render.js';
import { paramEnum } from './api.js';

// ---------------------------------------------------------------- per-tank table
const TANK_COLUMNS = [
  { key: 'name', name: 'Tank', text: true, get: (t) => t.name ?? null },
  { key: 'tier', name: 'Tier', get: (t) => t.tier ?? null },
  { key: 'type', name: 'Type', text: true, get: (t) => t.type ?? null },
  { key: 'period_battles', name: 'Battles', get: (t) => (isObj(t.period) ? t.period.battles ?? null : null) },
  { key: 'period_win_rate', name: 'Win rate', field: 'win_rate', get: (t) => (isObj(t.period) ? t.period.win_rate ?? null : null) },
  { key: 'period_avg_damage', name: 'Avg. damage', field: 'avg_damage', get: (t) => (isObj(t.period) ? t.period.avg_damage ?? null : null) },
  { key: 'period_wn8', name: 'WN8', wn8: true, get: (t) => (isObj(t.period) ? t.period.wn8 ?? null : null) },
  { key: 'career_battles', name: 'Career battles', get: (t) => (isObj(t.career) ? t.career.battles ?? null : null) },
  { key: 'career_wn8', name: 'Career WN8', wn8: true, get: (t) => (isObj(t.career) ? t.career.wn8 ?? null : null) },
];
// The period's standing among the tank's tracked players (0-99: the share of them below it).
const STANDING_COLUMNS = [
  { key: 'standing_damage', name: 'Dmg. percentile', standing: 'damage_percentile', what: 'average damage',
    get: (t) => (isObj(t.standing) ? t.standing.damage_percentile ?? null : null) },
  { key: 'standing_wn8', name: 'WN8 percentile', standing: 'wn8_percentile', what: 'WN8',
    get: (t) => (isObj(t.standing) ? t.standing.wn8_percentile ?? null : null) },
];

/** Sorted copy; missing values always last, ties in the API's order. */
function sortTanks(tanks, sort, columns) {
  const col = columns.find((c) => c.key === sort.key) || columns[3];
  return tanks.map((tank, i) => [tank, i]).sort(([a, ia], [b, ib]) => {
    const va = col.get(a);
    const vb = col.get(b);
    const na = va === null || va === undefined;
    const nb = vb === null || vb === undefined;
    if (na || nb) return na && nb ? ia - ib : na ? 1 : -1;
    const c = col.text ? String(va).localeCompare(String(vb), 'en', { sensitivity: 'base', numeric: true }) : va - vb;
    return c ? c * sort.dir : ia - ib;
  }).map(([tank]) => tank);
}

/** The tank statistics' period a player's `days` compare with (the API's standing.period_days, else the nearest). */
function populationDays(tank, days) {
  if (isObj(tank.standing) && Number.isInteger(tank.standing.period_days)) return tank.standing.period_days;
  const periods = paramEnum('tank', 'days');
  return periods.length && days ? periods.reduce((a, b) => (Math.abs(b - days) < Math.abs(a - days) ? b : a)) : days;
}

function tankCell(col, tank, ctx) {
  const v = col.get(tank);
  if (col.key === 'name') {
    const nation = tank.nation ? h('span', { class: 'muted small tank-nation' }, ` ${label(tank.nation)}`) : null;
    const text = v === null ? `Tank ${tank.tank_id}` : String(v);
    const period = populationDays(tank, ctx.days);
    return h('th', { scope: 'row', class: 'tank-name' }, ctx.region && tank.tank_id
      ? h('a', { href: `#tank/${encodeURIComponent(ctx.region)}/${tank.tank_id}` + (period ? `/${period}` : ''),
        title: 'This tank among the tracked players' }, text) : text, nation);
  }
  if (col.standing) {
    if (v === null) {
      return h('td', { class: 'num', 'data-col': col.key }, nullFigure(isObj(tank.standing)
        ? 'Below the minimum sample: too few battles on this tank in the period, or too few players of it for percentiles.'
        : 'The tank statistics are not built yet.'));
    }
    return h('td', { class: 'num', 'data-col': col.key, title: `This period’s ${col.what} on the tank is above that of ${v} % `
      + `of its tracked players (${tank.standing.period_days} days)` }, NUM.format(v));
  }
  if (col.key === 'type') return h('td', { 'data-col': col.key }, v === null ? muted('—') : typeLabel(v));
  if (col.wn8) return h('td', { class: 'num', 'data-col': col.key }, wn8Node(v));
  if (col.text) return h('td', { 'data-col': col.key }, v === null ? muted('—') : String(v));
  return h('td', { class: 'num', 'data-col': col.key }, fmtValue(v, col.field || col.key));
}

function renderTankTable(tanks, sort, onSort, columns, ctx) {
  const sorted = sortTanks(tanks, sort, columns);
  const head = columns.map((col) => {
    const active = col.key === sort.key;
    const arrow = active ? (sort.dir > 0 ? '▲' : '▼') : '';
    return h('th', { scope: 'col', 'data-sort': col.key, 'aria-sort': active ? (sort.dir > 0 ? 'ascending' : 'descending') : null },
      h('button', { type: 'button', class: 'sort', 'data-sort': col.key, onclick: () => onSort(col) },
        col.name, h('span', { class: 'sort-arrow', 'aria-hidden': 'true' }, arrow)));
  });
  return scroller(h('table', { class: 'grid tanks', id: 'tank-table' },
    h('caption', { class: 'sr-only' }, 'Tanks: figures of the selected period, and career totals. Click a column header to sort.'),
    h('thead', null, h('tr', null, head)),
    h('tbody', null, sorted.map((tank) => h('tr', { 'data-tank-id': tank.tank_id }, columns.map((col) => tankCell(col, tank, ctx)))))),
  sorted.length > 12);
}

export function renderTanks(data, days, sort) {
  const tanks = (Array.isArray(data.tanks) ? data.tanks : []).filter(isObj);
  const p = isObj(data.period) ? data.period : {};
  const box = h('div', { class: 'tanks-body' });
  const range = rangeText(data.from, data.to);
  const summary = h('p', { class: 'tank-summary' },
    `Last ${data.days ?? days} days` + (range ? ` (${range})` : '') + ': ',
    typeof p.battles === 'number' ? `${NUM.format(p.battles)} battles` : 'battles unknown',
    p.battles ? [' · win rate ', fmtValue(p.win_rate, 'win_rate'), ' · avg. damage ', fmtValue(p.avg_damage, 'avg_damage'),
      ' · WN8 ', wn8Node(p.wn8), ' · WN7 ', fmtValue(p.wn7, 'wn7'), ' · EFF ', fmtValue(p.efficiency, 'efficiency')] : null);
  box.append(summary);
  if (!tanks.length) {
    box.append(h('p', { class: 'chart-empty muted tanks-empty' }, `No tank was played in the last ${data.days ?? days} days.`));
    return box;
  }
  // The standing columns when the API placed any tank among its players (GET .../tanks?days=N).
  const placed = tanks.filter((t) => isObj(t.standing));
  const columns = placed.length ? TANK_COLUMNS.concat(STANDING_COLUMNS) : TANK_COLUMNS;
  const ctx = { region: data.region, days: data.days ?? days };
  const holder = h('div', { class: 'tank-table-holder' });
  const draw = () => holder.replaceChildren(renderTankTable(tanks, sort, (col) => {
    if (sort.key === col.key) sort.dir = -sort.dir;
    else { sort.key = col.key; sort.dir = col.text ? 1 : -1; }
    draw();
    const btn = holder.querySelector(`button.sort[data-sort="${col.key}"]`);
    if (btn) btn.focus();
  }, columns, ctx));
  draw();
  box.append(holder);
  if (placed.length) {
    const period = placed[0].standing.period_days;
    box.append(h('p', { class: 'muted small', id: 'standing-note' }, `Dmg. and WN8 percentile: the share (0–99 %) of each tank’s tracked players `
      + `(with enough battles on it over the ${period}-day tank statistics) whose average damage or WN8 on it is below this period’s. `
      + 'Tracked players are the accounts looked up here and clan members, not a random sample; — is below the minimum sample.'));
  } else if (tanks.some((t) => 'standing' in t)) {
    box.append(h('p', { class: 'muted small', id: 'standing-note' }, 'Each tank’s standing among its tracked players appears once the tank statistics are built.'));
  }
  if (data.expected_values_version) box.append(h('p', { class: 'muted small' }, `WN8 with expected values ${data.expected_values_version}.`));
  return box;
}
