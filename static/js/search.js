/* The nickname search: a combobox over GET /players?search=… */

import { $, h, isObj, label } from './render.js';
import { API, api, current, explainedError, loading, searchRule, takeToken } from './api.js';
import { go } from './nav.js';

const SEARCH_DEBOUNCE_MS = 300;

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

export function bindSearch() {
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
