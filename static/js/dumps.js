/* The data page: the daily bulk files (GET /dumps), each realm's tables of a day (tank statistics,
 * marks of excellence, computed expected values, player counts, every leaderboard) as gzip'd CSV and
 * JSON, with their rows, size and SHA-256, and a link to each. The view lives in the hash:
 * #data/{region or all}[/{day}] (no day: the newest with files). */

import { $, h, isObj, label, muted, NUM, scroller, utcText } from './render.js';
import { API, api, current, exampleQuery, explainedError, loading, paramEnum, rateLine, state, takeToken } from './api.js';
import { go } from './nav.js';
import { byLabel, windowLabel } from './rankings.js';

const KB = new Intl.NumberFormat('en', { minimumFractionDigits: 1, maximumFractionDigits: 1 });
const SHA_SHOWN = 12;   // hex digits of a file's SHA-256 shown (the whole in its title)

/** The page's first region: the dumps endpoint's example (a realm), else every realm (''). */
function dumpsDefaults() {
  const region = exampleQuery('dumps').region;
  return { region: typeof region === 'string' ? region : '' };
}

export function dumpsHash(region, day) {
  return `#data/${region ? encodeURIComponent(region) : 'all'}` + (day ? `/${encodeURIComponent(day)}` : '');
}

// ---------------------------------------------------------------- the files
/** A file's kind in words (the kinds server/services/dumps.py writes); null for another. */
function kindText(kind) {
  let m;
  if ((m = /^tank-stats-(\d+)d$/.exec(kind))) return `Tank statistics, ${m[1]} days`;
  if (kind === 'tank-marks') return 'Marks of excellence';
  if (kind === 'expected-values') return 'Expected values (computed)';
  if (kind === 'online') return 'Player counts';
  if ((m = /^leaderboard-(players|clans)-([a-z0-9]+)-([a-z0-9]+)$/.exec(kind))) {
    // The file's name drops the figure's underscores: the index's figure it is, in words.
    const by = paramEnum(`leaderboard_${m[1]}`, 'by').find((b) => String(b).replace(/_/g, '') === m[3]);
    return `${m[1] === 'players' ? 'Players' : 'Clans'} ranking, ${windowLabel(m[2]).toLowerCase()}, by ${by ? byLabel(by) : m[3]}`;
  }
  return null;
}

function sizeText(bytes) {
  return typeof bytes === 'number' ? `${KB.format(bytes / 1024)} KB` : '—';
}

function fileRow(file, allRegions) {
  const words = kindText(String(file.kind ?? ''));
  const sha = typeof file.sha256 === 'string' ? file.sha256 : '';
  return h('tr', { 'data-name': file.name, 'data-format': file.format, 'data-region': file.region },
    allRegions ? h('td', { 'data-col': 'region' }, label(file.region ?? '')) : null,
    h('th', { scope: 'row', 'data-col': 'kind' }, words || h('code', null, String(file.kind ?? '')),
      words ? h('span', { class: 'muted small dump-kind' }, h('code', null, String(file.kind))) : null),
    h('td', { 'data-col': 'format' }, String(file.format ?? '').toUpperCase()),
    h('td', { class: 'num', 'data-col': 'rows' }, typeof file.rows === 'number' ? NUM.format(file.rows) : muted('—')),
    h('td', { class: 'num', 'data-col': 'size', title: typeof file.bytes === 'number' ? `${NUM.format(file.bytes)} bytes` : null },
      sizeText(file.bytes)),
    h('td', { 'data-col': 'sha256' }, sha ? h('code', { class: 'sha', title: sha }, sha.slice(0, SHA_SHOWN) + '…') : muted('—')),
    h('td', { 'data-col': 'download' }, h('a', { class: 'dump-link', href: file.url, download: file.name, title: file.name },
      `Download ${String(file.format ?? '').toUpperCase()}`)));
}

function filesTable(files, allRegions) {
  return scroller(h('table', { class: 'grid dumps', id: 'data-files' },
    h('caption', { class: 'sr-only' }, 'The bulk files of the day: what each holds, its format, rows, size, SHA-256 and its link.'),
    h('thead', null, h('tr', null,
      allRegions ? h('th', { scope: 'col' }, 'Region') : null,
      h('th', { scope: 'col' }, 'Kind'), h('th', { scope: 'col' }, 'Format'), h('th', { scope: 'col', class: 'num' }, 'Rows'),
      h('th', { scope: 'col', class: 'num' }, 'Size (gzip’d)'), h('th', { scope: 'col', title: 'Of the file as served (gzip’d)' }, 'SHA-256'),
      h('th', { scope: 'col' }, 'File (.gz)'))),
    h('tbody', null, files.map((file) => fileRow(file, allRegions)))), files.length > 12);
}

function renderDumps(data, region) {
  const files = (Array.isArray(data.files) ? data.files : []).filter(isObj);
  const days = (Array.isArray(data.days) ? data.days : []).filter((d) => typeof d === 'string');
  const shownRegion = data.region ?? (region || null);
  const where = shownRegion ? label(shownRegion) : 'every region';
  const box = h('div', { class: 'dumps-view' });
  if (!days.length) {
    box.append(h('p', { class: 'notice', id: 'data-empty' }, h('strong', null, 'No bulk files yet'),
      ` for ${where}: a day’s files are written after that day’s tank-statistics build (on a deployment that keeps them).`));
    return box;
  }
  const kept = Number.isInteger(data.kept_days) ? data.kept_days : null;
  box.append(h('p', { class: 'tank-summary', id: 'data-summary' },
    h('strong', null, `${NUM.format(files.length)} file${files.length === 1 ? '' : 's'}`), ` of ${data.day ?? '?'} for ${where}`,
    typeof data.built_at === 'number' ? `, written ${utcText(new Date(data.built_at * 1000))}` : '', '.'));
  box.append(h('p', { class: 'population-note small', id: 'data-note' },
    'Files are gzip’d (gunzip one for its CSV or JSON)' + (kept !== null ? ` and kept ${NUM.format(kept)} days` : '')
    + '. A file’s name carries its day and its bytes never change; compare a download’s SHA-256 with the one listed. '
    + 'The JSON is the matching endpoint’s answer with all its rows, the CSV its format=csv table.'));
  if (!files.length) {
    box.append(h('p', { class: 'chart-empty muted', id: 'data-no-files' }, `No files of ${data.day ?? 'this day'} for ${where}: choose one of the days listed.`));
    return box;
  }
  box.append(filesTable(files, !shownRegion));
  return box;
}

// ---------------------------------------------------------------- the form
function setDays(select, days, day) {
  const values = days.slice();
  if (day && !values.includes(day)) values.push(day);
  select.replaceChildren(...values.map((d, i) => h('option', { value: d }, i === 0 && days[0] === d ? `${d} (newest)` : d)));
  if (day) select.value = day;
  select.disabled = !values.length;
}

/** The region choices (every realm, then each) and the first region, once the index has loaded. */
export function fillDumps() {
  const form = $('#form-data');
  const select = form.elements.region;
  const keep = select.value;
  select.replaceChildren(...(state.regions.length ? [''].concat(state.regions) : [])
    .map((v) => h('option', { value: v }, v === '' ? 'All regions' : label(v))));
  if ([...select.options].some((o) => o.value === keep)) select.value = keep;
  if (!form.dataset.touched) {
    const d = dumpsDefaults();
    if ([...select.options].some((o) => o.value === d.region)) select.value = d.region;
  }
  form.querySelectorAll('button[type=submit]').forEach((b) => { b.disabled = !select.options.length; });
}

export function bindDumps() {
  const form = $('#form-data');
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    form.dataset.touched = '1';
    go(dumpsHash(form.elements.region.value, form.elements.day.value));
  });
  // A chosen value applies at once; another region starts at its newest day.
  form.addEventListener('change', (ev) => {
    if (ev.target.tagName !== 'SELECT' || form.querySelector('button[type=submit]').disabled) return;
    if (ev.target.name === 'region') form.elements.day.replaceChildren();
    form.requestSubmit();
  });
}

// ---------------------------------------------------------------- the page
export function routeDumps(args) {
  const form = $('#form-data');
  const f = form.elements;
  if (!args.length && !state.index) {
    $('#data-out').replaceChildren(loading('Loading the index…'));
    return;
  }
  const region = args.length ? (args[0] === 'all' ? '' : args[0]) : form.dataset.touched ? f.region.value : dumpsDefaults().region;
  if (args.length) form.dataset.touched = '1';
  if (region && ![...f.region.options].some((o) => o.value === region)) f.region.append(h('option', { value: region }, region));
  f.region.value = region;
  loadDumps(region, args[1] || '');
}

/** `fresh` (a retry) revalidates with the server instead of using the browser's HTTP cache. */
export async function loadDumps(region, day, fresh) {
  const token = takeToken('data');
  const out = $('#data-out');
  out.replaceChildren(loading('Fetching the list of files…'));
  const params = new URLSearchParams();
  if (region) params.set('region', region);
  if (day) params.set('day', day);
  const res = await api(`${API}/dumps` + (params.toString() ? `?${params}` : ''), fresh);
  if (!current('data', token)) return;
  const daySelect = $('#form-data').elements.day;
  if (!res.ok) {
    setDays(daySelect, [], day);
    out.replaceChildren(explainedError(res, () => loadDumps(region, day, true)));
    return;
  }
  const data = res.data || {};
  setDays(daySelect, (Array.isArray(data.days) ? data.days : []).filter((d) => typeof d === 'string'), data.day || day);
  out.replaceChildren(renderDumps(data, region), rateLine(res));
}
