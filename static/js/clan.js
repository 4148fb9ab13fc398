/* The clan view: details and member averages, and the weekly digest. */

import { $, ago, h, isObj, label, renderAny, tile, utcText } from './render.js';
import { API, api, csvLink, current, errorBox, loading, rateLine, takeToken } from './api.js';
import { shareBox } from './share.js';

// ---------------------------------------------------------------- clan view
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

export async function loadClan(region, id) {
  const token = takeToken('clan');
  const detailsBox = h('div', { class: 'block', id: 'clan-details' }, loading('Fetching the clan…'));
  const weeklyBox = h('div', { class: 'block', id: 'clan-weekly' }, loading('Fetching the weekly digest…'));
  $('#clan-out').replaceChildren(detailsBox, weeklyBox);
  const path = `${API}/clan/${encodeURIComponent(id)}/${encodeURIComponent(region)}`;
  const details = async () => {
    const res = await api(path);
    if (!current('clan', token)) return;
    detailsBox.replaceChildren(res.ok ? renderClan(res.data || {}, region) : errorBox(res, () => { detailsBox.replaceChildren(loading('Fetching the clan…')); details(); }),
      res.ok ? csvLink('clan', res.path, 'clan-csv', 'The members') || '' : '', res.ok ? rateLine(res) : '',
      res.ok ? shareBox(`/clan/${encodeURIComponent(id)}/${encodeURIComponent(region)}`, path, {}, (res.data || {}).tag ? `[${res.data.tag}]` : `Clan ${id}`) : '');
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
