/* DOM helpers, value formatting and the generic rendering of API data (objects and lists
 * whose field names are not fixed), WN8 colours and tiles. All API text is inserted with
 * textContent (never innerHTML). */

// ---------------------------------------------------------------- DOM helpers
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

export function s(tag, attrs, ...children) {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

function setAttrs(el, attrs) {
  if (!attrs) return;
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'class') el.setAttribute('class', value);
    else if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
}

export const $ = (sel, root) => (root || document).querySelector(sel);
export const muted = (text) => h('span', { class: 'muted' }, text);
export const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isScalar = (v) => v === null || typeof v !== 'object';
export const textOf = (v) => (v instanceof Node ? v.textContent : String(v));
/** A figure the API leaves out (null), as an em dash whose title says why. */
export const nullFigure = (why) => h('abbr', { class: 'null-figure muted', title: why }, '—');

// ---------------------------------------------------------------- formatting
export const NUM = new Intl.NumberFormat('en', { maximumFractionDigits: 2 });
export const COMPACT = new Intl.NumberFormat('en', { notation: 'compact', maximumFractionDigits: 1 });
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;
const WORDS = {
  wn8: 'WN8', wn7: 'WN7', xp: 'XP', id: 'ID', avg: 'avg.', elo: 'Elo', eu: 'EU', na: 'NA', asia: 'Asia',
  wot: 'WoT', wotb: 'WoT Blitz', wows: 'WoWS', ms: 'ms', s: 's', pct: '%', api: 'API', url: 'URL',
  ussr: 'USSR', usa: 'USA', uk: 'UK',
};
// The game API's vehicle types in words.
const VEHICLE_TYPES = { lightTank: 'Light tank', mediumTank: 'Medium tank', heavyTank: 'Heavy tank', 'AT-SPG': 'Tank destroyer', SPG: 'SPG' };

export function label(key) {
  const text = String(key).split(/[_\s]+/).filter(Boolean).map((w) => WORDS[w] || w).join(' ');
  return text ? text.charAt(0).toUpperCase() + text.slice(1) : String(key);
}

export function typeLabel(type) {
  return VEHICLE_TYPES[type] || String(type);
}

function pathLabel(path) {
  return path.split('.').map(label).join(' › ');
}

export function utcText(date) {
  if (Number.isNaN(date.getTime())) return null;
  return date.toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
}

export function ago(unixSeconds) {
  const diff = Math.round(Date.now() / 1000 - unixSeconds);
  if (diff < 0) return 'in the future';
  if (diff < 45) return 'just now';
  if (diff < 3600) return Math.round(diff / 60) + ' min ago';
  if (diff < 86400 * 2) return Math.round(diff / 3600) + ' h ago';
  return Math.round(diff / 86400) + ' days ago';
}

function isTimeKey(key) {
  return /(^|_)(at|time|run|success|failure|flush|unix)$/.test(key) || /^(newest|last)_/.test(key);
}

function timeNode(unixSeconds) {
  const date = new Date(unixSeconds * 1000);
  return h('time', { datetime: date.toISOString(), title: ago(unixSeconds) }, utcText(date));
}

/** One value as text or a node, formatted by what its key says it is. */
export function fmtValue(value, key, ctx) {
  key = key || '';
  ctx = ctx || {};
  if (value === null || value === undefined) return muted('—');
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'number') {
    if (key === 'account_id' && ctx.region) return h('a', { href: `#player/${ctx.region}/${value}` }, String(value));
    if (key === 'clan_id' && ctx.region) return h('a', { href: `#clan/${ctx.region}/${value}` }, String(value));
    if (/(^|_)id$/.test(key) || key === 'slot') return String(value);
    if (isTimeKey(key) && value > 1e9 && value < 1e11) return timeNode(value);
    if (/(^|_)change$/.test(key)) {
      const cls = value > 0 ? 'pos' : value < 0 ? 'neg' : null;
      const sign = value > 0 ? '+' : value < 0 ? '−' : '±';
      return h('span', { class: cls }, sign + NUM.format(Math.abs(value)) + (/rate/.test(key) ? ' pp' : ''));
    }
    if (/rate$/.test(key)) return NUM.format(value) + ' %';
    return NUM.format(value);
  }
  if (typeof value === 'string') {
    if (ISO_RE.test(value)) return utcText(new Date(value)) || value;
    return value;
  }
  return renderAny(value, Object.assign({}, ctx, { key }), 1);
}

// ---------------------------------------------------------------- generic rendering
// Objects and arrays whose field names are not fixed (weekly digest, online counts,
// status) are drawn generically: scalars as a key/value table, lists of objects as
// tables, objects of similar objects as one table with a row per key.

function flatten(obj, prefix, out, depth) {
  out = out || {};
  depth = depth || 0;
  for (const [key, value] of Object.entries(obj)) {
    const path = prefix ? prefix + '.' + key : key;
    if (isObj(value) && depth < 2 && Object.keys(value).length) flatten(value, path, out, depth + 1);
    else out[path] = value;
  }
  return out;
}

function dropUnixTwins(keys) {
  const set = new Set(keys);
  return keys.filter((k) => !(k.endsWith('_unix') && set.has(k.slice(0, -5))));
}

function leaf(path) {
  const parts = path.split('.');
  return parts[parts.length - 1];
}

function compactArray(items, key, ctx) {
  if (!items.length) return muted('none');
  const shown = items.slice(0, 8).map((item) => {
    if (!isObj(item)) return textOf(fmtValue(item, key, ctx));
    const keys = dropUnixTwins(Object.keys(item));
    return keys.map((k) => textOf(fmtCell(item[k], k, ctx))).join(' ');
  });
  let text = shown.join(' · ');
  if (items.length > 8) text += ` … (+${items.length - 8})`;
  return text;
}

export function fmtCell(value, key, ctx) {
  if (Array.isArray(value)) return compactArray(value, key, ctx);
  if (isObj(value)) {
    const keys = dropUnixTwins(Object.keys(value));
    if (!keys.length) return muted('—');
    return keys.map((k) => `${label(k)}: ${textOf(fmtCell(value[k], k, ctx))}`).join(', ');
  }
  return fmtValue(value, key, ctx);
}

/** A closed <details> whose body is built when first opened: tables nobody reads at once stay out
 * of the page (its elements, its layout) until asked for. */
export function lazyDetails(summary, build, cls) {
  const box = h('details', { class: cls || 'more' }, h('summary', null, summary));
  box.addEventListener('toggle', () => { if (box.open && box.children.length === 1) box.append(build()); });
  return box;
}

export function scroller(table, tall) {
  return h('div', { class: 'table-scroll' + (tall ? ' tall' : '') }, table);
}

function kvTable(entries, ctx) {
  return scroller(h('table', { class: 'kv' }, h('tbody', null, entries.map(([key, value]) =>
    h('tr', null, h('th', { scope: 'row' }, label(key)), h('td', null, fmtCell(value, key, ctx)))))));
}

export function listTable(items, ctx) {
  const rows = items.map((item) => (isObj(item) ? flatten(item) : { value: item }));
  const columns = [];
  for (const row of rows) for (const key of Object.keys(row)) if (!columns.includes(key)) columns.push(key);
  const cols = dropUnixTwins(columns);
  return scroller(h('table', { class: 'grid' },
    h('thead', null, h('tr', null, cols.map((c) => h('th', { scope: 'col' }, pathLabel(c))))),
    h('tbody', null, rows.map((row) => h('tr', null, cols.map((c) =>
      h('td', { class: typeof row[c] === 'number' ? 'num' : null }, fmtCell(row[c], leaf(c), ctx))))))), rows.length > 12);
}

/** {a: {...}, b: {...}} as one table; null when the objects are too different or too wide. */
function keyedTable(obj, ctx) {
  const keys = Object.keys(obj);
  const rows = keys.map((k) => flatten(obj[k]));
  const columns = [];
  for (const row of rows) for (const key of Object.keys(row)) if (!columns.includes(key)) columns.push(key);
  const cols = dropUnixTwins(columns);
  if (cols.length > 16) return null;
  const cell = (row, c) => h('td', { class: typeof row[c] === 'number' ? 'num' : null }, fmtCell(row[c], leaf(c), ctx));
  if (cols.length > 5 && keys.length <= 4) {   // few wide rows read better transposed
    return scroller(h('table', { class: 'grid' },
      h('thead', null, h('tr', null, h('th', null, ''), keys.map((k) => h('th', { scope: 'col' }, label(k))))),
      h('tbody', null, cols.map((c) => h('tr', null, h('th', { scope: 'row' }, pathLabel(c)), rows.map((row) => cell(row, c)))))));
  }
  return scroller(h('table', { class: 'grid' },
    h('thead', null, h('tr', null, h('th', null, ''), cols.map((c) => h('th', { scope: 'col' }, pathLabel(c))))),
    h('tbody', null, keys.map((k, i) => h('tr', null, h('th', { scope: 'row' }, label(k)), cols.map((c) => cell(rows[i], c)))))));
}

function similarShapes(objects) {
  const union = new Set();
  let largest = 0;
  for (const o of objects) {
    const keys = Object.keys(o);
    keys.forEach((k) => union.add(k));
    largest = Math.max(largest, keys.length);
  }
  return union.size <= Math.max(largest * 1.5, largest + 1);
}

export function renderAny(value, ctx, depth) {
  ctx = ctx || {};
  depth = depth || 0;
  if (Array.isArray(value)) {
    if (!value.length) return muted('none');
    if (value.every(isScalar)) return h('span', null, value.map((v) => textOf(fmtValue(v, ctx.key, ctx))).join(', '));
    return listTable(value, ctx);
  }
  if (!isObj(value)) return h('span', null, fmtValue(value, ctx.key, ctx));
  const entries = Object.entries(value);
  if (!entries.length) return muted('empty');
  if (entries.length >= 2 && entries.every(([, v]) => isObj(v)) && similarShapes(entries.map(([, v]) => v))) {
    const table = keyedTable(value, ctx);
    if (table) return table;
  }
  const scalars = entries.filter(([k, v]) => isScalar(v) && !(k.endsWith('_unix') && k.slice(0, -5) in value));
  const flats = entries.filter(([, v]) => isObj(v) && Object.keys(v).length && Object.values(v).every(isScalar));
  const grouped = flats.length >= 2 && similarShapes(flats.map(([, v]) => v));
  const others = entries.filter(([, v]) => !isScalar(v) && !(grouped && flats.some(([, f]) => f === v)));
  const out = h('div', { class: 'generic' });
  if (scalars.length) out.append(kvTable(scalars, ctx));
  if (grouped) out.append(keyedTable(Object.fromEntries(flats), ctx) || '');
  if (others.length) {
    const allLists = others.every(([, v]) => Array.isArray(v));
    const level = Math.min(4 + depth, 6);
    const subs = h('div', { class: allLists && others.length > 1 ? 'subgrid' : 'substack' });
    for (const [key, child] of others) {
      subs.append(h('div', { class: 'sub' }, h('h' + level, { class: 'sub-title' }, label(key)),
        renderAny(child, Object.assign({}, ctx, { key }), depth + 1)));
    }
    out.append(subs);
  }
  return out;
}

// ---------------------------------------------------------------- WN8 colours
// The usual (XVM) WN8 scale, the same bounds as the API's ratings.wn8_color labels.
const WN8_SCALE = [[300, 'very_bad'], [450, 'bad'], [650, 'below_average'], [900, 'average'], [1200, 'above_average'],
  [1600, 'good'], [2000, 'very_good'], [2450, 'great'], [2900, 'unicum']];

function wn8Label(value) {
  if (typeof value !== 'number' || !Number.isFinite(value)) return null;
  for (const [upper, name] of WN8_SCALE) if (value < upper) return name;
  return 'super_unicum';
}

/** A WN8 value coloured by the usual scale (class wn8-<label>, the API's wn8_color labels). */
export function wn8Node(value) {
  const name = wn8Label(value);
  if (!name) return muted('—');
  return h('span', { class: `wn8 wn8num wn8-${name}`, title: `WN8 scale: ${label(name)}`, 'data-wn8': name }, NUM.format(value));
}

// ---------------------------------------------------------------- tiles and days
export function tile(name, value, key, note) {
  return h('div', { class: 'tile' }, h('span', { class: 'tile-label' }, name),
    h('span', { class: 'tile-value' }, value === undefined ? muted('—') : fmtValue(value, key || '', {})),
    note ? h('span', { class: 'tile-note' }, note) : null);
}

export function shortDate(iso) {
  const d = new Date(iso + 'T00:00:00Z');
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleDateString('en', { month: 'short', day: 'numeric', timeZone: 'UTC' });
}

/** Every UTC day from `first` to `last` (YYYY-MM-DD), at most 1,000. */
export function dayRange(first, last) {
  const out = [];
  const start = new Date(first + 'T00:00:00Z');
  const end = new Date(last + 'T00:00:00Z');
  if (Number.isNaN(start.getTime()) || Number.isNaN(end.getTime())) return out;
  for (let d = start; d <= end && out.length < 1000; d = new Date(d.getTime() + 86400000)) out.push(d.toISOString().slice(0, 10));
  return out;
}

export function rangeText(from, to) {
  if (!from && !to) return null;
  return `${from ? shortDate(from) : '?'} → ${to ? shortDate(to) : '?'}`;
}

/** A list's previous/next pager: `noun` names the rows ("Tanks 1–50 of 300"), `textId` the text's id. */
export function pagerNav(ariaLabel, textId, noun, offset, limit, shown, total, onPage) {
  const last = Math.min(offset + shown, total);
  return h('nav', { class: 'pager', 'aria-label': ariaLabel },
    h('button', { type: 'button', class: 'btn btn-small', 'data-page': 'prev', disabled: offset <= 0,
      onclick: () => onPage(Math.max(0, offset - limit)) }, '← Previous'),
    h('span', { class: 'pager-text', id: textId }, `${noun} ${NUM.format(offset + 1)}–${NUM.format(last)} of ${NUM.format(total)}`),
    h('button', { type: 'button', class: 'btn btn-small', 'data-page': 'next', disabled: offset + limit >= total,
      onclick: () => onPage(offset + limit) }, 'Next →'));
}

/** After a page is drawn: focus the pager button that asked for it (`selector`), else any enabled one. */
export function focusPager(out, selector) {
  if (!selector) return;
  const target = $(selector, out);
  const fallback = $('nav.pager button:not([disabled])', out);
  if (target && !target.disabled) target.focus();
  else if (fallback) fallback.focus();
}

// Who an answer over a region's population is about, as a summary names them: a random panel of N
// active players (the answer's population_kind and panel_size), or the tracked ones.
export function whose(data, region) {
  if (!data || data.population_kind !== 'panel') return `tracked ${label(region)} players`;
  const size = Number.isInteger(data.panel_size) ? `${NUM.format(data.panel_size)} ` : '';
  return `a random panel of ${size}active ${label(region)} players`;
}

// The nations seen in any tank list so far, offered by the forms' nation inputs (the datalist #tank-nations).
const seenNations = new Set();

export function rememberNations(rows) {
  const before = seenNations.size;
  for (const row of rows) if (typeof row.nation === 'string') seenNations.add(row.nation);
  const list = $('#tank-nations');
  if (list && seenNations.size !== before) {
    list.replaceChildren(...[...seenNations].sort().map((n) => h('option', { value: n }, label(n))));
  }
}
