/* The explorer's forms (filled from the index) and the routes of the views they drive: player, clan,
 * tanks, marks, tank, expected values and online (main.js hands them to the router, router.js). */

import { $, h, label, typeLabel } from './render.js';
import { indexParam, loading, onlineDays, onlineDefaults, paramEnum, state, tankStatsDefaults } from './api.js';
import { go } from './nav.js';
import { loadPlayer } from './player.js';
import { loadClan } from './clan.js';
import { loadTankStats, tanksHash, tanksQuery } from './tankstats.js';
import { loadTank } from './tank.js';
import { loadMarks, MARKS_MIN_TIER, marksDefaults, marksHash, marksQuery } from './marks.js';
import { loadExpected } from './expected.js';
import { loadOnline } from './online.js';
import { bindRankings, fillRankings } from './rankings.js';
import { bindOverlay } from './overlaybuilder.js';
import { bindDumps, fillDumps } from './dumps.js';

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

export function fillForms() {
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
    else if (kind === 'tank-days') setOptions(select, paramEnum('tank_stats', 'days').map(String), (v) => `${v} days`);
    else if (kind === 'tank-tiers') {
      const p = indexParam('tank_stats', 'tier') || {};
      const tiers = [];
      if (Number.isInteger(p.minimum) && Number.isInteger(p.maximum)) for (let t = p.minimum; t <= p.maximum; t++) tiers.push(String(t));
      setOptions(select, p.minimum === undefined ? [] : [''].concat(tiers), (v) => (v === '' ? 'Any tier' : `Tier ${v}`));
    }
    else if (kind === 'marks-tiers') {
      // The index's tiers from the first that has marks (the game's rule: tier V).
      const p = indexParam('tank_marks', 'tier') || {};
      const tiers = [];
      if (Number.isInteger(p.minimum) && Number.isInteger(p.maximum)) {
        for (let t = Math.max(p.minimum, MARKS_MIN_TIER); t <= p.maximum; t++) tiers.push(String(t));
      }
      setOptions(select, p.minimum === undefined ? [] : [''].concat(tiers), (v) => (v === '' ? 'Any tier' : `Tier ${v}`));
    }
    else if (kind === 'tank-types') {
      const types = paramEnum('tank_stats', 'type');
      setOptions(select, types.length ? [''].concat(types) : [], (v) => (v === '' ? 'Any type' : typeLabel(v)));
    }
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
  const ft = $('#form-tanks');
  if (!ft.dataset.touched) {
    const d = tankStatsDefaults();
    for (const name of ['region', 'days']) if (d[name]) ft.elements[name].value = d[name];
  }
  const fm = $('#form-marks');
  if (!fm.dataset.touched) {
    const d = marksDefaults();
    if (d.region) fm.elements.region.value = d.region;
  }
  // The nation's rule (lengths and pattern) is the index's.
  for (const [form, endpoint] of [[ft, 'tank_stats'], [fm, 'tank_marks']]) {
    const nation = indexParam(endpoint, 'nation') || {};
    const input = form.elements.nation;
    if (Number.isInteger(nation.maxLength)) input.maxLength = nation.maxLength;
    if (Number.isInteger(nation.minLength)) input.minLength = nation.minLength;
    if (typeof nation.pattern === 'string') input.pattern = nation.pattern.replace(/^\^/, '').replace(/\$$/, '');
    input.placeholder = nation.example !== undefined ? `any (e.g. ${nation.example})` : 'any';
  }
  // A form whose choices have not arrived yet (the index) cannot be sent.
  for (const form of [fp, fc, fo, ft, fm]) {
    const empty = [...form.querySelectorAll('select')].some((select) => !select.options.length);
    form.querySelectorAll('button[type=submit], button:not([type])').forEach((b) => { b.disabled = empty; });
  }
  fillRankings();
  fillDumps();
  const demoLink = (hash, text) => h('a', { href: hash }, text);
  $('#hint-player').replaceChildren(...(demoPlayer ? ['Demo: ', demoLink(`#player/${demoPlayer.region}/${demoPlayer.id}`,
    `player ${demoPlayer.id} (${label(demoPlayer.region)})`), '. '] : []),
  'A profile that is not cached yet is fetched live; its ratings follow a few seconds later.');
  $('#hint-clan').replaceChildren(...(demoClan ? ['Demo: ', demoLink(`#clan/${demoClan.region}/${demoClan.id}`,
    `clan ${demoClan.id} (${label(demoClan.region)})`), '. '] : []), 'Clans are served from the cache only.');
}

function tankFormQuery(form) {
  const f = form.elements;
  const last = state.tanksQuery || {};
  return { region: f.region.value, days: f.days.value, tier: f.tier.value, type: f.type.value, nation: f.nation.value.trim().toLowerCase(),
    sort: last.sort || '', order: last.order || '', limit: last.limit || '', offset: '' };
}

function marksFormQuery(form) {
  const f = form.elements;
  const last = state.marksQuery || {};
  return { region: f.region.value, tier: f.tier.value, type: f.type.value, nation: f.nation.value.trim().toLowerCase(),
    sort: last.sort || '', order: last.order || '', limit: last.limit || '', offset: '' };
}

export function bindForms() {
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
  const ft = $('#form-tanks');
  ft.addEventListener('submit', (ev) => {
    ev.preventDefault();
    ev.target.dataset.touched = '1';
    go(tanksHash(tankFormQuery(ev.target)));
  });
  // A chosen value applies at once; the nation applies when sent (Enter or the button).
  ft.addEventListener('change', (ev) => {
    if (ev.target.tagName === 'SELECT' && !ft.querySelector('button[type=submit]').disabled) ft.requestSubmit();
  });
  const fm = $('#form-marks');
  fm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    ev.target.dataset.touched = '1';
    go(marksHash(marksFormQuery(ev.target)));
  });
  fm.addEventListener('change', (ev) => {
    if (ev.target.tagName === 'SELECT' && !fm.querySelector('button[type=submit]').disabled) fm.requestSubmit();
  });
  bindRankings();
  bindOverlay();
  bindDumps();
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

// ---------------------------------------------------------------- the views' routes
// Each takes the hash's decoded segments after the view's name; main.js hands them to the router
// (router.js) as its table, with the routes the other views export.

export function routePlayer(args) {
  if (args.length < 2) return;
  const f = $('#form-player').elements;
  ensureOption(f.region, args[0]);
  f.id.value = args[1];
  loadPlayer(args[0], args[1]);
}

export function routeClan(args) {
  if (args.length < 2) return;
  const f = $('#form-clan').elements;
  ensureOption(f.region, args[0]);
  f.id.value = args[1];
  loadClan(args[0], args[1]);
}

export function routeTanks(args) {
  const form = $('#form-tanks');
  const f = form.elements;
  // #tanks alone: the form's values (or the defaults), with the last sort kept.
  const q = args.length ? tanksQuery(args) : Object.assign(tanksQuery([]), f.region.value ? tankFormQuery(form) : {});
  if (args.length) form.dataset.touched = '1';
  if (q.region) ensureOption(f.region, q.region);
  if (q.days) ensureOption(f.days, q.days);
  if (f.tier.options.length) ensureOption(f.tier, q.tier);
  if (f.type.options.length) ensureOption(f.type, q.type);
  f.nation.value = q.nation;
  state.tanksQuery = q;
  // Before the index has loaded there is no region to ask for: start() routes again once it has.
  if (q.region) loadTankStats(q);
  else $('#tanks-out').replaceChildren(loading('Loading the index…'));
}

export function routeMarks(args) {
  const form = $('#form-marks');
  const f = form.elements;
  // #marks alone: the form's values (or the defaults), with the last sort kept.
  const q = args.length ? marksQuery(args) : Object.assign(marksQuery([]), f.region.value ? marksFormQuery(form) : {});
  if (args.length) form.dataset.touched = '1';
  if (q.region) ensureOption(f.region, q.region);
  if (f.tier.options.length) ensureOption(f.tier, q.tier);
  if (f.type.options.length) ensureOption(f.type, q.type);
  f.nation.value = q.nation;
  state.marksQuery = q;
  if (q.region) loadMarks(q);
  else $('#marks-out').replaceChildren(loading('Loading the index…'));
}

export function routeTank(args) {
  loadTank(args[0], args[1], args[2] || '');
}

export function routeExpected(args) {
  // #expected alone: the tanks form's region (or the tanks page's default).
  const region = args[0] || $('#form-tanks').elements.region.value || tankStatsDefaults().region;
  if (region) loadExpected(region, args[1] || '', args[2] || '');
  else $('#expected-out').replaceChildren(loading('Loading the index…'));
}

export function routeOnline(args) {
  const f = $('#form-online').elements;
  if (args.length) {
    $('#form-online').dataset.touched = '1';
    ensureOption(f.game, args[0]);
    if (args[1]) ensureOption(f.region, args[1]);
    if (args[2]) ensureOption(f.days, args[2]);
  }
  const d = onlineDefaults();
  loadOnline(f.game.value || d.game, f.region.value || d.region, f.days.value || d.days);
}
