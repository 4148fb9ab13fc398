/* The player view: profile and ratings, recent periods, and the loading of the tank table
 * and the history below them. */

import { $, ago, fmtCell, fmtValue, h, isObj, label, lazyDetails, nullFigure, NUM, rangeText, renderAny, utcText, wn8Node } from './render.js';
import { todayCard } from './overlaybuilder.js';
import { shareBox } from './share.js';
import { API, api, csvLink, current, errorBox, explainedError, loading, paramEnum, rateLine, takeToken, tankDayChoices, tankDaysDefault } from './api.js';
import { renderTanks } from './tanks.js';
import { HISTORY_DAYS, renderHistory } from './history.js';
import { placeNode } from './rankings.js';

const RATINGS_REFRESH_DELAY = 3;   // seconds before re-fetching a live-fetched profile
const RATINGS_AUTO_REFRESHES = 4;  // automatic attempts before leaving it to the button

// ---------------------------------------------------------------- player view
const STAT_ORDER = ['battles', 'wins', 'losses', 'draws', 'win_rate', 'avg_damage', 'avg_frags', 'avg_spotted', 'avg_xp',
  'avg_defence', 'avg_capture', 'survival_rate', 'hit_rate', 'average_tier'];

function ratingTile(name, value, extraClass, note) {
  return h('div', { class: 'tile rating ' + (extraClass || '') },
    h('span', { class: 'tile-label' }, name),
    h('span', { class: 'tile-value' }, typeof value === 'number' ? NUM.format(value) : '—'),
    note ? h('span', { class: 'tile-note' }, note) : null);
}

// Why a profile has no WTR (ratings.wtr_reason), in the words a player reads.
const WTR_REASONS = {
  no_rating: 'Wargaming gives no WTR yet (too few random battles).',
  upstream_failed: 'Wargaming’s API did not answer the WTR request; it is asked again with the next refresh.',
  not_fetched: 'Not asked yet: a first lookup asks only what it must; the next refresh or the daily pass brings it.',
};

/** WTR, Wargaming's own rating (wot/account/wtr), beside ours: null with the reason said. */
function wtrTile(ratings) {
  const known = typeof ratings.wtr === 'number';
  const why = WTR_REASONS[ratings.wtr_reason] || 'Not available.';
  return h('div', { class: 'tile rating wtr', id: 'wtr-tile', 'data-reason': known ? null : String(ratings.wtr_reason ?? '') },
    h('span', { class: 'tile-label' }, 'WTR'),
    h('span', { class: 'tile-value' }, known ? NUM.format(ratings.wtr) : nullFigure(why)),
    h('span', { class: 'tile-note' }, known ? 'Wargaming’s own rating' : why));
}

/** The career WN8's standing among the realm's active players (its random panel) or its tracked
 * players (ratings.wn8_percentile, and wn8_percentile_population says which). */
function standingTile(value, region, among) {
  const known = typeof value === 'number';
  const panel = among && among.kind === 'panel';
  return h('div', { class: 'tile rating standing', id: 'wn8-standing',
    title: among && among.description ? `The share of ${among.description} whose career WN8 is lower`
      : `The share of ${label(region)}'s tracked players (accounts looked up here and clan members, not a random sample) with enough career battles whose career WN8 is lower` },
  h('span', { class: 'tile-label' }, 'WN8 percentile'),
  h('span', { class: 'tile-value' }, known ? NUM.format(value) : nullFigure('Shown for an account with enough career battles, once the tank statistics are built.')),
  h('span', { class: 'tile-note' }, known ? `better than ${NUM.format(value)} % of ${panel ? 'active' : 'tracked'} ${label(region)} players` : 'not enough battles or data yet'));
}

/** The player's place in the region's ranking (ratings.place): "Rank N of M", linking to that page
 * of the rankings; nothing when the answer has no place (null or absent). */
function placeTile(place, region) {
  const link = placeNode(place, region, 'career', 'wn8', 'wn8-place-link');
  if (!link) return null;
  const window = String(place.days ?? 'career');
  const note = `${window === 'career' ? 'Career' : `Last ${window} days`}, at least ${NUM.format(place.min_battles ?? 0)} battles`
    + (place.through ? ` (through ${place.through})` : '');
  return h('div', { class: 'tile rating place', id: 'wn8-place' }, h('span', { class: 'tile-label' }, `${label(place.by ?? 'wn8')} ranking`),
    h('span', { class: 'tile-value' }, link), h('span', { class: 'tile-note' }, note));
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
    placeTile(ratings.place, r),
    ratingTile('WN7', ratings.wn7),
    ratingTile('Efficiency', ratings.efficiency),
    'wn8_percentile' in ratings ? standingTile(ratings.wn8_percentile, r, ratings.wn8_percentile_population) : null,
    'wtr' in ratings ? wtrTile(ratings) : null,
    'global_rating' in ratings ? ratingTile('Personal rating', ratings.global_rating, 'global-rating', 'Wargaming’s, from account/info') : null);

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
  const ratingRest = Object.entries(ratings).filter(([k]) => !['available', 'wn8', 'wn7', 'efficiency', 'wn8_color', 'calculated_at', 'expected_values_version', 'wn8_percentile', 'wn8_percentile_population', 'place', 'wtr', 'wtr_reason', 'global_rating'].includes(k));
  if (rest.length || ratingRest.length) {
    parts.push(lazyDetails('More fields', () => renderAny(Object.fromEntries(rest.concat(ratingRest.map(([k, v]) => ['ratings_' + k, v]))), ctx, 1)));
  }
  return h('div', { class: 'profile' }, parts);
}

// The recent periods: the history's day deltas (1d ... 90d) carry `period` (the figures of the
// battles played in them); deltas.recent_100 and recent_1000 are such figures objects themselves.
const RECENTS = [
  { key: '1d', name: '1 day' },
  { key: '3d', name: '3 days' },
  { key: '7d', name: '7 days' },
  { key: '14d', name: '14 days' },
  { key: '30d', name: '30 days' },
  { key: '60d', name: '60 days' },
  { key: '90d', name: '90 days' },
  { key: 'recent_100', name: 'Last 100 battles', battles: 100 },
  { key: 'recent_1000', name: 'Last 1,000 battles', battles: 1000 },
];

function periodFigures(deltas, key) {
  if (!isObj(deltas) || !isObj(deltas[key])) return null;
  if (key.startsWith('recent_')) return deltas[key];
  return isObj(deltas[key].period) ? deltas[key].period : null;
}

function renderRecents(deltas, region) {
  const cards = RECENTS.map((p) => {
    const f = periodFigures(deltas, p.key);
    const titleId = `recent-title-${p.key}`;
    const card = h('section', { class: 'recent', 'data-period': p.key, 'aria-labelledby': titleId },
      h('h5', { class: 'recent-title', id: titleId }, p.name));
    if (!f) {
      card.classList.add('empty');
      const why = p.battles
        ? `Needs per-tank records reaching ${NUM.format(p.battles)} battles back.`
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
      isObj(f.place) && !p.battles ? row('place', 'WN8 rank', placeNode(f.place, region, p.key.replace(/d$/, ''), 'wn8') || nullFigure('Not ranked.')) : null,
      row('wn7', 'WN7', fmtValue(f.wn7, 'wn7')),
      row('efficiency', 'EFF', fmtValue(f.efficiency, 'efficiency')),
      'wn8_percentile' in f ? row('wn8_percentile', 'WN8 percentile', typeof f.wn8_percentile === 'number'
        ? h('span', { title: `Better than ${f.wn8_percentile} % of ${label(region)}'s tracked players with enough battles in the same days` }, NUM.format(f.wn8_percentile))
        : nullFigure('Shown for a period with enough battles in it, once the tank statistics are built.')) : null));
    return card;
  });
  return h('div', { class: 'recents-wrap' },
    h('h4', null, 'Recent performance'),
    h('p', { class: 'muted small' }, 'Figures of the battles played in each period only (not career totals). WN8 is coloured by the usual scale.'),
    h('div', { class: 'recents' }, cards));
}

/** The player's blocks shown top-down: each stays hidden until every block above it has its
 * content, so nothing arrives above what is already drawn (no layout shift); all load at once.
 * Returns settle(...boxes). */
function inOrder(boxes) {
  const settled = new Set();
  const update = () => {
    let open = true;
    for (const box of boxes) {
      box.hidden = !open;
      open = open && settled.has(box);
    }
  };
  update();
  return (...done) => {
    done.forEach((box) => settled.add(box));
    update();
  };
}

export async function loadPlayer(region, id) {
  const token = takeToken('player');
  const out = $('#player-out');
  const profileBox = h('div', { class: 'block', id: 'player-profile' }, loading('Fetching the profile…'));
  const recentsBox = h('div', { class: 'block', id: 'player-recents' });
  const tanksBox = h('div', { class: 'block', id: 'player-tanks' });
  const historyBox = h('div', { class: 'block', id: 'player-history' });
  const todayBox = h('div', { class: 'block', id: 'player-today-box' });
  out.replaceChildren(profileBox, todayBox, recentsBox, tanksBox, historyBox);
  const settle = inOrder([profileBox, todayBox, recentsBox, tanksBox, historyBox]);
  const path = `${API}/player/${encodeURIComponent(id)}/${encodeURIComponent(region)}`;
  let autoLeft = RATINGS_AUTO_REFRESHES;
  let historyLoaded = false;
  let tanksLoaded = false;
  let tankDays = tankDaysDefault();
  let tankRequest = null;
  let tankGroup = '';   // the tank table's group_by ('' each tank only)
  const tankSort = { key: 'period_battles', dir: -1 };

  const loadHistory = async () => {
    historyBox.replaceChildren(loading('Fetching the history…'));
    recentsBox.replaceChildren(h('h4', null, 'Recent performance'), loading('Fetching the recent periods…'));
    const res = await api(`${path}/history?days=${HISTORY_DAYS}`);
    if (!current('player', token)) return;
    if (res.ok) {
      historyLoaded = true;
      const data = res.data || {};
      recentsBox.replaceChildren(renderRecents(isObj(data.deltas) ? data.deltas : {}, region));
      historyBox.replaceChildren(renderHistory(data, region), csvLink('history', res.path, 'history-csv', 'The daily snapshots') || '', rateLine(res));
    } else {
      const code = res.error && res.error.code;
      recentsBox.replaceChildren(h('h4', null, 'Recent performance'), h('p', { class: 'muted recents-unavailable' },
        code === 'no_history' ? 'Not enough data yet: no history has been recorded for this player.' : 'Not available: the history could not be fetched (see below).'));
      historyBox.replaceChildren(h('h4', null, 'History'), explainedError(res, loadHistory));
    }
    settle(recentsBox, historyBox);
  };

  // The group-by choices are the index's (the tanks endpoint's group_by enum); none before it loads.
  const groupChoices = () => {
    const values = paramEnum('tanks', 'group_by');
    return values.length ? [''].concat(values) : [];
  };
  const tanksHead = () => h('div', { class: 'history-head' }, h('h4', { id: 'tanks-title' }, 'Tanks'),
    h('div', { class: 'segmented', role: 'group', 'aria-label': 'Period of the tank table', id: 'tank-period' },
      tankDayChoices().map((d) => h('button', { type: 'button', class: 'seg', 'data-days': d, 'aria-pressed': String(d === tankDays),
        onclick: () => loadTanks(d, 'period') }, `${d} days`))),
    groupChoices().length ? h('div', { class: 'segmented', role: 'group', 'aria-label': 'Group the tanks by', id: 'tank-group-by' },
      groupChoices().map((g) => h('button', { type: 'button', class: 'seg', 'data-group-by': g, 'aria-pressed': String(g === tankGroup),
        onclick: () => { tankGroup = g; loadTanks(tankDays, 'group'); } }, g ? `By ${g}` : 'Each tank'))) : null);

  const loadTanks = async (days, keepFocus) => {
    tankDays = days;
    const mine = {};
    tankRequest = mine;
    const refocus = () => {
      const selector = keepFocus === 'group' ? `#tank-group-by button[data-group-by="${tankGroup}"]`
        : keepFocus ? `#tank-period button[data-days="${days}"]` : null;
      const b = selector && $(selector, tanksBox);
      if (b) b.focus();
    };
    tanksBox.replaceChildren(tanksHead(), loading(days ? `Fetching the tanks of the last ${days} days…` : 'Fetching the tanks…'));
    refocus();
    // Without the index's default (not loaded), days is left out and the API's default applies.
    const query = new URLSearchParams();
    if (days) query.set('days', String(days));
    if (tankGroup) query.set('group_by', tankGroup);
    const res = await api(`${path}/tanks` + (query.toString() ? `?${query}` : ''));
    if (!current('player', token) || tankRequest !== mine) return;
    if (res.ok) {
      tanksLoaded = true;
      if (!days && res.data && Number.isInteger(res.data.days)) { days = res.data.days; tankDays = days; }
      tanksBox.replaceChildren(tanksHead(), renderTanks(res.data || {}, days, tankSort),
        csvLink('tanks', res.path, 'tanks-csv', 'The tanks (in the API’s order)') || '', rateLine(res));
      refocus();
    } else {
      const code = res.error && res.error.code;
      tanksBox.replaceChildren(tanksHead(), explainedError(res, () => loadTanks(days), code === 'no_history'
        ? 'No per-tank records for this player yet: the tank table fills in once the tracker has stored this player’s tanks.' : null));
      refocus();
    }
    settle(tanksBox);
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
      settle(profileBox, todayBox, recentsBox, tanksBox, historyBox);
      return;
    }
    const data = res.data || {};
    const onRefresh = (status, button) => refreshLater(status, button, RATINGS_REFRESH_DELAY);
    profileBox.replaceChildren(renderProfile(data, region, onRefresh), rateLine(res),
      shareBox(`/player/${encodeURIComponent(id)}/${encodeURIComponent(region)}`, path, {}, data.nickname || `Account ${id}`));
    if (!isRefresh) {
      todayCard(region, id).then((card) => { if (current('player', token)) todayBox.replaceChildren(card); })
        .finally(() => settle(todayBox));
    }
    settle(profileBox);
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
