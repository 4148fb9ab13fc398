/* statsapi site: documentation rendered from the live index, and a live explorer.
 * Plain browser JavaScript, no build step, no framework. Every fact about the API
 * (endpoints, limits, parameters, errors, regions, games) comes from GET /api/v1.
 * All API text is inserted with textContent (never innerHTML). */
'use strict';

(function () {
  const API = '/api/v1';
  const HISTORY_DAYS = 90;
  const ONLINE_DAY_PRESETS = [7, 30, 90];   // plus the index's maximum for days (a UI choice)
  const RATINGS_REFRESH_DELAY = 3;   // seconds before re-fetching a live-fetched profile
  const RATINGS_AUTO_REFRESHES = 4;  // automatic attempts before leaving it to the button
  const SEARCH_DEBOUNCE_MS = 300;
  const TANK_DAYS = [7, 30, 90];   // the period buttons (a UI choice); the first request uses the index's default
  // The usual (XVM) WN8 scale, the same bounds as the API's ratings.wn8_color labels.
  const WN8_SCALE = [[300, 'very_bad'], [450, 'bad'], [650, 'below_average'], [900, 'average'], [1200, 'above_average'],
    [1600, 'good'], [2000, 'very_good'], [2450, 'great'], [2900, 'unicum']];

  const state = {
    index: null,          // data of GET /api/v1
    // Facts about the API come from the index only: empty until it has loaded (the forms that
    // need them stay disabled until then).
    regions: [],
    games: [],
    demo: { player: null, clan: null },   // from the player and clan endpoints' examples
    tokens: {},           // latest request per view, to drop stale answers
  };

  // ---------------------------------------------------------------- DOM helpers
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    setAttrs(el, attrs);
    append(el, children);
    return el;
  }

  function s(tag, attrs, ...children) {
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

  function append(el, children) {
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      el.append(child instanceof Node ? child : String(child));
    }
  }

  const $ = (sel, root) => (root || document).querySelector(sel);
  const muted = (text) => h('span', { class: 'muted' }, text);
  const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
  const isScalar = (v) => v === null || typeof v !== 'object';
  const textOf = (v) => (v instanceof Node ? v.textContent : String(v));

  // ---------------------------------------------------------------- formatting
  const NUM = new Intl.NumberFormat('en', { maximumFractionDigits: 2 });
  const COMPACT = new Intl.NumberFormat('en', { notation: 'compact', maximumFractionDigits: 1 });
  const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;
  const WORDS = {
    wn8: 'WN8', wn7: 'WN7', xp: 'XP', id: 'ID', avg: 'avg.', elo: 'Elo', eu: 'EU', na: 'NA', asia: 'Asia',
    wot: 'WoT', wotb: 'WoT Blitz', wows: 'WoWS', ms: 'ms', s: 's', pct: '%', api: 'API', url: 'URL',
  };

  function label(key) {
    const text = String(key).split(/[_\s]+/).filter(Boolean).map((w) => WORDS[w] || w).join(' ');
    return text ? text.charAt(0).toUpperCase() + text.slice(1) : String(key);
  }

  function pathLabel(path) {
    return path.split('.').map(label).join(' › ');
  }

  function utcText(date) {
    if (Number.isNaN(date.getTime())) return null;
    return date.toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
  }

  function ago(unixSeconds) {
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
  function fmtValue(value, key, ctx) {
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

  function fmtCell(value, key, ctx) {
    if (Array.isArray(value)) return compactArray(value, key, ctx);
    if (isObj(value)) {
      const keys = dropUnixTwins(Object.keys(value));
      if (!keys.length) return muted('—');
      return keys.map((k) => `${label(k)}: ${textOf(fmtCell(value[k], k, ctx))}`).join(', ');
    }
    return fmtValue(value, key, ctx);
  }

  function scroller(table, tall) {
    return h('div', { class: 'table-scroll' + (tall ? ' tall' : '') }, table);
  }

  function kvTable(entries, ctx) {
    return scroller(h('table', { class: 'kv' }, h('tbody', null, entries.map(([key, value]) =>
      h('tr', null, h('th', { scope: 'row' }, label(key)), h('td', null, fmtCell(value, key, ctx)))))));
  }

  function listTable(items, ctx) {
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

  function renderAny(value, ctx, depth) {
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

  // ---------------------------------------------------------------- API access
  /** GET path; `fresh` revalidates with the server instead of using the browser's HTTP cache. */
  async function api(path, fresh) {
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

  function takeToken(view) {
    const token = {};
    state.tokens[view] = token;
    return token;
  }
  const current = (view, token) => state.tokens[view] === token;

  function rateLine(result) {
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

  function errorBox(result, retry) {
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

  function loading(text) {
    return h('div', { class: 'loading' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), text);
  }

  /** An API error in plain words first (when the code is a known one), then the API's own code and message. */
  const PLAIN_ERRORS = {
    no_history: 'Nothing has been recorded for this player yet: the history starts with the first look-up and grows by one snapshot a day.',
    invalid_search: () => {
      const rule = searchRule();
      return `The API did not accept this search: a nickname search is ${rule.min} to ${rule.max} letters, digits or underscores.`;
    },
    rate_limited: 'Too many requests from this address for the moment; the API says how long to wait.',
    network_error: 'The API could not be reached; check the connection and try again.',
  };

  function explainedError(result, retry, plain) {
    const code = result.error && result.error.code;
    const known = PLAIN_ERRORS[code];
    const text = plain || (typeof known === 'function' ? known() : known)
      || (result.status === 503 ? 'The service or its data source is unavailable for the moment; please try again shortly.' : null);
    const box = errorBox(result, retry);
    if (text) box.insertBefore(h('p', { class: 'error-plain' }, text), box.children[1] || null);
    return box;
  }

  // ---------------------------------------------------------------- WN8 colours
  function wn8Label(value) {
    if (typeof value !== 'number' || !Number.isFinite(value)) return null;
    for (const [upper, name] of WN8_SCALE) if (value < upper) return name;
    return 'super_unicum';
  }

  /** A WN8 value coloured by the usual scale (class wn8-<label>, the API's wn8_color labels). */
  function wn8Node(value) {
    const name = wn8Label(value);
    if (!name) return muted('—');
    return h('span', { class: `wn8 wn8num wn8-${name}`, title: `WN8 scale: ${label(name)}`, 'data-wn8': name }, NUM.format(value));
  }

  // ---------------------------------------------------------------- attribution and index
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

  function codeText(text) {
    // `backticks` in descriptions become <code>.
    return String(text).split(/(`[^`]+`)/).map((part) =>
      part.startsWith('`') && part.endsWith('`') && part.length > 1 ? h('code', null, part.slice(1, -1)) : part);
  }

  function pathNode(path) {
    return h('code', { class: 'path' }, String(path).split(/(\{[^}]+\})/).map((part) =>
      /^\{.+\}$/.test(part) ? h('var', null, part) : part));
  }

  const EXPLORER_HASH = {
    player: (p) => p.account_id && p.region && `#player/${p.region}/${p.account_id}`,
    history: (p) => p.account_id && p.region && `#player/${p.region}/${p.account_id}`,
    clan: (p) => p.clan_id && p.region && `#clan/${p.region}/${p.clan_id}`,
    weekly: (p) => p.clan_id && p.region && `#clan/${p.region}/${p.clan_id}`,
    online: () => '#online',
    online_history: () => '#online',
    status: () => '#status',
  };

  /** Path parameters of an endpoint's example, e.g. {account_id: "500000001", region: "eu"}. */
  function exampleParams(endpoint) {
    if (!endpoint.example || !endpoint.path) return {};
    const names = [];
    const pattern = '^' + endpoint.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&')
      .replace(/\{([^}]+)\}/g, (_, name) => { names.push(name); return '([^/?]+)'; }) + '(?:\\?|$)';
    const m = new RegExp(pattern).exec(endpoint.example);
    const out = {};
    if (m) names.forEach((name, i) => { out[name] = decodeURIComponent(m[i + 1]); });
    return out;
  }

  function paramConstraint(p) {
    const parts = [];
    if (Array.isArray(p.enum)) parts.push(p.enum.join(', '));
    const huge = typeof p.maximum === 'number' && p.maximum > Number.MAX_SAFE_INTEGER;   // e.g. 2^63 − 1
    if (huge) parts.push(p.minimum !== undefined ? `≥ ${p.minimum} (64-bit integer)` : '64-bit integer');
    else if (p.minimum !== undefined && p.maximum !== undefined) parts.push(`${p.minimum}–${p.maximum}`);
    else if (p.minimum !== undefined) parts.push(`≥ ${p.minimum}`);
    else if (p.maximum !== undefined) parts.push(`≤ ${p.maximum}`);
    return parts.length ? parts.join('; ') : muted('—');
  }

  const KNOWN_ENDPOINT_KEYS = new Set(['name', 'method', 'path', 'parameters', 'rate_limit_per_minute', 'cache_max_age', 'example', 'description']);

  function renderEndpoint(e) {
    const params = Array.isArray(e.parameters) ? e.parameters : [];
    const hash = EXPLORER_HASH[e.name] && EXPLORER_HASH[e.name](exampleParams(e));
    const meta = [
      h('dt', null, 'Rate limit'),
      h('dd', null, e.rate_limit_per_minute !== undefined ? `${e.rate_limit_per_minute} requests per minute per client IP` : muted('not stated')),
      h('dt', null, 'Cache'),
      h('dd', null, e.cache_max_age !== undefined ? h('span', null, h('code', null, `Cache-Control: public, max-age=${e.cache_max_age}`)) : muted('not stated')),
    ];
    const described = [];   // objects of text (e.g. response fields → meaning) get their own table
    for (const [key, value] of Object.entries(e)) {
      if (KNOWN_ENDPOINT_KEYS.has(key)) continue;
      if (isObj(value) && Object.keys(value).length && Object.values(value).every((v) => typeof v === 'string')) {
        described.push([key, value]);
        continue;
      }
      meta.push(h('dt', null, label(key)), h('dd', null, fmtCell(value, key, {})));
    }
    return h('article', { class: 'endpoint', id: 'endpoint-' + e.name, 'data-name': e.name },
      h('header', { class: 'endpoint-head' },
        h('span', { class: 'method' }, e.method || 'GET'),
        pathNode(e.path),
        h('span', { class: 'limit', title: 'requests per minute per client IP' },
          h('span', { class: 'limit-value' }, String(e.rate_limit_per_minute ?? '?')), ' / min')),
      e.description ? h('p', { class: 'endpoint-desc' }, codeText(e.description)) : null,
      h('dl', { class: 'endpoint-meta' }, meta),
      params.length ? scroller(h('table', { class: 'grid params' },
        h('thead', null, h('tr', null, ['Parameter', 'In', 'Type', 'Allowed', 'Default', 'Required'].map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', null, params.map((p) => h('tr', null,
          h('td', null, h('code', null, p.name)), h('td', null, p.in || ''), h('td', null, p.type || ''),
          h('td', null, paramConstraint(p)),
          h('td', null, p.default !== undefined ? h('code', null, String(p.default)) : muted('—')),
          h('td', null, p.required ? 'yes' : 'no')))))) : null,
      described.map(([key, value]) => h('details', { class: 'more fields' },
        h('summary', null, `${key === 'fields' ? 'Response fields' : label(key)} (${Object.keys(value).length})`),
        scroller(h('table', { class: 'grid' }, h('tbody', null, Object.entries(value).map(([name, text]) =>
          h('tr', null, h('th', { scope: 'row' }, h('code', null, name)), h('td', null, codeText(text))))))))),
      h('p', { class: 'endpoint-links' },
        e.example ? h('span', null, 'Example: ', h('a', { href: e.example, class: 'example' }, h('code', null, e.example))) : null,
        hash ? h('a', { href: hash, class: 'try' }, 'Open in the explorer →') : null));
  }

  function renderIndex(index) {
    $('#title').textContent = index.name || 'statsapi';
    $('#brand').textContent = index.name || 'statsapi';
    $('#intro-description').replaceChildren(...codeText(index.description || ''));
    const facts = [];
    const fact = (term, ...desc) => facts.push(h('div', null, h('dt', null, term), h('dd', null, desc)));
    fact('Base URL', h('code', null, location.origin + API));
    if (index.version) fact('Version', h('code', null, index.version));
    if (Array.isArray(index.methods)) fact('Methods', index.methods.join(', '));
    if (Array.isArray(index.regions)) fact('Regions', index.regions.join(', '));
    if (Array.isArray(index.games)) fact('Games', index.games.join(', '));
    if (index.openapi) {
      fact('OpenAPI', h('a', { href: index.openapi }, h('code', null, index.openapi)));
      $('#footer-openapi').setAttribute('href', index.openapi);
    }
    $('#intro-facts').replaceChildren(...facts);

    const policy = index.rate_limits;
    $('#rate-policy').replaceChildren(isObj(policy)
      ? h('div', { class: 'policy' }, h('h3', null, 'How limits work'), renderAny(policy, { key: 'rate_limits' }, 1))
      : '');
    const endpoints = Array.isArray(index.endpoints) ? index.endpoints : [];
    $('#endpoint-list').replaceChildren(...endpoints.map(renderEndpoint));

    const errors = Array.isArray(index.errors) ? index.errors : [];
    $('#error-list').replaceChildren(scroller(h('table', { class: 'grid errors-table' },
      h('thead', null, h('tr', null, ['HTTP status', 'error.code', 'Meaning'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', null, errors.map((e) => h('tr', { 'data-code': e.code },
        h('td', { class: 'num' }, String(e.status)), h('td', null, h('code', null, e.code)), h('td', null, e.meaning || '')))))));

    if (Array.isArray(index.regions) && index.regions.length) state.regions = index.regions.slice();
    if (Array.isArray(index.games) && index.games.length) state.games = index.games.slice();
    const byName = Object.fromEntries(endpoints.map((e) => [e.name, e]));
    if (byName.player) {
      const p = exampleParams(byName.player);
      if (p.account_id && p.region) state.demo.player = { region: p.region, id: p.account_id };
    }
    if (byName.clan) {
      const p = exampleParams(byName.clan);
      if (p.clan_id && p.region) state.demo.clan = { region: p.region, id: p.clan_id };
    }
  }

  async function loadIndex() {
    const result = await api(API);
    if (result.ok && isObj(result.data)) {
      state.index = result.data;
      renderIndex(result.data);
      $('#index-status').replaceChildren();
    } else {
      const box = errorBox(result, () => { $('#index-status').replaceChildren(loading('Loading the index…')); loadIndex().then(fillForms); });
      $('#index-status').replaceChildren(h('p', null, 'The endpoint list could not be loaded from the index:'), box);
      $('#endpoint-list').replaceChildren(muted('Not available: the index did not answer.'));
    }
  }

  // ---------------------------------------------------------------- forms
  function setOptions(select, values, labels) {
    const keep = select.value;
    select.replaceChildren(...values.map((v) => h('option', { value: v }, labels ? labels(v) : v)));
    if (values.map(String).includes(keep)) select.value = keep;
  }

  function ensureOption(select, value) {
    if (value && ![...select.options].some((o) => o.value === value)) select.append(h('option', { value }, value));
    select.value = value;
  }

  // A parameter as the index describes it (bounds, lengths, pattern), or null before it loads.
  function indexParam(endpointName, paramName) {
    const endpoints = state.index && Array.isArray(state.index.endpoints) ? state.index.endpoints : [];
    const endpoint = endpoints.find((e) => e && e.name === endpointName);
    const params = endpoint && Array.isArray(endpoint.parameters) ? endpoint.parameters : [];
    return params.find((p) => p && p.name === paramName) || null;
  }

  function onlineDays() {
    const max = (indexParam('online_history', 'days') || {}).maximum;
    if (!Number.isInteger(max)) return ONLINE_DAY_PRESETS;
    return ONLINE_DAY_PRESETS.filter((d) => d < max).concat([max]);
  }

  // The API's rule for ?search= (else 400 invalid_search), from the index: lengths and pattern.
  function searchRule() {
    const p = indexParam('search', 'search') || {};
    let re = null;
    try { re = p.pattern ? new RegExp(p.pattern) : null; } catch (e) { re = null; }
    return { min: Number.isInteger(p.minLength) ? p.minLength : 1, max: Number.isInteger(p.maxLength) ? p.maxLength : Infinity, re };
  }

  /** Query parameters of an endpoint's example, e.g. {game: "wot", region: "all", days: "30"}. */
  function exampleQuery(endpointName) {
    const endpoints = state.index && Array.isArray(state.index.endpoints) ? state.index.endpoints : [];
    const endpoint = endpoints.find((e) => e && e.name === endpointName);
    const example = endpoint && typeof endpoint.example === 'string' ? endpoint.example : '';
    const at = example.indexOf('?');
    return at < 0 ? {} : Object.fromEntries(new URLSearchParams(example.slice(at + 1)));
  }

  // The online form's first values: the online_history example's, else the parameters' defaults
  // (empty before the index loads: the API then applies its own defaults).
  function onlineDefaults() {
    const example = exampleQuery('online_history');
    const pick = (name) => {
      const value = example[name] ?? (indexParam('online_history', name) || {}).default;
      return value === undefined || value === null ? '' : String(value);
    };
    return { game: pick('game'), region: pick('region'), days: pick('days') };
  }

  // The tank table's first period: the tanks endpoint's default for days (null before the index
  // loads: the request then leaves days out and the API's default applies).
  function tankDaysDefault() {
    const value = (indexParam('tanks', 'days') || {}).default;
    return Number.isInteger(value) ? value : null;
  }

  function tankDayChoices() {
    const def = tankDaysDefault();
    return def === null || TANK_DAYS.includes(def) ? TANK_DAYS : TANK_DAYS.concat([def]).sort((a, b) => a - b);
  }

  function fillForms() {
    document.querySelectorAll('select[data-options]').forEach((select) => {
      const kind = select.dataset.options;
      if (kind === 'regions') setOptions(select, state.regions, (v) => label(v));
      else if (kind === 'regions-any') setOptions(select, [''].concat(state.regions), (v) => (v === '' ? 'Any region' : label(v)));
      else if (kind === 'regions-all') {
        // The online region's extra value (`all`) is the one its enum adds to the regions.
        const extra = ((indexParam('online_history', 'region') || {}).enum || []).filter((v) => !state.regions.includes(v));
        setOptions(select, state.regions.length ? extra.concat(state.regions) : [], (v) => (state.regions.includes(v) ? label(v) : `${label(v)} regions`));
      }
      else if (kind === 'games') setOptions(select, state.games, (v) => `${label(v)} (${v})`);
      else if (kind === 'days') setOptions(select, onlineDays().map(String), (v) => `${v} days`);
    });
    const fp = $('#form-player');
    const demoPlayer = state.demo.player;
    if (!fp.elements.id.value && demoPlayer) { fp.elements.id.value = demoPlayer.id; fp.elements.region.value = demoPlayer.region; }
    const fc = $('#form-clan');
    const demoClan = state.demo.clan;
    if (!fc.elements.id.value && demoClan) { fc.elements.id.value = demoClan.id; fc.elements.region.value = demoClan.region; }
    const fo = $('#form-online');
    if (!fo.dataset.touched) {
      const d = onlineDefaults();
      for (const name of ['game', 'region', 'days']) if (d[name]) fo.elements[name].value = d[name];
    }
    // A form whose choices have not arrived yet (the index) cannot be sent.
    for (const form of [fp, fc, fo]) {
      const empty = [...form.querySelectorAll('select')].some((select) => !select.options.length);
      form.querySelectorAll('button[type=submit], button:not([type])').forEach((b) => { b.disabled = empty; });
    }
    const demoLink = (hash, text) => h('a', { href: hash }, text);
    $('#hint-player').replaceChildren(...(demoPlayer ? ['Demo: ', demoLink(`#player/${demoPlayer.region}/${demoPlayer.id}`,
      `player ${demoPlayer.id} (${label(demoPlayer.region)})`), '. '] : []),
    'A profile that is not cached yet is fetched live; its ratings follow a few seconds later.');
    $('#hint-clan').replaceChildren(...(demoClan ? ['Demo: ', demoLink(`#clan/${demoClan.region}/${demoClan.id}`,
      `clan ${demoClan.id} (${label(demoClan.region)})`), '. '] : []), 'Clans are served from the cache only.');
  }

  function go(hash) {
    if (location.hash === hash) route();
    else location.hash = hash;
  }

  function bindForms() {
    $('#form-player').addEventListener('submit', (ev) => {
      ev.preventDefault();
      const f = ev.target.elements;
      go(`#player/${encodeURIComponent(f.region.value)}/${encodeURIComponent(f.id.value.trim())}`);
    });
    $('#form-clan').addEventListener('submit', (ev) => {
      ev.preventDefault();
      const f = ev.target.elements;
      go(`#clan/${encodeURIComponent(f.region.value)}/${encodeURIComponent(f.id.value.trim())}`);
    });
    $('#form-online').addEventListener('submit', (ev) => {
      ev.preventDefault();
      ev.target.dataset.touched = '1';
      const f = ev.target.elements;
      go(`#online/${encodeURIComponent(f.game.value)}/${encodeURIComponent(f.region.value)}/${encodeURIComponent(f.days.value)}`);
    });
    $('#attribution-copy').addEventListener('click', async (ev) => {
      const text = $('#attribution-text').textContent;
      try {
        await navigator.clipboard.writeText(text);
        ev.target.textContent = 'Copied';
      } catch (err) {
        const range = document.createRange();
        range.selectNodeContents($('#attribution-text'));
        const sel = window.getSelection();
        sel.removeAllRanges();
        sel.addRange(range);
        ev.target.textContent = 'Selected: press Ctrl+C';
      }
      setTimeout(() => { ev.target.textContent = 'Copy'; }, 2500);
    });
  }

  // ---------------------------------------------------------------- charts (inline SVG)
  function niceTicks(lo, hi, count) {
    const span = hi - lo || 1;
    const raw = span / count;
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const err = raw / mag;
    const step = (err >= 7.5 ? 10 : err >= 3.5 ? 5 : err >= 1.5 ? 2 : 1) * mag;
    const start = Math.floor(lo / step) * step;
    const ticks = [];
    for (let v = start; v <= hi + step * 0.5; v += step) ticks.push(Number(v.toPrecision(12)));
    if (ticks.length < 2) ticks.push(Number((start + step).toPrecision(12)));
    return ticks;
  }

  function shortDate(iso) {
    const d = new Date(iso + 'T00:00:00Z');
    if (Number.isNaN(d.getTime())) return iso;
    return d.toLocaleDateString('en', { month: 'short', day: 'numeric', timeZone: 'UTC' });
  }

  /**
   * spec: {labels: ['YYYY-MM-DD', ...], series: [{name, cls, values: [number|null], join: 'gap'|'connect'|'sparse',
   *        dots, titles, hover}], zero: bool, format: fn, empty: text, title: text}
   * 'gap' breaks the line at nulls; 'connect' joins the measured points; 'sparse' has a point
   * only where a value is given (undefined: no point that day) and breaks the line at nulls.
   * A point with no neighbour is drawn as a dot; `dots` draws every point; `titles[i]` replaces
   * a point's tooltip; `hover[i]` is the value the hover box shows for day i.
   */
  function drawChart(container, spec) {
    container._chart = spec;
    container.classList.add('chart');
    const values = spec.series.flatMap((sr) => sr.values).filter((v) => typeof v === 'number' && Number.isFinite(v));
    if (!values.length) {
      container.replaceChildren(h('p', { class: 'chart-empty muted' }, spec.empty || 'Nothing to draw for this period.'));
      return;
    }
    const W = Math.max(260, Math.floor(container.clientWidth || 640));
    const H = W < 520 ? 200 : 250;
    const m = { l: 52, r: 14, t: 12, b: 28 };
    const n = spec.labels.length;
    const fmt = spec.format || ((v) => NUM.format(v));
    let lo = Math.min(...values);
    let hi = Math.max(...values);
    if (spec.zero) lo = Math.min(0, lo);
    if (lo === hi) {
      const pad = Math.abs(hi) * 0.1 || 1;
      lo = spec.zero && lo >= 0 ? Math.max(0, lo - pad) : lo - pad;
      hi += pad;
    }
    let ticks = niceTicks(lo, hi, W < 520 ? 4 : 5);
    if (spec.integer && ticks[1] - ticks[0] < 1) ticks = niceTicks(lo, Math.max(hi, lo + 1), Math.max(1, Math.ceil(hi - lo)));
    lo = ticks[0];
    hi = ticks[ticks.length - 1];
    const plotW = W - m.l - m.r;
    const plotH = H - m.t - m.b;
    const x = (i) => m.l + (n <= 1 ? plotW / 2 : (i * plotW) / (n - 1));
    const y = (v) => m.t + ((hi - v) / (hi - lo)) * plotH;

    const svg = s('svg', { class: 'chart-svg', width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: 'img',
      'aria-label': spec.title || spec.series.map((sr) => sr.name).join(', ') });
    const grid = s('g', { class: 'grid-lines' });
    for (const t of ticks) {
      grid.append(s('line', { x1: m.l, x2: W - m.r, y1: y(t), y2: y(t) }));
      grid.append(s('text', { x: m.l - 6, y: y(t), class: 'y-label', 'text-anchor': 'end', 'dominant-baseline': 'middle' }, COMPACT.format(t)));
    }
    svg.append(grid);
    const xlabels = s('g', { class: 'x-labels' });
    // Evenly spaced day labels, counted back from the newest day so it is always labelled.
    const maxLabels = Math.max(2, Math.floor(plotW / 78));
    const step = Math.max(1, Math.ceil((n - 1) / (maxLabels - 1)));
    for (let i = n - 1; i >= 0; i -= step) {
      const anchor = n === 1 ? 'middle' : i === n - 1 ? 'end' : x(i) - m.l < 30 ? 'start' : 'middle';
      xlabels.append(s('text', { x: x(i), y: H - 8, 'text-anchor': anchor }, shortDate(spec.labels[i])));
    }
    svg.append(xlabels);

    const few = n <= 45;
    spec.series.forEach((sr) => {
      const g = s('g', { class: 'series ' + (sr.cls || '') });
      const segments = [];
      let seg = [];
      sr.values.forEach((v, i) => {
        if (typeof v === 'number' && Number.isFinite(v)) seg.push([i, v]);
        else if (sr.join === 'sparse' && v === undefined) return;
        else if ((sr.join === 'gap' || sr.join === 'sparse') && seg.length) { segments.push(seg); seg = []; }
      });
      if (seg.length) segments.push(seg);
      for (const part of segments) {
        if (part.length > 1) {
          const d = part.map(([i, v], k) => `${k ? 'L' : 'M'}${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
          g.append(s('path', { d, class: 'line' }));
        }
        for (const [i, v] of part) {
          if (part.length === 1 || few || sr.dots) {
            g.append(s('circle', { cx: x(i), cy: y(v), r: part.length === 1 ? 4 : sr.dots ? 3 : 2.5, class: part.length === 1 ? 'dot lone' : 'dot',
              'data-date': spec.labels[i], 'data-value': v },
            s('title', null, (sr.titles && sr.titles[i]) || `${spec.labels[i]}: ${sr.name} ${fmt(v)}`)));
          }
        }
      }
      svg.append(g);
    });

    // Hover: a guide line and a tooltip with every series' value for the nearest day.
    const guide = s('line', { class: 'guide', y1: m.t, y2: m.t + plotH, x1: 0, x2: 0, visibility: 'hidden' });
    svg.append(guide);
    const tip = h('div', { class: 'chart-tip', hidden: true });
    const overlay = s('rect', { x: m.l, y: m.t, width: plotW, height: plotH, class: 'overlay' });
    const hide = () => { tip.hidden = true; guide.setAttribute('visibility', 'hidden'); };
    overlay.addEventListener('pointermove', (ev) => {
      const rect = svg.getBoundingClientRect();
      const px = ev.clientX - rect.left;
      const i = n <= 1 ? 0 : Math.max(0, Math.min(n - 1, Math.round(((px - m.l) / plotW) * (n - 1))));
      guide.setAttribute('x1', x(i));
      guide.setAttribute('x2', x(i));
      guide.setAttribute('visibility', 'visible');
      tip.replaceChildren(h('strong', null, spec.labels[i]), ...spec.series.map((sr) => {
        const v = sr.hover ? sr.hover[i] : sr.values[i];
        return h('div', null, h('span', { class: 'swatch ' + (sr.cls || '') }), `${sr.name}: `, typeof v === 'number' ? fmt(v) : 'no data');
      }));
      tip.hidden = false;
      const left = Math.min(Math.max(x(i) + 10, 0), W - 170);
      tip.style.left = (x(i) > W / 2 ? Math.max(0, x(i) - 180) : left) + 'px';
      tip.style.top = m.t + 'px';
    });
    overlay.addEventListener('pointerleave', hide);
    svg.append(overlay);

    const legend = spec.series.length > 1 || spec.legend
      ? h('div', { class: 'legend' }, spec.series.map((sr) => h('span', null, h('span', { class: 'swatch ' + (sr.cls || '') }), sr.name)))
      : null;
    container.replaceChildren(svg, tip, legend || '');
  }

  let resizeTimer = null;
  window.addEventListener('resize', () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
      document.querySelectorAll('.chart').forEach((c) => { if (c._chart && c.isConnected) drawChart(c, c._chart); });
    }, 150);
  });

  function dayRange(first, last) {
    const out = [];
    const start = new Date(first + 'T00:00:00Z');
    const end = new Date(last + 'T00:00:00Z');
    if (Number.isNaN(start.getTime()) || Number.isNaN(end.getTime())) return out;
    for (let d = start; d <= end && out.length < 1000; d = new Date(d.getTime() + 86400000)) out.push(d.toISOString().slice(0, 10));
    return out;
  }

  // ---------------------------------------------------------------- player view
  const STAT_ORDER = ['battles', 'wins', 'losses', 'draws', 'win_rate', 'avg_damage', 'avg_frags', 'avg_spotted', 'avg_xp',
    'avg_defence', 'avg_capture', 'survival_rate', 'hit_rate', 'average_tier'];

  function ratingTile(name, value, extraClass, note) {
    return h('div', { class: 'tile rating ' + (extraClass || '') },
      h('span', { class: 'tile-label' }, name),
      h('span', { class: 'tile-value' }, typeof value === 'number' ? NUM.format(value) : '—'),
      note ? h('span', { class: 'tile-note' }, note) : null);
  }

  function renderProfile(data, region, onRefresh) {
    const ratings = isObj(data.ratings) ? data.ratings : {};
    const stats = isObj(data.statistics) ? data.statistics : {};
    const r = data.region || region;
    const ctx = { region: r };
    const sub = [h('span', null, `Account ${data.account_id ?? ''}`), h('span', null, label(r))];
    if (data.clan_id) sub.push(h('a', { href: `#clan/${r}/${data.clan_id}` }, `Clan ${data.clan_id}`));
    if (typeof data.cached_at === 'number') sub.push(h('span', { title: utcText(new Date(data.cached_at * 1000)) }, `cached ${ago(data.cached_at)}`));
    if (typeof data.last_battle_time === 'number') sub.push(h('span', { title: utcText(new Date(data.last_battle_time * 1000)) }, `last battle ${ago(data.last_battle_time)}`));
    if (data.live_fetched) sub.push(h('span', { class: 'badge' }, 'fetched live'));

    const colour = ratings.wn8_color ? String(ratings.wn8_color) : null;
    const tiles = h('div', { class: 'tiles ratings' },
      ratingTile('WN8', ratings.wn8, 'wn8' + (colour ? ' wn8-' + colour : ''), colour ? label(colour) : null),
      ratingTile('WN7', ratings.wn7),
      ratingTile('Efficiency', ratings.efficiency));

    const parts = [h('div', { class: 'profile-head' }, h('h3', { class: 'player-name' }, data.nickname || `Account ${data.account_id}`),
      h('p', { class: 'subline' }, sub.map((node, i) => [i ? ' · ' : '', node]))), tiles];

    if (ratings.available === false) {
      const note = h('div', { class: 'notice', id: 'ratings-pending' },
        h('p', null, h('strong', null, 'Ratings not available yet. '),
          data.live_fetched ? 'This profile was not cached, so it was fetched live just now; ' : '',
          'WN8, WN7 and efficiency are calculated in the background and follow a few seconds later.'));
      const status = h('p', { class: 'refresh-status' });
      const button = h('button', { type: 'button', class: 'btn', id: 'ratings-refresh' }, 'Refresh');
      button.addEventListener('click', () => onRefresh(status, button));
      note.append(h('div', { class: 'actions' }, button, status));
      parts.push(note);
    } else if (ratings.calculated_at || ratings.expected_values_version) {
      const bits = [];
      if (typeof ratings.calculated_at === 'number') bits.push(`calculated ${utcText(new Date(ratings.calculated_at * 1000))}`);
      if (ratings.expected_values_version) bits.push(`expected values ${ratings.expected_values_version}`);
      parts.push(h('p', { class: 'muted small' }, 'Ratings ' + bits.join(', ')));
    }

    const statKeys = Object.keys(stats).sort((a, b) => {
      const ia = STAT_ORDER.indexOf(a); const ib = STAT_ORDER.indexOf(b);
      return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib);
    });
    if (statKeys.length) {
      parts.push(h('h4', null, 'Statistics'), h('div', { class: 'statgrid' }, statKeys.map((k) =>
        h('div', { class: 'stat' }, h('span', { class: 'stat-label' }, label(k)), h('span', { class: 'stat-value' }, fmtCell(stats[k], k, ctx))))));
    }
    const handled = new Set(['account_id', 'region', 'nickname', 'clan_id', 'statistics', 'ratings', 'cached_at', 'live_fetched']);
    const rest = Object.entries(data).filter(([k]) => !handled.has(k));
    const ratingRest = Object.entries(ratings).filter(([k]) => !['available', 'wn8', 'wn7', 'efficiency', 'wn8_color', 'calculated_at', 'expected_values_version'].includes(k));
    if (rest.length || ratingRest.length) {
      parts.push(h('details', { class: 'more' }, h('summary', null, 'More fields'),
        renderAny(Object.fromEntries(rest.concat(ratingRest.map(([k, v]) => ['ratings_' + k, v]))), ctx, 1)));
    }
    return h('div', { class: 'profile' }, parts);
  }

  const METRICS = [
    { id: 'battles_per_day', name: 'Battles per day', zero: true, integer: true },
    { id: 'wn8', name: 'WN8' },
    { id: 'win_rate', name: 'Win rate', format: (v) => NUM.format(v) + ' %' },
    { id: 'avg_damage', name: 'Avg. damage' },
    { id: 'battles', name: 'Battles (total)' },
    { id: 'period_wn8', name: 'Period WN8' },
  ];

  // The recent periods: the history's deltas 7d / 30d / 90d carry `period` (the figures of
  // the battles played in them); deltas.recent_1000 is such a figures object itself.
  const RECENTS = [
    { key: '7d', name: '7 days', cls: 's-p7' },
    { key: '30d', name: '30 days', cls: 's-p30' },
    { key: '90d', name: '90 days', cls: 's-p90' },
    { key: 'recent_1000', name: 'Last 1,000 battles', cls: 's-p1000' },
  ];

  function periodFigures(deltas, key) {
    if (!isObj(deltas) || !isObj(deltas[key])) return null;
    if (key === 'recent_1000') return deltas[key];
    return isObj(deltas[key].period) ? deltas[key].period : null;
  }

  function rangeText(from, to) {
    if (!from && !to) return null;
    return `${from ? shortDate(from) : '?'} → ${to ? shortDate(to) : '?'}`;
  }

  function renderRecents(deltas) {
    const cards = RECENTS.map((p) => {
      const f = periodFigures(deltas, p.key);
      const titleId = `recent-title-${p.key}`;
      const card = h('section', { class: 'recent', 'data-period': p.key, 'aria-labelledby': titleId },
        h('h5', { class: 'recent-title', id: titleId }, p.name));
      if (!f) {
        card.classList.add('empty');
        const why = p.key === 'recent_1000'
          ? 'Needs per-tank records reaching 1,000 battles back.'
          : isObj(deltas && deltas[p.key]) ? 'No per-tank records for this period.' : 'No daily snapshot that old.';
        card.append(h('p', { class: 'recent-empty' }, 'Not enough data yet'), h('p', { class: 'muted small' }, why));
        return card;
      }
      const range = rangeText(f.from, f.to);
      if (range) card.append(h('p', { class: 'recent-range muted small', title: `${f.from ?? '?'} → ${f.to ?? '?'}` }, range));
      if (!f.battles) {
        card.classList.add('empty');
        card.append(h('p', { class: 'recent-empty' }, 'No battles in this period'));
        return card;
      }
      const row = (field, name, value) => h('div', { class: 'fig', 'data-field': field }, h('dt', null, name), h('dd', null, value));
      card.append(h('dl', { class: 'recent-figures' },
        row('battles', 'Battles', fmtValue(f.battles, 'battles')),
        row('win_rate', 'Win rate', fmtValue(f.win_rate, 'win_rate')),
        row('avg_damage', 'Avg. damage', fmtValue(f.avg_damage, 'avg_damage')),
        row('wn8', 'WN8', wn8Node(f.wn8)),
        row('wn7', 'WN7', fmtValue(f.wn7, 'wn7')),
        row('efficiency', 'EFF', fmtValue(f.efficiency, 'efficiency'))));
      return card;
    });
    return h('div', { class: 'recents-wrap' },
      h('h4', null, 'Recent performance'),
      h('p', { class: 'muted small' }, 'Figures of the battles played in each period only (not career totals). WN8 is coloured by the usual scale.'),
      h('div', { class: 'recents' }, cards));
  }

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

  /** Sorted copy; missing values always last, ties in the API's order. */
  function sortTanks(tanks, sort) {
    const col = TANK_COLUMNS.find((c) => c.key === sort.key) || TANK_COLUMNS[3];
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

  function tankCell(col, tank) {
    const v = col.get(tank);
    if (col.key === 'name') {
      const nation = tank.nation ? h('span', { class: 'muted small tank-nation' }, ` ${label(tank.nation)}`) : null;
      return h('th', { scope: 'row', class: 'tank-name' }, v === null ? `Tank ${tank.tank_id}` : String(v), nation);
    }
    if (col.wn8) return h('td', { class: 'num', 'data-col': col.key }, wn8Node(v));
    if (col.text) return h('td', { 'data-col': col.key }, v === null ? muted('—') : String(v));
    return h('td', { class: 'num', 'data-col': col.key }, fmtValue(v, col.field || col.key));
  }

  function renderTankTable(tanks, sort, onSort) {
    const sorted = sortTanks(tanks, sort);
    const head = TANK_COLUMNS.map((col) => {
      const active = col.key === sort.key;
      const arrow = active ? (sort.dir > 0 ? '▲' : '▼') : '';
      return h('th', { scope: 'col', 'data-sort': col.key, 'aria-sort': active ? (sort.dir > 0 ? 'ascending' : 'descending') : null },
        h('button', { type: 'button', class: 'sort', 'data-sort': col.key, onclick: () => onSort(col) },
          col.name, h('span', { class: 'sort-arrow', 'aria-hidden': 'true' }, arrow)));
    });
    return scroller(h('table', { class: 'grid tanks', id: 'tank-table' },
      h('caption', { class: 'sr-only' }, 'Tanks: figures of the selected period, and career totals. Click a column header to sort.'),
      h('thead', null, h('tr', null, head)),
      h('tbody', null, sorted.map((tank) => h('tr', { 'data-tank-id': tank.tank_id }, TANK_COLUMNS.map((col) => tankCell(col, tank)))))),
    sorted.length > 12);
  }

  function renderTanks(data, days, sort) {
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
    const holder = h('div', { class: 'tank-table-holder' });
    const draw = () => holder.replaceChildren(renderTankTable(tanks, sort, (col) => {
      if (sort.key === col.key) sort.dir = -sort.dir;
      else { sort.key = col.key; sort.dir = col.text ? 1 : -1; }
      draw();
      const btn = holder.querySelector(`button.sort[data-sort="${col.key}"]`);
      if (btn) btn.focus();
    }));
    draw();
    box.append(holder);
    if (data.expected_values_version) box.append(h('p', { class: 'muted small' }, `WN8 with expected values ${data.expected_values_version}.`));
    return box;
  }

  function metricValues(metric, labels, snapshots) {
    const byDate = new Map(snapshots.map((sn) => [sn.date, sn]));
    if (metric.id === 'battles_per_day') {
      const values = labels.map(() => null);
      const pos = new Map(labels.map((d, i) => [d, i]));
      for (let k = 1; k < snapshots.length; k++) {
        const a = snapshots[k - 1]; const b = snapshots[k];
        if (typeof a.battles === 'number' && typeof b.battles === 'number' && pos.has(b.date)) values[pos.get(b.date)] = b.battles - a.battles;
      }
      return values;
    }
    return labels.map((d) => {
      const sn = byDate.get(d);
      return sn && typeof sn[metric.id] === 'number' ? sn[metric.id] : null;
    });
  }

  function renderDeltas(deltas, ctx) {
    // recent_1000 and each delta's `period` are the recents panel's; this table shows the changes.
    const periods = Object.keys(deltas).filter((p) => p !== 'recent_1000');
    const rows = [];
    for (const p of periods) if (isObj(deltas[p])) for (const k of Object.keys(deltas[p])) if (!rows.includes(k) && !['from', 'to', 'period'].includes(k)) rows.push(k);
    const hasRange = periods.some((p) => isObj(deltas[p]) && (deltas[p].from || deltas[p].to));
    const periodLabel = (p) => (/^\d+d$/.test(p) ? `${p.slice(0, -1)} days` : label(p));
    return scroller(h('table', { class: 'grid deltas' },
      h('thead', null, h('tr', null, h('th', null, ''), periods.map((p) => h('th', { scope: 'col' }, periodLabel(p))))),
      h('tbody', null,
        hasRange ? h('tr', null, h('th', { scope: 'row' }, 'Period'), periods.map((p) => h('td', null,
          isObj(deltas[p]) ? h('span', { title: `${deltas[p].from ?? '?'} → ${deltas[p].to ?? '?'}` },
            `${deltas[p].from ? shortDate(deltas[p].from) : '?'} → ${deltas[p].to ? shortDate(deltas[p].to) : '?'}`)
            : muted('no snapshot that old')))) : null,
        rows.map((k) => h('tr', null, h('th', { scope: 'row' }, label(k)), periods.map((p) =>
          h('td', { class: 'num' }, isObj(deltas[p]) ? fmtCell(deltas[p][k], k, ctx) : muted('—'))))))));
  }

  function addDays(iso, n) {
    const d = new Date(iso + 'T00:00:00Z');
    return Number.isNaN(d.getTime()) ? null : new Date(d.getTime() + n * 86400000).toISOString().slice(0, 10);
  }

  /**
   * The history's `weekly` (7-day weeks, oldest first, each the figures of the battles played in
   * it; null before the per-tank records begin) as a sparse series on the daily axis: each week's
   * WN8 on the day it ends, the line broken at a week without battles. Null without `weekly`.
   */
  function weeklyWn8Series(labels, weekly) {
    if (!Array.isArray(weekly) || !labels.length) return null;
    const known = weekly.findIndex((w) => isObj(w) && w.to);
    if (known < 0) return null;
    const at = Object.fromEntries(labels.map((d, i) => [d, i]));
    const values = labels.map(() => undefined);
    const hover = labels.map(() => null);
    const titles = labels.map(() => null);
    let points = 0;
    weekly.forEach((w, k) => {
      const to = isObj(w) && w.to ? w.to : addDays(weekly[known].to, 7 * (k - known));   // a null week's end
      const i = at[to];
      const wn8 = isObj(w) && w.battles && typeof w.wn8 === 'number' ? w.wn8 : null;
      if (i === undefined) return;   // ends before the chart's first day
      values[i] = wn8;
      if (wn8 !== null) points += 1;
      const from = isObj(w) && w.from ? w.from : addDays(to, -7);
      for (let j = i; j >= 0 && labels[j] > from; j -= 1) hover[j] = wn8;
      titles[i] = `Week ${from} → ${to}: ` + (wn8 !== null ? `WN8 ${NUM.format(wn8)} over ${NUM.format(w.battles)} battles`
        : isObj(w) ? 'no battles' : 'no per-tank records');
    });
    return { name: 'WN8 per week', cls: 's-main weekly', values, hover, titles, join: 'sparse', dots: true, points };
  }

  function renderHistory(data, region) {
    const snapshots = (Array.isArray(data.snapshots) ? data.snapshots : []).filter((sn) => sn && sn.date).sort((a, b) => (a.date < b.date ? -1 : 1));
    const first = data.first_date || (snapshots[0] && snapshots[0].date);
    const last = data.last_date || (snapshots.length && snapshots[snapshots.length - 1].date);
    const labels = first && last ? dayRange(first, last) : snapshots.map((sn) => sn.date);
    const box = h('div', { class: 'history' });
    const head = h('div', { class: 'history-head' }, h('h4', null, `History: last ${data.days || HISTORY_DAYS} days`),
      h('span', { class: 'muted small' }, `${snapshots.length} daily snapshot${snapshots.length === 1 ? '' : 's'}` + (first ? `, ${first} → ${last}` : '')));
    const switcher = h('div', { class: 'segmented', role: 'group', 'aria-label': 'Chart metric' });
    const chart = h('div', { class: 'chart', id: 'player-chart' });
    const series = Object.fromEntries(METRICS.map((mt) => [mt.id, metricValues(mt, labels, snapshots)]));
    const count = (id) => series[id].filter((v) => v !== null).length;
    let chosen = count('battles_per_day') >= 2 ? 'battles_per_day' : count('wn8') ? 'wn8' : 'battles';
    const chartNote = h('p', { class: 'muted small chart-note', hidden: true });
    const draw = () => {
      const mt = METRICS.find((x) => x.id === chosen);
      switcher.querySelectorAll('button').forEach((b) => b.setAttribute('aria-pressed', String(b.dataset.metric === chosen)));
      chartNote.hidden = mt.id !== 'period_wn8';
      if (mt.id === 'period_wn8') {
        const weekly = weeklyWn8Series(labels, data.weekly);
        chartNote.replaceChildren(weekly && weekly.points
          ? 'Each dot is the WN8 of only the battles played in one week (the 7 days ending on the day it is drawn at); the line breaks at a week without battles. The thin line is the career WN8 of each daily snapshot.'
          : 'No week-by-week WN8 yet: it needs the tracker’s per-tank records of battles played in these weeks. The thin line is the career WN8 of each daily snapshot.');
        drawChart(chart, { labels, title: 'WN8 per week over career WN8', legend: true,
          series: [{ name: 'Career WN8', cls: 's-min', values: series.wn8, join: 'connect' }].concat(weekly ? [weekly] : []),
          empty: 'No WN8 to draw yet: it needs ratings and per-tank records.' });
        return;
      }
      drawChart(chart, { labels, zero: mt.zero, integer: mt.integer, format: mt.format, title: `${mt.name} per day`, legend: true,
        series: [{ name: mt.name, cls: 's-main', values: series[mt.id], join: 'connect' }],
        empty: mt.id === 'battles_per_day' ? 'Battles per day need at least two daily snapshots.' : `No ${mt.name} values in this period.` });
    };
    for (const mt of METRICS) {
      switcher.append(h('button', { type: 'button', class: 'seg', 'data-metric': mt.id, onclick: () => { chosen = mt.id; draw(); } }, mt.name));
    }
    box.append(head, switcher, chart, chartNote);
    if (isObj(data.deltas)) box.append(h('h4', null, 'Changes over 7, 30 and 90 days'), renderDeltas(data.deltas, { region }));
    const rest = Object.entries(data).filter(([k]) => !['snapshots', 'deltas', 'account_id', 'region', 'days', 'first_date', 'last_date', 'snapshot_count'].includes(k));
    if (rest.length) box.append(h('details', { class: 'more' }, h('summary', null, 'More fields'), renderAny(Object.fromEntries(rest), { region }, 1)));
    if (snapshots.length) {
      box.append(h('details', { class: 'more' }, h('summary', null, 'Daily snapshots (table)'), listTable(snapshots.slice().reverse(), { region })));
    }
    // Drawn after insertion so the chart knows its width.
    requestAnimationFrame(draw);
    return box;
  }

  async function loadPlayer(region, id) {
    const token = takeToken('player');
    const out = $('#player-out');
    const profileBox = h('div', { class: 'block', id: 'player-profile' }, loading('Fetching the profile…'));
    const recentsBox = h('div', { class: 'block', id: 'player-recents' });
    const tanksBox = h('div', { class: 'block', id: 'player-tanks' });
    const historyBox = h('div', { class: 'block', id: 'player-history' });
    out.replaceChildren(profileBox, recentsBox, tanksBox, historyBox);
    const path = `${API}/player/${encodeURIComponent(id)}/${encodeURIComponent(region)}`;
    let autoLeft = RATINGS_AUTO_REFRESHES;
    let historyLoaded = false;
    let tanksLoaded = false;
    let tankDays = tankDaysDefault();
    let tankRequest = null;
    const tankSort = { key: 'period_battles', dir: -1 };

    const loadHistory = async () => {
      historyBox.replaceChildren(loading('Fetching the history…'));
      recentsBox.replaceChildren(h('h4', null, 'Recent performance'), loading('Fetching the recent periods…'));
      const res = await api(`${path}/history?days=${HISTORY_DAYS}`);
      if (!current('player', token)) return;
      if (res.ok) {
        historyLoaded = true;
        const data = res.data || {};
        recentsBox.replaceChildren(renderRecents(isObj(data.deltas) ? data.deltas : {}));
        historyBox.replaceChildren(renderHistory(data, region), rateLine(res));
      } else {
        const code = res.error && res.error.code;
        recentsBox.replaceChildren(h('h4', null, 'Recent performance'), h('p', { class: 'muted recents-unavailable' },
          code === 'no_history' ? 'Not enough data yet: no history has been recorded for this player.' : 'Not available: the history could not be fetched (see below).'));
        historyBox.replaceChildren(h('h4', null, 'History'), explainedError(res, loadHistory));
      }
    };

    const tanksHead = () => h('div', { class: 'history-head' }, h('h4', { id: 'tanks-title' }, 'Tanks'),
      h('div', { class: 'segmented', role: 'group', 'aria-label': 'Period of the tank table', id: 'tank-period' },
        tankDayChoices().map((d) => h('button', { type: 'button', class: 'seg', 'data-days': d, 'aria-pressed': String(d === tankDays),
          onclick: () => loadTanks(d, true) }, `${d} days`))));

    const loadTanks = async (days, keepFocus) => {
      tankDays = days;
      const mine = {};
      tankRequest = mine;
      const refocus = () => { if (keepFocus) { const b = $(`#tank-period button[data-days="${days}"]`, tanksBox); if (b) b.focus(); } };
      tanksBox.replaceChildren(tanksHead(), loading(days ? `Fetching the tanks of the last ${days} days…` : 'Fetching the tanks…'));
      refocus();
      // Without the index's default (not loaded), days is left out and the API's default applies.
      const res = await api(days ? `${path}/tanks?days=${days}` : `${path}/tanks`);
      if (!current('player', token) || tankRequest !== mine) return;
      if (res.ok) {
        tanksLoaded = true;
        if (!days && res.data && Number.isInteger(res.data.days)) { days = res.data.days; tankDays = days; }
        tanksBox.replaceChildren(tanksHead(), renderTanks(res.data || {}, days, tankSort), rateLine(res));
        refocus();
      } else {
        const code = res.error && res.error.code;
        tanksBox.replaceChildren(tanksHead(), explainedError(res, () => loadTanks(days), code === 'no_history'
          ? 'No per-tank records for this player yet: the tank table fills in once the tracker has stored this player’s tanks.' : null));
        refocus();
      }
    };

    const refreshLater = (status, button, seconds) => {
      if (button) button.disabled = true;
      let left = seconds;
      const show = () => status.replaceChildren(`Refreshing in ${left} s…`);
      show();
      const timer = setInterval(() => {
        if (!current('player', token)) { clearInterval(timer); return; }
        left -= 1;
        if (left > 0) { show(); return; }
        clearInterval(timer);
        status.replaceChildren('Refreshing…');
        loadProfile(true);
      }, 1000);
    };

    const loadProfile = async (isRefresh) => {
      // A refresh must reach the server: the live answer may still sit in the HTTP cache.
      const res = await api(path, isRefresh);
      if (!current('player', token)) return;
      if (!res.ok) {
        profileBox.replaceChildren(errorBox(res, () => { profileBox.replaceChildren(loading('Fetching the profile…')); loadProfile(isRefresh); }));
        if (!isRefresh) { historyBox.replaceChildren(); recentsBox.replaceChildren(); tanksBox.replaceChildren(); }
        return;
      }
      const data = res.data || {};
      const onRefresh = (status, button) => refreshLater(status, button, RATINGS_REFRESH_DELAY);
      profileBox.replaceChildren(renderProfile(data, region, onRefresh), rateLine(res));
      const pending = isObj(data.ratings) && data.ratings.available === false;
      if (pending && autoLeft > 0) {
        autoLeft -= 1;
        refreshLater($('.refresh-status', profileBox), $('#ratings-refresh', profileBox), RATINGS_REFRESH_DELAY);
      }
      // The first answer starts the history; a refresh retries it only if it had failed.
      if (!isRefresh || (!historyLoaded && !pending)) loadHistory();
      if (!isRefresh || (!tanksLoaded && !pending)) loadTanks(tankDays);
    };
    await loadProfile(false);
  }

  // ---------------------------------------------------------------- clan view
  function tile(name, value, key, note) {
    return h('div', { class: 'tile' }, h('span', { class: 'tile-label' }, name),
      h('span', { class: 'tile-value' }, value === undefined ? muted('—') : fmtValue(value, key || '', {})),
      note ? h('span', { class: 'tile-note' }, note) : null);
  }

  function renderClan(data, region) {
    const r = data.region || region;
    const ctx = { region: r };
    const ratings = isObj(data.ratings) ? data.ratings : {};
    const members = isObj(data.members) ? data.members : {};
    const title = [data.tag ? `[${data.tag}]` : null, data.name].filter(Boolean).join(' ') || `Clan ${data.clan_id}`;
    const sub = [`Clan ${data.clan_id ?? ''}`, label(r)];
    if (typeof data.cached_at === 'number') sub.push(`cached ${ago(data.cached_at)} (${utcText(new Date(data.cached_at * 1000))})`);
    const parts = [h('div', { class: 'profile-head' }, h('h3', { class: 'clan-name' }, title), h('p', { class: 'subline' }, sub.join(' · ')))];
    parts.push(h('div', { class: 'tiles' },
      tile('Members', data.members_count, 'members_count'),
      Object.entries(ratings).map(([k, v]) => tile(label(k), v, k))));
    if (Object.keys(members).length) {
      const measured = members.profiles_measured;
      const note = typeof measured === 'number'
        ? `Averages over ${measured} of ${data.members_count ?? '?'} member profiles` : null;
      parts.push(h('h4', null, 'Member averages'), note ? h('p', { class: 'muted small' }, note) : null,
        h('div', { class: 'tiles' }, Object.entries(members).filter(([k]) => k !== 'profiles_measured').map(([k, v]) => tile(label(k), v, k))));
    }
    const handled = new Set(['clan_id', 'region', 'tag', 'name', 'members_count', 'ratings', 'members', 'cached_at']);
    for (const [key, value] of Object.entries(data)) {
      if (handled.has(key)) continue;
      parts.push(h('h4', null, label(key) + (Array.isArray(value) ? ` (${value.length})` : '')), renderAny(value, Object.assign({ key }, ctx), 1));
    }
    return h('div', { class: 'clan' }, parts);
  }

  function renderWeekly(data, region) {
    const r = data.region || region;
    const period = isObj(data.period) ? data.period : null;
    const head = h('div', { class: 'history-head' }, h('h3', null, 'Weekly digest'),
      period && (period.start || period.end) ? h('span', { class: 'muted small' }, `${period.start ?? '?'} → ${period.end ?? '?'}`) : null);
    return h('div', { class: 'weekly' }, head, renderAny(data, { region: r }, 0));
  }

  async function loadClan(region, id) {
    const token = takeToken('clan');
    const detailsBox = h('div', { class: 'block', id: 'clan-details' }, loading('Fetching the clan…'));
    const weeklyBox = h('div', { class: 'block', id: 'clan-weekly' }, loading('Fetching the weekly digest…'));
    $('#clan-out').replaceChildren(detailsBox, weeklyBox);
    const path = `${API}/clan/${encodeURIComponent(id)}/${encodeURIComponent(region)}`;
    const details = async () => {
      const res = await api(path);
      if (!current('clan', token)) return;
      detailsBox.replaceChildren(res.ok ? renderClan(res.data || {}, region) : errorBox(res, () => { detailsBox.replaceChildren(loading('Fetching the clan…')); details(); }),
        res.ok ? rateLine(res) : '');
    };
    const weekly = async () => {
      const res = await api(path + '/weekly');
      if (!current('clan', token)) return;
      weeklyBox.replaceChildren(res.ok ? renderWeekly(res.data || {}, region)
        : h('div', null, h('h3', null, 'Weekly digest'), errorBox(res, () => { weeklyBox.replaceChildren(loading('Fetching the weekly digest…')); weekly(); })),
      res.ok ? rateLine(res) : '');
    };
    await Promise.all([details(), weekly()]);
  }

  // ---------------------------------------------------------------- online view
  function renderOnlineNow(data) {
    const out = [h('h3', null, 'Players online now')];
    const games = isObj(data.games) ? data.games : null;
    if (games && Object.keys(games).length) {
      out.push(h('div', { class: 'tiles' }, Object.entries(games).map(([game, g]) => {
        if (!isObj(g)) return tile(label(game), g, 'players');
        const peak = isObj(g.peak) ? g.peak : {};
        const notes = [];
        if (isObj(peak.today) && typeof peak.today.players === 'number') notes.push(`peak today ${NUM.format(peak.today.players)}`);
        if (isObj(peak.all_time) && typeof peak.all_time.players === 'number') notes.push(`all-time ${NUM.format(peak.all_time.players)}`);
        return tile(`${label(game)} (${game})`, g.players, 'players', notes.join('\n') || null);
      })));
    } else {
      out.push(h('p', { class: 'chart-empty muted' }, 'No player counts have been recorded yet.'));
    }
    return h('div', { class: 'online-now' }, out);
  }

  function renderOnlineDetails(data) {
    if (!isObj(data) || !Object.keys(data).length) return '';
    return h('div', { class: 'online-details' }, h('h3', null, 'Current counts per game and region'), renderAny(data, {}, 0));
  }

  function renderOnlineHistory(data, game, region) {
    const points = (Array.isArray(data.series) ? data.series : []).filter((p) => p && p.date);
    const labels = points.map((p) => p.date);
    const val = (p, k) => (p.samples === 0 || typeof p[k] !== 'number' ? null : p[k]);
    const days = points.filter((p) => val(p, 'peak') !== null).length;
    const box = h('div', { class: 'online-history' },
      h('div', { class: 'history-head' }, h('h3', null, `Daily player counts: ${label(data.game || game)}, ${state.regions.length && !state.regions.includes(data.region || region) ? `${label(data.region || region).toLowerCase()} regions` : label(data.region || region)}`),
        h('span', { class: 'muted small' }, `${data.from ?? labels[0] ?? ''} → ${data.to ?? labels[labels.length - 1] ?? ''}, ${days} of ${points.length} days with samples`)));
    const chart = h('div', { class: 'chart', id: 'online-chart' });
    box.append(chart, h('p', { class: 'muted small' }, 'Days without samples are left as gaps.'));
    const rest = Object.entries(data).filter(([k]) => !['series', 'game', 'region', 'from', 'to', 'days'].includes(k));
    if (rest.length) box.append(renderAny(Object.fromEntries(rest), {}, 1));
    if (points.length) box.append(h('details', { class: 'more' }, h('summary', null, 'Daily values (table)'), listTable(points.slice().reverse(), {})));
    requestAnimationFrame(() => drawChart(chart, {
      labels, zero: true, integer: true, title: 'Daily player counts', empty: 'No samples in this period yet.',
      series: [
        { name: 'Peak', cls: 's-peak', values: points.map((p) => val(p, 'peak')), join: 'gap' },
        { name: 'Average', cls: 's-avg', values: points.map((p) => val(p, 'avg')), join: 'gap' },
        { name: 'Minimum', cls: 's-min', values: points.map((p) => val(p, 'min')), join: 'gap' },
      ],
    }));
    return box;
  }

  async function loadOnline(game, region, days) {
    const token = takeToken('online');
    const nowBox = h('div', { class: 'block', id: 'online-now' }, loading('Fetching current counts…'));
    const histBox = h('div', { class: 'block', id: 'online-history' }, loading('Fetching the daily series…'));
    const detailBox = h('div', { class: 'block', id: 'online-details' });
    $('#online-out').replaceChildren(nowBox, histBox, detailBox);
    const now = async () => {
      const res = await api(`${API}/online`);
      if (!current('online', token)) return;
      nowBox.replaceChildren(res.ok ? renderOnlineNow(res.data || {}) : errorBox(res, now));
      detailBox.replaceChildren(res.ok ? renderOnlineDetails(res.data || {}) : '', res.ok ? rateLine(res) : '');
      detailBox.hidden = !res.ok;
    };
    const hist = async () => {
      // A value not known yet (no index) is left out: the API's default applies.
      const q = new URLSearchParams(Object.entries({ game, region, days: days ? String(days) : '' }).filter(([, v]) => v));
      const res = await api(`${API}/online/history?${q}`);
      if (!current('online', token)) return;
      histBox.replaceChildren(res.ok ? renderOnlineHistory(res.data || {}, game, region) : errorBox(res, hist), res.ok ? rateLine(res) : '');
    };
    await Promise.all([now(), hist()]);
  }

  // ---------------------------------------------------------------- status view
  async function loadStatus() {
    const token = takeToken('status');
    const out = $('#status-out');
    out.replaceChildren(loading('Fetching the service status…'));
    const res = await api(`${API}/status`);
    if (!current('status', token)) return;
    if (!res.ok) { out.replaceChildren(errorBox(res, loadStatus)); return; }
    const data = res.data || {};
    const health = data.health !== undefined ? String(data.health) : null;
    out.replaceChildren(
      health ? h('p', { class: 'health health-' + health.replace(/[^a-z_-]/gi, '') }, 'Health: ', h('strong', null, health)) : '',
      renderAny(data, {}, 0),
      h('div', { class: 'actions' }, h('button', { type: 'button', class: 'btn', onclick: loadStatus }, 'Reload')),
      rateLine(res));
  }

  // ---------------------------------------------------------------- nickname search
  // A combobox: typing (debounced) asks GET /players?search=…; the results are a listbox
  // picked with the mouse or the arrow keys and Enter; picking opens the player view.
  const search = { timer: null, results: [], active: -1, shown: null };

  function searchOpen(open) {
    $('#search-results').hidden = !open;
    $('#search-input').setAttribute('aria-expanded', String(open));
    if (!open) setSearchActive(-1);
  }

  function setSearchActive(i) {
    search.active = i;
    const input = $('#search-input');
    const options = $('#search-results').querySelectorAll('[role="option"]');
    options.forEach((o, k) => { o.setAttribute('aria-selected', String(k === i)); o.classList.toggle('active', k === i); });
    if (i >= 0 && options[i]) {
      input.setAttribute('aria-activedescendant', options[i].id);
      options[i].scrollIntoView({ block: 'nearest' });
    } else {
      input.removeAttribute('aria-activedescendant');
    }
  }

  function clearSearchResults() {
    search.results = [];
    $('#search-results').replaceChildren();
    searchOpen(false);
  }

  function pickResult(i) {
    const r = search.results[i];
    if (!r) return;
    const input = $('#search-input');
    input.value = String(r.nickname ?? '');
    search.shown = input.value.trim() + '|' + $('#search-region').value;
    clearSearchResults();
    $('#search-status').replaceChildren(h('p', { class: 'search-message' }, `Showing ${r.nickname ?? r.account_id} (${label(r.region)}, account ${r.account_id}).`));
    go(`#player/${encodeURIComponent(r.region)}/${encodeURIComponent(r.account_id)}`);
  }

  function searchMessage(text, cls) {
    $('#search-status').replaceChildren(h('p', { class: 'search-message' + (cls ? ' ' + cls : '') }, text));
  }

  async function runSearch(force) {
    clearTimeout(search.timer);
    const text = $('#search-input').value.trim();
    const region = $('#search-region').value;
    const key = text + '|' + region;
    if (!force && key === search.shown) return;
    search.shown = key;
    const token = takeToken('search');
    if (!text) { clearSearchResults(); $('#search-status').replaceChildren(); return; }
    const rule = searchRule();
    const bad = rule.re ? [...text].find((ch) => !rule.re.test(ch)) : undefined;
    if (bad !== undefined || text.length > rule.max) {
      clearSearchResults();
      searchMessage(bad !== undefined
        ? `“${bad}” cannot be part of a nickname: a search is ${rule.min} to ${rule.max} letters (A–Z), digits or underscores.`
        : `A nickname has at most ${rule.max} characters.`, 'invalid');
      return;
    }
    if (text.length < rule.min) { clearSearchResults(); searchMessage(`Type at least ${rule.min} characters of the nickname.`, 'short'); return; }
    $('#search-status').replaceChildren(loading(`Searching for “${text}”…`));
    const q = new URLSearchParams({ search: text });
    if (region) q.set('region', region);
    const res = await api(`${API}/players?${q}`);
    if (!current('search', token)) return;
    if (!res.ok) {
      search.shown = null;   // typing the same text again asks again
      clearSearchResults();
      $('#search-status').replaceChildren(explainedError(res, () => runSearch(true)));
      return;
    }
    const data = res.data || {};
    const results = (Array.isArray(data.results) ? data.results : []).filter((r) => isObj(r) && r.account_id !== undefined && r.region);
    search.results = results;
    $('#search-results').replaceChildren(...results.map((r, i) => h('li', {
      role: 'option', id: `search-option-${i}`, class: 'search-option', 'aria-selected': 'false',
      'data-account-id': r.account_id, 'data-region': r.region,
      onmousedown: (ev) => ev.preventDefault(),   // keep the focus in the input
      onclick: () => pickResult(i),
    }, h('span', { class: 'search-nick' }, String(r.nickname ?? r.account_id)),
    h('span', { class: 'search-meta' }, `${label(r.region)} · ${r.account_id}`, r.tracked ? h('span', { class: 'search-tracked' }, 'tracked') : null))));
    const where = data.source === 'upstream' ? 'looked up live' : 'among the tracked players';
    const scope = region ? ` on ${label(region)}` : '';
    if (!results.length) {
      searchOpen(false);
      searchMessage(`No player name starts with “${text}”${scope} (${where}).`, 'none');
    } else {
      searchOpen(true);
      searchMessage(`${results.length} player${results.length === 1 ? '' : 's'} found${scope} (${where}): pick one with the mouse, or with the arrow keys and Enter.`);
    }
  }

  function bindSearch() {
    const input = $('#search-input');
    input.addEventListener('input', () => {
      clearTimeout(search.timer);
      search.timer = setTimeout(() => runSearch(false), SEARCH_DEBOUNCE_MS);
    });
    $('#search-region').addEventListener('change', () => runSearch(false));
    input.addEventListener('keydown', (ev) => {
      const n = search.results.length;
      const open = !$('#search-results').hidden;
      if (ev.key === 'ArrowDown' && n) {
        ev.preventDefault();
        if (!open) searchOpen(true);
        setSearchActive(search.active + 1 >= n ? 0 : search.active + 1);
      } else if (ev.key === 'ArrowUp' && n) {
        ev.preventDefault();
        if (!open) searchOpen(true);
        setSearchActive(search.active <= 0 ? n - 1 : search.active - 1);
      } else if (ev.key === 'Enter') {
        ev.preventDefault();
        if (open && search.active >= 0) pickResult(search.active);
        else if (open && n === 1) pickResult(0);
        else runSearch(false);
      } else if (ev.key === 'Escape' && open) {
        ev.preventDefault();
        searchOpen(false);
      }
    });
    input.addEventListener('blur', () => searchOpen(false));
    input.addEventListener('focus', () => { if (search.results.length) searchOpen(true); });
    $('#form-search').addEventListener('submit', (ev) => ev.preventDefault());
  }

  // ---------------------------------------------------------------- routing
  const VIEWS = ['player', 'clan', 'online', 'status'];

  function showView(view) {
    for (const v of VIEWS) {
      $('#panel-' + v).hidden = v !== view;
      const tab = $('#tab-' + v);
      tab.setAttribute('aria-selected', String(v === view));
      tab.classList.toggle('active', v === view);
    }
  }

  function parseHash() {
    const raw = location.hash.replace(/^#/, '');
    return raw.split('/').filter((p) => p !== '').map((p) => { try { return decodeURIComponent(p); } catch (e) { return p; } });
  }

  function route() {
    const [view, ...args] = parseHash();
    if (!VIEWS.includes(view)) {
      if (!location.hash) showView('player');
      return false;   // an ordinary in-page anchor (#endpoints, #errors...)
    }
    showView(view);
    if (view === 'player' && args.length >= 2) {
      const f = $('#form-player').elements;
      ensureOption(f.region, args[0]);
      f.id.value = args[1];
      loadPlayer(args[0], args[1]);
    } else if (view === 'clan' && args.length >= 2) {
      const f = $('#form-clan').elements;
      ensureOption(f.region, args[0]);
      f.id.value = args[1];
      loadClan(args[0], args[1]);
    } else if (view === 'online') {
      const f = $('#form-online').elements;
      if (args.length) {
        $('#form-online').dataset.touched = '1';
        ensureOption(f.game, args[0]);
        if (args[1]) ensureOption(f.region, args[1]);
        if (args[2]) ensureOption(f.days, args[2]);
      }
      const d = onlineDefaults();
      loadOnline(f.game.value || d.game, f.region.value || d.region, f.days.value || d.days);
    } else if (view === 'status') {
      loadStatus();
    }
    return true;
  }

  async function start() {
    bindForms();
    bindSearch();
    fillForms();
    window.addEventListener('hashchange', () => {
      if (route()) $('#explorer').scrollIntoView({ block: 'start' });
    });
    $('#index-status').replaceChildren(loading('Loading the index…'));
    await loadIndex();
    fillForms();
    const routed = route();
    if (routed && location.hash) $('#explorer').scrollIntoView({ block: 'start' });
    else if (location.hash && !routed) {
      const target = document.getElementById(location.hash.slice(1));
      if (target) target.scrollIntoView();
    }
    document.documentElement.dataset.ready = '1';
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
