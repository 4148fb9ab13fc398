/* The expected values page: a region's WN8 expected values (GET /expected-values) in the XVM
 * file's format: the versions behind them (the loaded public table, the table computed from the
 * tracked accounts), how the computed rows compare with the loaded ones, every row with its
 * source and sample, and the answer as an XVM file to download. Reached from the tanks page.
 * The view lives in the hash: #expected/{region}[/{source}[/{version}]]. */

import { $, h, isObj, label, nullFigure, NUM, scroller, typeLabel, utcText } from './render.js';
import { API, api, csvOf, csvPath, current, explainedError, indexParam, loading, paramEnum, rateLine, state, takeToken } from './api.js';
import { navigate } from './nav.js';
import { tankHash } from './tank.js';

// The five statistics of a row: the comparison's names and the XVM file's keys.
const STATS = [
  { key: 'damage', xvm: 'expDamage', name: 'Damage' },
  { key: 'spot', xvm: 'expSpot', name: 'Spots' },
  { key: 'frag', xvm: 'expFrag', name: 'Frags' },
  { key: 'defence', xvm: 'expDef', name: 'Defence' },
  { key: 'win_rate', xvm: 'expWinRate', name: 'Win rate' },
];
const SOURCE_NAMES = { effective: 'Effective', table: 'Loaded table', computed: 'Computed' };
const SOURCE_NOTES = {
  effective: 'what this service rates the region with',
  table: 'the public XVM table as loaded',
  computed: 'every tank refitted over the random panel where it has the players, else the tracked accounts',
};
const VALUE = new Intl.NumberFormat('en', { maximumFractionDigits: 3 });   // the XVM file's 3 decimals
const RATIO = new Intl.NumberFormat('en', { minimumFractionDigits: 3, maximumFractionDigits: 3 });
const PERCENT = new Intl.NumberFormat('en', { maximumFractionDigits: 1, signDisplay: 'exceptZero' });

let onlyComputed = false;   // the rows filter, kept while switching sources
let blobUrl = null;         // the download's Blob URL, revoked when the next answer replaces it

/** The source the API applies when none is given (the index's default for the parameter). */
function defaultSource() {
  const value = (indexParam('expected_values', 'source') || {}).default;
  return typeof value === 'string' ? value : '';
}

export function expectedHash(region, source, version) {
  const src = source || (version ? defaultSource() : '');
  return `#expected/${encodeURIComponent(region)}` + (src ? `/${encodeURIComponent(src)}` : '')
    + (version ? `/${encodeURIComponent(version)}` : '');
}

const sourceName = (source) => SOURCE_NAMES[source] || label(source);

/** A column header of a tank table (its cells do not wrap; the header keeps the table's padding). */
const colHead = (name, title) => h('th', { scope: 'col', title: title || null }, h('span', { class: 'th-plain' }, name));

// ---------------------------------------------------------------- head: way back and switchers
function switcher(id, name, values, shown, text, onPick) {
  if (!values.length) return null;
  return h('div', { class: 'segmented', role: 'group', 'aria-label': name, id },
    values.map((v) => h('button', { type: 'button', class: 'seg', 'data-value': v, 'aria-pressed': String(v === shown),
      onclick: () => onPick(v) }, text(v))));
}

function head(region, source, version, data) {
  const back = state.tanksHash || `#tanks/${encodeURIComponent(region)}`;
  const shownSource = (data && data.source) || source || defaultSource();
  const sub = [label(region)];
  if (data && data.version) sub.push(`version ${data.version}`);
  else if (version) sub.push(`version ${version}`);
  return h('div', { class: 'tank-head expected-head' },
    h('p', { class: 'back small' }, h('a', { href: back, id: 'expected-back' }, '← All tanks')),
    h('div', { class: 'history-head' },
      h('h3', { class: 'tank-title', id: 'expected-title' }, 'WN8 expected values'),
      switcher('expected-region', 'Region', paramEnum('expected_values', 'region'), region, label,
        (r) => navigate(expectedHash(r, source, ''))),
    ),
    h('p', { class: 'subline', id: 'expected-subline' }, sub.join(' · ')),
    switcher('expected-source', 'Table', paramEnum('expected_values', 'source'), shownSource,
      (s) => `${sourceName(s)}`, (s) => navigate(expectedHash(region, s, version))));
}

// ---------------------------------------------------------------- the versions
function fact(key, name, value) {
  if (value === null || value === undefined || value === '') return null;
  return h('div', { 'data-fact': key }, h('dt', null, name), h('dd', null, value));
}

function passesText(part) {
  if (!isObj(part)) return null;
  const tanks = part.tanks ?? 0;
  const passes = part.passes ?? '?';
  const converged = part.converged === true ? 'converged' : part.converged === false ? 'not converged' : null;
  return `${NUM.format(tanks)} tank${tanks === 1 ? '' : 's'} (${passes} pass${passes === 1 ? '' : 'es'}`
    + (converged ? `, ${converged})` : ')');
}

function minimumsText(m) {
  if (!isObj(m)) return null;
  return `${m.players ?? '?'} players with at least ${m.tank_battles ?? '?'} battles on the tank and `
    + `${m.account_battles ?? '?'} on their other rated tanks; ${NUM.format(m.row_battles ?? 0)} battles in all`;
}

function versions(data) {
  const c = isObj(data.computed) ? data.computed : null;
  const window = c && isObj(c.window) ? c.window : null;
  const ratings = data.rating_source === 'computed'
    ? 'every computed row, the loaded table for the other tanks'
    : 'the loaded table, with computed rows for the tanks it lacks';
  const box = h('div', { class: 'expected-versions' });
  box.append(h('dl', { class: 'facts expected-facts', id: 'expected-facts' },
    fact('source', 'Rows', `${sourceName(data.source)} (${SOURCE_NOTES[data.source] || data.source})`),
    fact('version', 'Version', data.version),
    fact('table_version', 'Loaded table', data.table_version ?? 'none loaded'),
    fact('rating_source', 'Ratings use', ratings)));
  if (!c) {
    box.append(h('p', { class: 'muted small', id: 'expected-no-computed' }, `No computed table for ${label(data.region)} yet: `
      + 'the daily tank statistics job computes one from the tracked accounts’ per-tank records.'));
    return box;
  }
  box.append(h('h4', null, 'Computed table'), h('dl', { class: 'facts expected-facts', id: 'expected-computed' },
    fact('computed_version', 'Version', c.version),
    fact('method', 'Method', c.method),
    fact('window', 'Window', window ? `${window.from} → ${window.through} (${window.days} days)` : null),
    fact('minimums', 'A row needs', minimumsText(c.minimums)),
    fact('base', 'Fitted under the loaded table', c.base),
    fact('built_at', 'Built', typeof c.built_at === 'number' ? utcText(new Date(c.built_at * 1000)) : null),
    fact('gaps', 'Rows for the tanks the table lacks', passesText(c.gaps)),
    fact('every_tank', 'Every tank refitted', passesText(c.every_tank))));
  return box;
}

// ---------------------------------------------------------------- the comparison
/** A median ratio computed / loaded, with the difference in per cent as its title. */
function ratioNode(value, strong) {
  if (typeof value !== 'number') return nullFigure('No ratio.');
  const diff = (value - 1) * 100;
  const title = diff === 0 ? 'The same as the loaded table'
    : `The computed value is ${PERCENT.format(Math.abs(diff))} % ${diff > 0 ? 'above' : 'below'} the loaded table's`;
  return h(strong ? 'strong' : 'span', { title }, RATIO.format(value));
}

function ratioCells(group, statistic) {
  return STATS.map((st) => h('td', { class: 'num', 'data-stat': st.key }, ratioNode(group[st.key], st.key === statistic)));
}

function groupTable(id, first, groups, name) {
  if (!groups.length) return h('p', { class: 'muted small', id }, 'No tank of both tables has this fact in the encyclopedia.');
  return scroller(h('table', { class: 'grid expected-groups', id },
    h('thead', null, h('tr', null, h('th', { scope: 'col' }, first), h('th', { scope: 'col' }, 'Tanks'),
      STATS.map((st) => h('th', { scope: 'col' }, st.name)))),
    h('tbody', null, groups.map((g) => h('tr', { 'data-group': g.tier ?? g.type },
      h('th', { scope: 'row' }, name(g)), h('td', { class: 'num' }, NUM.format(g.tanks ?? 0)), ratioCells(g, null))))));
}

function largestTable(cmp, region) {
  const rows = (Array.isArray(cmp.largest_differences) ? cmp.largest_differences : []).filter(isObj);
  if (!rows.length) return null;
  const days = state.tanksQuery && state.tanksQuery.days;
  return scroller(h('table', { class: 'grid tanks expected-largest', id: 'expected-largest' },
    h('thead', null, h('tr', null, ['Tank', 'Tier', 'Type', 'Differs most in'].map((n) => colHead(n)),
      STATS.map((st) => colHead(st.name, `Computed ${st.xvm} / loaded ${st.xvm}`)),
      colHead('Players', 'Players behind the computed row'), colHead('Battles', 'Their battles on the tank in the window'))),
    h('tbody', null, rows.map((r) => {
      const ratios = isObj(r.ratios) ? r.ratios : {};
      const stat = STATS.find((st) => st.key === r.statistic);
      return h('tr', { 'data-tank-id': r.tank_id },
        h('th', { scope: 'row', class: 'tank-name' }, h('a', { href: tankHash(region, r.tank_id, days) }, r.name ?? `Tank ${r.tank_id}`)),
        h('td', { class: 'num' }, r.tier ?? nullFigure('The encyclopedia does not list this tank.')),
        h('td', null, r.type ? typeLabel(r.type) : nullFigure('The encyclopedia does not list this tank.')),
        h('td', { 'data-col': 'statistic' }, stat ? stat.name : String(r.statistic ?? '')),
        ratioCells(ratios, r.statistic),
        h('td', { class: 'num', 'data-col': 'players' }, NUM.format(r.players ?? 0)),
        h('td', { class: 'num', 'data-col': 'battles' }, NUM.format(r.battles ?? 0)));
    }))));
}

function comparisonBlock(data, region) {
  const box = h('section', { class: 'expected-comparison', id: 'expected-comparison', 'aria-labelledby': 'expected-comparison-title' },
    h('h4', { id: 'expected-comparison-title' }, 'Computed against the loaded table'));
  const cmp = isObj(data.comparison) ? data.comparison : null;
  if (!cmp) {
    box.append(h('p', { class: 'muted small', id: 'expected-no-comparison' },
      'No comparison: it needs both a computed table and the loaded table, with tanks in common.'));
    return box;
  }
  box.append(h('p', { class: 'small', id: 'expected-comparison-note' },
    `Median ratio computed ${cmp.computed_version ?? '?'} / loaded ${cmp.table_version ?? '?'} over the `
    + `${NUM.format(cmp.tanks ?? 0)} tanks both have. Above 1, the computed table expects more of a player on the tank than the loaded one.`));
  box.append(h('div', { class: 'tiles', id: 'expected-medians' }, STATS.map((st) =>
    h('div', { class: 'tile', 'data-stat': st.key }, h('span', { class: 'tile-label' }, st.name),
      h('span', { class: 'tile-value' }, ratioNode(cmp[st.key], false))))));
  const byTier = (Array.isArray(cmp.by_tier) ? cmp.by_tier : []).filter(isObj);
  const byType = (Array.isArray(cmp.by_type) ? cmp.by_type : []).filter(isObj);
  box.append(h('div', { class: 'subgrid' },
    h('div', { class: 'sub' }, h('h5', { class: 'sub-title' }, 'By tier'),
      groupTable('expected-by-tier', 'Tier', byTier, (g) => String(g.tier))),
    h('div', { class: 'sub' }, h('h5', { class: 'sub-title' }, 'By type'),
      groupTable('expected-by-type', 'Type', byType, (g) => typeLabel(g.type)))));
  const largest = largestTable(cmp, region);
  if (largest) {
    box.append(h('h5', { class: 'sub-title' }, 'Largest differences'),
      h('p', { class: 'muted small' }, 'The tanks whose computed row differs most from the loaded one (in the statistic in bold).'),
      largest);
  }
  return box;
}

// ---------------------------------------------------------------- the rows
/** Tank names the answer gives (those of the comparison's tanks); the rows carry IDNum only. */
function knownNames(data) {
  const names = new Map();
  const cmp = isObj(data.comparison) ? data.comparison : {};
  for (const r of Array.isArray(cmp.largest_differences) ? cmp.largest_differences : []) {
    if (isObj(r) && typeof r.name === 'string') names.set(r.tank_id, r.name);
  }
  return names;
}

function rowsSummary(rows, computed, filtered) {
  if (filtered) return `Showing the ${NUM.format(computed)} computed row${computed === 1 ? '' : 's'} of ${NUM.format(rows.length)}.`;
  const loaded = rows.length - computed;
  return `${NUM.format(rows.length)} row${rows.length === 1 ? '' : 's'}: ${NUM.format(loaded)} from the loaded table, `
    + `${NUM.format(computed)} computed.`;
}

function rowCells(row, region, names, days) {
  const sample = isObj(row.sample) ? row.sample : null;
  const whyNoSample = 'A loaded row: the public table does not publish the sample behind it.';
  const name = names.get(row.IDNum);
  return [
    h('th', { scope: 'row', class: 'tank-name' }, h('a', { href: tankHash(region, row.IDNum, days) }, String(row.IDNum)),
      name ? h('span', { class: 'muted small' }, ` ${name}`) : null),
    STATS.map((st) => h('td', { class: 'num', 'data-col': st.xvm },
      typeof row[st.xvm] === 'number' ? VALUE.format(row[st.xvm]) : nullFigure('Not in this row.'))),
    h('td', { 'data-col': 'source' }, row.source === 'computed' ? 'computed' : row.source === 'table' ? 'loaded' : String(row.source ?? '')),
    h('td', { class: 'num', 'data-col': 'players' }, sample ? NUM.format(sample.players ?? 0) : nullFigure(whyNoSample)),
    h('td', { class: 'num', 'data-col': 'battles' }, sample ? NUM.format(sample.battles ?? 0) : nullFigure(whyNoSample)),
  ];
}

function rowsBlock(data, region) {
  const rows = (Array.isArray(data.data) ? data.data : []).filter(isObj);
  const computed = rows.filter((r) => r.source === 'computed').length;
  const mixed = computed > 0 && computed < rows.length;
  const names = knownNames(data);
  const days = state.tanksQuery && state.tanksQuery.days;
  const filtered = () => mixed && onlyComputed;
  const summary = h('p', { class: 'tank-summary', id: 'expected-rows-summary' }, rowsSummary(rows, computed, filtered()));
  const table = h('table', { class: 'grid tanks expected-rows' + (filtered() ? ' only-computed' : ''), id: 'expected-rows' },
    h('caption', { class: 'sr-only' }, 'The rows of the table: the XVM file’s five expected values per tank, their source and sample.'),
    h('thead', null, h('tr', null, colHead('Tank', 'IDNum'), STATS.map((st) => colHead(st.name, st.xvm)), colHead('Source'),
      colHead('Players', 'Players behind a computed row'), colHead('Battles', 'Their battles on the tank in the window'))),
    h('tbody', null, rows.map((row) => h('tr', { 'data-tank-id': row.IDNum, 'data-source': row.source },
      rowCells(row, region, names, days)))));
  const filter = mixed ? h('label', { class: 'check small', id: 'expected-filter' },
    h('input', { type: 'checkbox', id: 'expected-only-computed', checked: onlyComputed, onchange: (ev) => {
      onlyComputed = ev.target.checked;
      table.classList.toggle('only-computed', filtered());
      summary.textContent = rowsSummary(rows, computed, filtered());
    } }), ' Computed rows only') : null;
  return h('section', { class: 'expected-rows-block', 'aria-labelledby': 'expected-rows-title' },
    h('div', { class: 'history-head' }, h('h4', { id: 'expected-rows-title' }, 'Rows'), filter),
    summary,
    rows.length ? scroller(table, rows.length > 12) : h('p', { class: 'chart-empty muted' }, 'This table has no rows.'));
}

// ---------------------------------------------------------------- download
/** The answer's {header, data} as an XVM file (a Blob URL); the rows' extra keys stay (XVM tools ignore them).
 * Beside it, the request the page made (`path`) as CSV when the index lists CSV for the endpoint. */
function download(data, path) {
  if (blobUrl) URL.revokeObjectURL(blobUrl);
  const file = { header: data.header, data: data.data };
  blobUrl = URL.createObjectURL(new Blob([JSON.stringify(file)], { type: 'application/json' }));
  const name = ['wn8exp', data.region, data.source, data.version].filter(Boolean).join('-').replace(/[^A-Za-z0-9._+-]/g, '_') + '.json';
  const csv = csvOf('expected_values');   // the same rows as CSV (the request as made, format=csv)
  return h('div', { class: 'actions' },
    h('a', { class: 'btn btn-small', id: 'expected-download', href: blobUrl, download: name }, 'Download as XVM JSON'),
    h('span', { class: 'muted small' }, `${name}: the header and rows above, readable by tools that read XVM’s wn8exp.json.`),
    csv && path ? [h('a', { class: 'btn btn-small csv-link', id: 'expected-csv', href: csvPath(path), download: true,
      type: csv.media_type || null, 'data-endpoint': 'expected_values' }, 'Download CSV'),
    h('span', { class: 'muted small' }, 'The rows as the API answers them with format=csv.')] : null);
}

// ---------------------------------------------------------------- the page
function renderExpected(data, region, source, version, path) {
  const box = h('div', { class: 'expected-page' });
  box.append(head(region, source, version, data), versions(data), download(data, path), comparisonBlock(data, region), rowsBlock(data, region));
  return box;
}

function noTableText(region, source, version) {
  if (version) return `No computed table ${version} for ${label(region)}: no such version was built, or it has expired.`;
  if ((source || defaultSource()) === 'computed') {
    return `No computed expected values for ${label(region)} yet: the daily tank statistics job computes them from the tracked `
      + 'accounts’ per-tank records. The loaded table is there meanwhile.';
  }
  return 'No expected-values table is loaded yet: the service loads the public XVM table at start and retries it; try again shortly.';
}

export async function loadExpected(region, source, version) {
  const token = takeToken('expected');
  const out = $('#expected-out');
  out.replaceChildren(head(region, source, version, null), loading('Fetching the expected values…'));
  const params = new URLSearchParams([['region', region]]);
  if (source) params.set('source', source);
  if (version) params.set('version', version);
  const res = await api(`${API}/expected-values?${params}`);
  if (!current('expected', token)) return;
  if (!res.ok) {
    const code = res.error && res.error.code;
    out.replaceChildren(head(region, source, version, null), explainedError(res, () => loadExpected(region, source, version),
      code === 'no_expected_values' ? noTableText(region, source, version) : null));
    return;
  }
  out.replaceChildren(renderExpected(res.data || {}, region, source, version, res.path), rateLine(res));
}
