/* The player's per-tank table: figures of the selected period and career totals, sortable,
 * (when the API sends `standing`) where the period stands among each tank's tracked players, and
 * (when it sends `marks`) each tank's progress toward its next mark of excellence; with a group_by,
 * the period per tier, type or nation above it. */

import { focusPager, fmtValue, h, isObj, label, muted, nullFigure, NUM, pagerNav, rangeText, scroller, typeLabel, wn8Node } from './render.js';
import { paramEnum } from './api.js';
import { estimateNote, MARKS_MIN_TIER } from './marks.js';

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

// Each tank's marks of excellence (tier V and up): the player's combined damage over the marks'
// window, where it stands among the tank's players, and the progress toward the next mark.
const ORDINAL = { 1: '1st', 2: '2nd', 3: '3rd' };
const marksOf = (t) => (isObj(t.marks) ? t.marks : null);
const nextOf = (t) => (marksOf(t) && isObj(t.marks.next) ? t.marks.next : null);
/** The progress as one sortable number: the marks held, plus the share of the way to the next (past the 3rd: 3). */
function progressValue(t) {
  const m = marksOf(t);
  const next = nextOf(t);
  if (!m || typeof m.combined_damage !== 'number' || !Number.isInteger(m.estimated_marks) || !next) return null;
  if (next.mark === null || typeof next.combined_damage !== 'number' || next.combined_damage <= 0) return m.estimated_marks;
  return m.estimated_marks + Math.min(1, m.combined_damage / next.combined_damage);
}
const MARKS_COLUMNS = [
  { key: 'marks_combined', name: 'Comb. dmg.', marks: 'combined', field: 'avg_damage',
    get: (t) => (marksOf(t) ? t.marks.combined_damage ?? null : null) },
  { key: 'marks_percentile', name: 'Mark %', marks: 'percentile', get: (t) => (marksOf(t) ? t.marks.percentile ?? null : null) },
  { key: 'marks_progress', name: 'Next mark', marks: 'progress', get: progressValue },
];

/** Why a tank's marks figure is missing, in the words of the row. */
function whyNoMarks(tank) {
  const m = marksOf(tank);
  if (!m) {
    return Number.isInteger(tank.tier) && tank.tier < MARKS_MIN_TIER ? 'The game awards marks of excellence from tier V.'
      : 'No marks for this tank: the encyclopedia does not list it.';
  }
  if (!m.battles) return `No battles on this tank in the last ${m.window_days ?? '?'} days (the marks’ window).`;
  if (typeof m.combined_damage !== 'number') {
    return 'Combined damage unknown: this player’s records of the window predate the assistance figures.';
  }
  if (!isObj(m.thresholds)) return 'No thresholds yet: too few tracked players of this tank in the marks’ window.';
  return 'Not known.';
}

/** The progress bar toward the next mark: combined damage against the next threshold. */
function progressCell(tank, col) {
  const m = marksOf(tank);
  const next = nextOf(tank);
  const attrs = { class: 'mark-cell', 'data-col': col.key };
  if (!m || typeof m.combined_damage !== 'number' || !isObj(m.thresholds) || !next) {
    const text = m && typeof m.combined_damage === 'number' && !isObj(m.thresholds) ? 'no thresholds yet' : null;
    return h('td', attrs, text ? h('abbr', { class: 'null-figure muted small', title: whyNoMarks(tank) }, text) : nullFigure(whyNoMarks(tank)));
  }
  const held = Number.isInteger(m.estimated_marks) ? m.estimated_marks : 0;
  const stars = h('span', { class: 'mark-stars', 'aria-hidden': 'true', title: `${held} of 3 marks (estimated)` },
    '★'.repeat(held) + '☆'.repeat(Math.max(0, 3 - held)));
  const bar = h('span', { class: 'mark-bar' });
  const fill = h('span', { class: 'mark-fill' });
  bar.append(fill);
  let ratio;
  let text;
  let title;
  if (next.mark === null || typeof next.combined_damage !== 'number') {
    ratio = 1;
    text = '3 marks';
    title = `${NUM.format(m.combined_damage)} combined damage per battle: past the 3rd mark (${NUM.format(m.thresholds.third)}).`;
    bar.classList.add('done');
  } else {
    ratio = next.combined_damage > 0 ? Math.max(0, Math.min(1, m.combined_damage / next.combined_damage)) : 0;
    text = `${NUM.format(next.needed)} to ${ORDINAL[next.mark] || next.mark}`;
    title = `${NUM.format(m.combined_damage)} of the ${NUM.format(next.combined_damage)} combined damage per battle the `
      + `${ORDINAL[next.mark] || next.mark} mark takes (${NUM.format(next.needed)} more); estimated marks: ${held}.`;
  }
  fill.style.width = `${(ratio * 100).toFixed(2)}%`;
  const progress = h('span', { class: 'mark-progress', role: 'progressbar', title,
    'aria-label': `Toward the ${next.mark ? ORDINAL[next.mark] || next.mark : '3rd'} mark`,
    'aria-valuemin': 0, 'aria-valuemax': next.mark === null ? m.combined_damage : next.combined_damage,
    'aria-valuenow': m.combined_damage, 'aria-valuetext': text,
    'data-value': m.combined_damage, 'data-target': next.mark === null ? '' : next.combined_damage, 'data-next': next.mark ?? '' },
  bar, h('span', { class: 'mark-text small' }, stars, ' ', text));
  return h('td', attrs, progress);
}

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
  if (col.marks === 'progress') return progressCell(tank, col);
  if (col.marks) {
    if (v === null) return h('td', { class: 'num', 'data-col': col.key }, nullFigure(whyNoMarks(tank)));
    if (col.marks === 'percentile') {
      return h('td', { class: 'num', 'data-col': col.key, title: `Over the last ${tank.marks.window_days ?? '?'} days, this player’s `
        + `combined damage on the tank beats ${v} % of its tracked players (the estimated mark progress)` }, NUM.format(v));
    }
    return h('td', { class: 'num', 'data-col': col.key, title: `Combined damage per battle over the last ${tank.marks.window_days ?? '?'} days `
      + `(${NUM.format(tank.marks.battles ?? 0)} battles)` }, fmtValue(v, col.field));
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

// Rows per page of the table: a player with hundreds of tanks would otherwise draw thousands of
// cells at once (the page's main thread, and its DOM, on a phone). Sorting is over every tank.
export const TANK_PAGE = 25;

function renderTankTable(tanks, sort, onSort, columns, ctx, offset) {
  const sorted = sortTanks(tanks, sort, columns).slice(offset, offset + TANK_PAGE);
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

// ---------------------------------------------------------------- groups (group_by)
const GROUP_COLUMNS = [
  { key: 'tanks', name: 'Tanks' },
  { key: 'battles', name: 'Battles' },
  { key: 'wins', name: 'Wins' },
  { key: 'win_rate', name: 'Win rate' },
  { key: 'avg_damage', name: 'Avg. damage' },
  { key: 'avg_combined_damage', name: 'Comb. dmg.', field: 'avg_damage' },
  { key: 'wn8', name: 'WN8', wn8: true },
];
const GROUP_NAMES = { tier: 'Tier', type: 'Type', nation: 'Nation' };

function groupValue(by, value) {
  if (value === null || value === undefined) return muted('unknown tanks');
  if (by === 'type') return typeLabel(value);
  if (by === 'nation') return label(value);
  if (by === 'tier') return `Tier ${value}`;
  return String(value);
}

function groupCell(col, row) {
  const v = row[col.key] ?? null;
  if (col.wn8) return h('td', { class: 'num', 'data-col': col.key }, wn8Node(v));
  return h('td', { class: 'num', 'data-col': col.key }, fmtValue(v, col.field || col.key));
}

/** The period per group of tanks (the API's groups, by battles), with the whole period as the footer. */
export function renderGroups(data) {
  const by = data.group_by;
  const groups = (Array.isArray(data.groups) ? data.groups : []).filter(isObj);
  const p = isObj(data.period) ? data.period : {};
  const box = h('div', { class: 'tank-groups-block', id: 'tank-groups-block' },
    h('h5', { class: 'sub-title', id: 'tank-groups-title' }, `By ${(GROUP_NAMES[by] || label(by)).toLowerCase()}`));
  if (!groups.length) {
    box.append(h('p', { class: 'chart-empty muted', id: 'tank-groups-empty' }, 'No battles in this period, so no groups.'));
    return box;
  }
  const total = { tanks: groups.reduce((n, g) => n + (g.tanks || 0), 0), ...p };
  box.append(scroller(h('table', { class: 'grid tanks tank-groups', id: 'tank-groups', 'data-group-by': by },
    h('caption', { class: 'sr-only' }, `The period’s figures per ${by} of the tanks played`),
    h('thead', null, h('tr', null, h('th', { scope: 'col' }, h('span', { class: 'th-plain' }, GROUP_NAMES[by] || label(by))),
      GROUP_COLUMNS.map((col) => h('th', { scope: 'col' }, h('span', { class: 'th-plain' }, col.name))))),
    h('tbody', null, groups.map((g) => h('tr', { 'data-group': g[by] === null || g[by] === undefined ? '' : String(g[by]) },
      h('th', { scope: 'row' }, groupValue(by, g[by])), GROUP_COLUMNS.map((col) => groupCell(col, g))))),
    h('tfoot', null, h('tr', { class: 'total' }, h('th', { scope: 'row' }, 'All tanks'), GROUP_COLUMNS.map((col) => groupCell(col, total)))))));
  box.append(h('p', { class: 'muted small' }, 'The groups’ battles add up to the period’s (the last row). Combined damage counts '
    + 'the account’s spotting and tracking averages as each group’s: a lower bound.'));
  return box;
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
  if (data.group_by) box.append(renderGroups(data));
  // The standing columns when the API placed any tank among its players (GET .../tanks?days=N),
  // the marks' when it sends them (tier V and up).
  const placed = tanks.filter((t) => isObj(t.standing));
  const marked = tanks.filter((t) => isObj(t.marks));
  const columns = TANK_COLUMNS.concat(placed.length ? STANDING_COLUMNS : [], marked.length ? MARKS_COLUMNS : []);
  const ctx = { region: data.region, days: data.days ?? days };
  const holder = h('div', { class: 'tank-table-holder' });
  let offset = 0;
  const onPage = (to, focus) => { offset = to; draw(); focusPager(holder, focus); };
  const draw = () => holder.replaceChildren(renderTankTable(tanks, sort, (col) => {
    if (sort.key === col.key) sort.dir = -sort.dir;
    else { sort.key = col.key; sort.dir = col.text ? 1 : -1; }
    offset = 0;   // a new order starts at its first page
    draw();
    const btn = holder.querySelector(`button.sort[data-sort="${col.key}"]`);
    if (btn) btn.focus();
  }, columns, ctx, offset), tanks.length > TANK_PAGE
    ? pagerNav('Pages of the tank table', 'tank-table-page', 'Tanks', offset, TANK_PAGE, Math.min(TANK_PAGE, tanks.length - offset),
      tanks.length, (to) => onPage(to, to > offset ? 'button[data-page=next]' : 'button[data-page=prev]')) : '');
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
  if (marked.length) {
    const m = marked[0].marks;
    box.append(h('p', { class: 'muted small', id: 'marks-progress-note' }, `Marks (tier V and up): Comb. dmg. is the combined damage `
      + `per battle over the last ${m.window_days ?? '?'} days (damage plus the largest of the average spotting, tracking and stun `
      + 'assistance); Mark % the share of the tank’s tracked players it beats (65 % is the 1st mark, 85 % the 2nd, 95 % the 3rd); '
      + 'the bar, how far it is toward the next mark’s threshold, with the marks it stands at (★).'),
    estimateNote({ days: m.window_days, method: m.method }, 'marks-progress-estimate'));
  }
  if (data.expected_values_version) box.append(h('p', { class: 'muted small' }, `WN8 with expected values ${data.expected_values_version}.`));
  return box;
}
