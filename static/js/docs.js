/* The documentation half of the page: intro facts, endpoints, limits and errors, rendered
 * from the live index; loading the index also fills state (regions, games, demo ids). */

import { $, fmtCell, h, isObj, label, lazyDetails, muted, renderAny, scroller } from './render.js';
import { API, api, errorBox, loading, state } from './api.js';
import { fillForms } from './explorer.js';

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
  tanks: (p) => p.account_id && p.region && `#player/${p.region}/${p.account_id}`,
  tank_stats: () => '#tanks',
  tank: (p) => p.tank_id && p.region && `#tank/${p.region}/${p.tank_id}`,
  vehicles: () => '#vehicles',
  tank_strength: () => '#strength',
  leaderboard_players: () => '#rankings/players',
  leaderboard_clans: () => '#rankings/clans',
  tank_leaderboard: (p) => p.tank_id && p.region && `#rankings/tank/${p.region}/${p.tank_id}`,
  online: () => '#online',
  online_history: () => '#online',
  dumps: () => '#data',
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
    described.map(([key, value]) => lazyDetails(`${key === 'fields' ? 'Response fields' : label(key)} (${Object.keys(value).length})`,
      () => scroller(h('table', { class: 'grid' }, h('tbody', null, Object.entries(value).map(([name, text]) =>
        h('tr', null, h('th', { scope: 'row' }, h('code', null, name)), h('td', null, codeText(text))))))), 'more fields')),
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
  if (index.version) fact('Version', h('code', null, index.version));
  if (Array.isArray(index.methods)) fact('Methods', index.methods.join(', '));
  if (Array.isArray(index.regions)) fact('Regions', index.regions.join(', '));
  if (Array.isArray(index.games)) fact('Games', index.games.join(', '));
  if (index.openapi) {
    fact('OpenAPI', h('a', { href: index.openapi }, h('code', null, index.openapi)));
    $('#footer-openapi').setAttribute('href', index.openapi);
  }
  // Last: the one fact the server's HTML (handlers/site.py intro_facts) cannot know, so a longer
  // line moves nothing after it.
  fact('Base URL', h('code', null, location.origin + API));
  $('#intro-facts').replaceChildren(...facts);

  const endpoints = Array.isArray(index.endpoints) ? index.endpoints : [];
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

/** The reference below the explorer: the limits' policy, every endpoint and every error code. */
function renderReference(index) {
  const policy = index.rate_limits;
  $('#rate-policy').replaceChildren(isObj(policy)
    ? h('div', { class: 'policy' }, h('h3', null, 'How limits work'), renderAny(policy, { key: 'rate_limits' }, 0))
    : '');
  const endpoints = Array.isArray(index.endpoints) ? index.endpoints : [];
  $('#endpoint-list').replaceChildren(...endpoints.map(renderEndpoint));

  const errors = Array.isArray(index.errors) ? index.errors : [];
  $('#error-list').replaceChildren(scroller(h('table', { class: 'grid errors-table' },
    h('thead', null, h('tr', null, ['HTTP status', 'error.code', 'Meaning'].map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', null, errors.map((e) => h('tr', { 'data-code': e.code },
      h('td', { class: 'num' }, String(e.status)), h('td', null, h('code', null, e.code)), h('td', null, e.meaning || '')))))));
}

// The reference is two thousand elements below the fold: drawn when it comes on screen (or an
// anchor in it is opened), not while the page's first view loads (its layout and the main thread).
// Until then its lists hold their room (style.css), so what follows them is off screen and does
// not move when they are drawn.
let pendingReference = null;
let referenceWatch = null;

/** Draw the reference now if it waits (an anchor into it: #endpoint-..., #errors). */
export function showReference() {
  if (!pendingReference) return;
  const index = pendingReference;
  pendingReference = null;
  if (referenceWatch) referenceWatch.disconnect();
  referenceWatch = null;
  renderReference(index);
}

/** `watchNow`: the page is the home page, whose content the reference is; on a view, it is watched
 * from the reader's first move (a wheel, touch, key or click), as the view's own table grows from a
 * short "Loading…" and would bring the reference near the screen for a moment. */
function deferReference(index, watchNow) {
  pendingReference = index;
  const section = $('#endpoints');
  if (!section || !('IntersectionObserver' in window)) { showReference(); return; }
  const watch = () => {
    if (!pendingReference || referenceWatch) return;
    referenceWatch = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting)) showReference();
    });
    referenceWatch.observe(section);
  };
  if (watchNow) { watch(); return; }
  for (const type of ['wheel', 'touchstart', 'keydown', 'pointerdown']) {
    window.addEventListener(type, watch, { once: true, passive: true });
  }
}

export async function loadIndex(onHome) {
  const result = await api(API);
  if (result.ok && isObj(result.data)) {
    state.index = result.data;
    renderIndex(result.data);
    deferReference(result.data, onHome);
    $('#index-status').replaceChildren();
  } else {
    const box = errorBox(result, () => { $('#index-status').replaceChildren(loading('Loading the index…')); loadIndex().then(fillForms); });
    $('#index-status').replaceChildren(h('p', null, 'The endpoint list could not be loaded from the index:'), box);
    $('#endpoint-list').replaceChildren(muted('Not available: the index did not answer.'));
  }
}
