/* API access: requests, stale-answer tokens, error boxes, the attribution, and what the
 * index (GET /api/v1) says about parameters. Every fact about the API comes from the index. */

import { $, append, fmtCell, h, isObj, label, textOf } from './render.js';

export const API = '/api/v1';
const ONLINE_DAY_PRESETS = [7, 30, 90];   // plus the index's maximum for days (a UI choice)
const TANK_DAYS = [7, 30, 90];   // the period buttons (a UI choice); the first request uses the index's default

export const state = {
  index: null,          // data of GET /api/v1
  // Facts about the API come from the index only: empty until it has loaded (the forms that
  // need them stay disabled until then).
  regions: [],
  games: [],
  demo: { player: null, clan: null },   // from the player and clan endpoints' examples
  tokens: {},           // latest request per view, to drop stale answers
  tanksHash: null,      // the tank table last shown (the tank page's way back)
  tanksQuery: null,     // and its query (a new filter keeps its sort)
  marksHash: null,      // the marks table last shown
  marksQuery: null,     // and its query (a new filter keeps its sort)
  tankFrom: null,       // the list a tank's page was last reached from: 'tanks' or 'marks' (its way back)
  tankNames: {},        // tank_id -> name, of the tanks whose page was shown (the tank rankings' title)
};

// ---------------------------------------------------------------- API access
/** GET path; `fresh` revalidates with the server instead of using the browser's HTTP cache. */
export async function api(path, fresh) {
  const started = performance.now();
  let response;
  try {
    response = await fetch(path, { headers: { Accept: 'application/json' }, cache: fresh ? 'no-cache' : 'default' });
  } catch (err) {
    return { ok: false, status: 0, path, headers: new Headers(),
      error: { code: 'network_error', message: 'The request did not reach the API (' + (err && err.message || err) + ').' } };
  }
  let body = null;
  try { body = await response.json(); } catch (err) { body = null; }
  const result = { status: response.status, headers: response.headers, path, ms: Math.round(performance.now() - started) };
  if (body && body.success === true) {
    result.ok = true;
    result.data = body.data;
    result.meta = body.meta || {};
    if (result.meta.attribution) showAttribution(result.meta.attribution);
  } else if (body && body.error && typeof body.error === 'object') {
    result.ok = false;
    result.error = body.error;
  } else {
    result.ok = false;
    result.error = { code: 'http_' + response.status, message: 'The server answered HTTP ' + response.status + ' without the API envelope.' };
  }
  return result;
}

export function takeToken(view) {
  const token = {};
  state.tokens[view] = token;
  return token;
}
export const current = (view, token) => state.tokens[view] === token;

export function rateLine(result) {
  const limit = result.headers.get('X-RateLimit-Limit');
  const remaining = result.headers.get('X-RateLimit-Remaining');
  const reset = result.headers.get('X-RateLimit-Reset');
  const parts = [h('code', null, 'GET ' + result.path), ` → ${result.status || 'no answer'}`];
  if (result.ms !== undefined) parts.push(` in ${result.ms} ms`);
  if (limit !== null) {
    parts.push(` · ${remaining !== null ? remaining : '?'} of ${limit} requests left this minute`);
    if (reset !== null) parts.push(` (window resets in ${reset} s)`);
  }
  return h('p', { class: 'rate-line' }, parts);
}

export function errorBox(result, retry) {
  const err = result.error || {};
  const box = h('div', { class: 'error', role: 'alert', 'data-code': err.code },
    h('div', { class: 'error-head' },
      h('code', { class: 'error-code' }, String(err.code)),
      h('span', { class: 'error-status' }, result.status ? 'HTTP ' + result.status : 'no HTTP answer')),
    h('p', { class: 'error-message' }, String(err.message || '')));
  const extra = Object.entries(err).filter(([k]) => k !== 'code' && k !== 'message');
  if (extra.length) box.append(h('p', { class: 'error-extra' }, extra.map(([k, v]) => `${label(k)}: ${textOf(fmtCell(v, k, {}))}`).join(' · ')));
  const meaning = state.index && (state.index.errors || []).find((e) => e.code === err.code);
  if (meaning && meaning.meaning && meaning.meaning !== err.message) {
    box.append(h('p', { class: 'error-meaning' }, 'Index: ', meaning.meaning));
  }
  const retryAfter = result.headers.get('Retry-After');
  if (retryAfter !== null && /^\s*\d+\s*$/.test(retryAfter)) {
    box.append(countdown(Number(retryAfter), retry));
  } else if (retry) {
    box.append(h('div', { class: 'actions' }, h('button', { type: 'button', class: 'btn', onclick: retry }, 'Try again')));
  }
  box.append(rateLine(result));
  return box;
}

/** Live countdown from a Retry-After header; the retry button unlocks at zero. */
function countdown(seconds, retry) {
  const deadline = Date.now() + seconds * 1000;
  const value = h('strong', { class: 'countdown-value' }, String(seconds));
  const line = h('p', { class: 'countdown' }, 'Retry-After: the API asks to wait ', value, ' s before trying again.');
  const button = retry ? h('button', { type: 'button', class: 'btn', disabled: true, onclick: retry }, 'Retry') : null;
  const wrap = h('div', { class: 'countdown-box' }, line, button);
  let attached = false;
  const tick = () => {
    if (wrap.isConnected) attached = true;
    else if (attached) { clearInterval(timer); return; }
    const left = Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
    value.textContent = String(left);
    if (left === 0) {
      clearInterval(timer);
      line.replaceChildren('The wait is over: you can retry now.');
      wrap.classList.add('done');
      if (button) button.disabled = false;
    }
  };
  const timer = setInterval(tick, 200);
  return wrap;
}

export function loading(text) {
  return h('div', { class: 'loading' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), text);
}

/** An API error in plain words first (when the code is a known one), then the API's own code and message. */
const PLAIN_ERRORS = {
  no_history: 'Nothing has been recorded for this player yet: the history starts with the first look-up and grows by one snapshot a day.',
  invalid_search: () => {
    const rule = searchRule();
    return `The API did not accept this search: a nickname search is ${rule.min} to ${rule.max} letters, digits or underscores.`;
  },
  no_statistics: 'No tank statistics for this yet: they are built once a day from the tracked accounts’ per-tank records.',
  rate_limited: 'Too many requests from this address for the moment; the API says how long to wait.',
  network_error: 'The API could not be reached; check the connection and try again.',
};

export function explainedError(result, retry, plain) {
  const code = result.error && result.error.code;
  const known = PLAIN_ERRORS[code];
  const text = plain || (typeof known === 'function' ? known() : known)
    || (result.status === 503 ? 'The service or its data source is unavailable for the moment; please try again shortly.' : null);
  const box = errorBox(result, retry);
  if (text) box.insertBefore(h('p', { class: 'error-plain' }, text), box.children[1] || null);
  return box;
}

// ---------------------------------------------------------------- attribution
let attributionShown = null;
function showAttribution(text) {
  if (attributionShown === text) return;
  attributionShown = text;
  $('#attribution-text').replaceChildren(linkify(text));
  $('#attribution').hidden = false;
  $('#footer-attribution').replaceChildren(linkify(text));
}

function linkify(text) {
  const out = [];
  const re = /https?:\/\/[^\s)]+/g;
  let last = 0;
  let m;
  while ((m = re.exec(text))) {
    out.push(text.slice(last, m.index), h('a', { href: m[0] }, m[0]));
    last = m.index + m[0].length;
  }
  out.push(text.slice(last));
  const span = h('span');
  append(span, out);
  return span;
}

// ---------------------------------------------------------------- parameters from the index
// A parameter as the index describes it (bounds, lengths, pattern), or null before it loads.
export function indexParam(endpointName, paramName) {
  const endpoints = state.index && Array.isArray(state.index.endpoints) ? state.index.endpoints : [];
  const endpoint = endpoints.find((e) => e && e.name === endpointName);
  const params = endpoint && Array.isArray(endpoint.parameters) ? endpoint.parameters : [];
  return params.find((p) => p && p.name === paramName) || null;
}

// ---------------------------------------------------------------- CSV downloads
/** What the index says `?format=csv` serves of an endpoint ({rows, columns, media_type}), or null
 * when it lists no CSV for it (or has not loaded). */
export function csvOf(endpointName) {
  const endpoints = state.index && Array.isArray(state.index.endpoints) ? state.index.endpoints : [];
  const endpoint = endpoints.find((e) => e && e.name === endpointName);
  return endpoint && isObj(endpoint.csv) ? endpoint.csv : null;
}

/** The API request a view made (`path`, its query as sent) as CSV: the same filters, sort and page. */
export function csvPath(path) {
  const at = path.indexOf('?');
  const params = new URLSearchParams(at < 0 ? '' : path.slice(at + 1));
  params.set('format', 'csv');
  return (at < 0 ? path : path.slice(0, at)) + '?' + params;
}

/** A "Download CSV" link to what the view fetched (`path`) with format=csv, the server naming the
 * file (Content-Disposition); null when the index lists no CSV for the endpoint. */
export function csvLink(endpointName, path, id, what) {
  const csv = csvOf(endpointName);
  if (!csv || typeof path !== 'string') return null;
  const columns = Array.isArray(csv.columns) ? csv.columns : [];
  return h('p', { class: 'csv-line small' },
    h('a', { class: 'csv-link', id: id || null, href: csvPath(path), download: true, type: csv.media_type || null, 'data-endpoint': endpointName,
      title: columns.length ? `${columns.length} columns: ${columns.join(', ')}` : null }, 'Download CSV'),
    h('span', { class: 'muted' }, ` ${what || 'this table'}, as the API answers it with format=csv (the same filters, sort and page).`));
}

export function onlineDays() {
  const max = (indexParam('online_history', 'days') || {}).maximum;
  if (!Number.isInteger(max)) return ONLINE_DAY_PRESETS;
  return ONLINE_DAY_PRESETS.filter((d) => d < max).concat([max]);
}

// The API's rule for ?search= (else 400 invalid_search), from the index: lengths and pattern.
export function searchRule() {
  const p = indexParam('search', 'search') || {};
  let re = null;
  try { re = p.pattern ? new RegExp(p.pattern) : null; } catch (e) { re = null; }
  return { min: Number.isInteger(p.minLength) ? p.minLength : 1, max: Number.isInteger(p.maxLength) ? p.maxLength : Infinity, re };
}

/** Query parameters of an endpoint's example, e.g. {game: "wot", region: "all", days: "30"}. */
export function exampleQuery(endpointName) {
  const endpoints = state.index && Array.isArray(state.index.endpoints) ? state.index.endpoints : [];
  const endpoint = endpoints.find((e) => e && e.name === endpointName);
  const example = endpoint && typeof endpoint.example === 'string' ? endpoint.example : '';
  const at = example.indexOf('?');
  return at < 0 ? {} : Object.fromEntries(new URLSearchParams(example.slice(at + 1)));
}

// The online form's first values: the online_history example's, else the parameters' defaults
// (empty before the index loads: the API then applies its own defaults).
export function onlineDefaults() {
  const example = exampleQuery('online_history');
  const pick = (name) => {
    const value = example[name] ?? (indexParam('online_history', name) || {}).default;
    return value === undefined || value === null ? '' : String(value);
  };
  return { game: pick('game'), region: pick('region'), days: pick('days') };
}

// The tank table's first period: the tanks endpoint's default for days (null before the index
// loads: the request then leaves days out and the API's default applies).
export function tankDaysDefault() {
  const value = (indexParam('tanks', 'days') || {}).default;
  return Number.isInteger(value) ? value : null;
}

// The tanks page's first values: the tank_stats example's, else the parameters' defaults (empty
// before the index loads: the API then applies its own defaults).
export function tankStatsDefaults() {
  const example = exampleQuery('tank_stats');
  const pick = (name) => {
    const value = example[name] ?? (indexParam('tank_stats', name) || {}).default;
    return value === undefined || value === null ? '' : String(value);
  };
  return { region: pick('region'), days: pick('days'), sort: pick('sort'), order: pick('order') };
}

/** The values a parameter of the tanks endpoints allows (its enum), or [] before the index loads. */
export function paramEnum(endpointName, paramName) {
  const p = indexParam(endpointName, paramName);
  return p && Array.isArray(p.enum) ? p.enum : [];
}

export function tankDayChoices() {
  const def = tankDaysDefault();
  return def === null || TANK_DAYS.includes(def) ? TANK_DAYS : TANK_DAYS.concat([def]).sort((a, b) => a - b);
}
