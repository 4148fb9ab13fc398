/* The overlay builder: the address of /overlay/ for a player (a streaming program's browser source)
 * from a form, with a live preview of it. The view lives in the hash: #overlay/{region}/{account_id}.
 * Also the player page's "today" (GET /player/{account_id}/{region}/session?since=today), and the session's
 * card (?format=png|svg) with its Share and Embed boxes. */

import { $, h, NUM, wn8Node } from './render.js';
import { API, api } from './api.js';
import { go } from './nav.js';
import { shareBox } from './share.js';

// The figures the overlay can show (static/overlay/overlay.js FIELDS), in its order.
export const OVERLAY_FIELDS = [
  ['battles', 'Battles'], ['win_rate', 'Win rate'], ['avg_damage', 'Damage'], ['wn8', 'WN8'],
  ['avg_frags', 'Frags'], ['avg_combined_damage', 'Combined damage'],
];
const DEFAULT_FIELDS = ['battles', 'win_rate', 'avg_damage', 'wn8'];

/** The overlay's address for the form's values (absolute: a streaming program needs the whole URL). */
export function overlayUrl(values) {
  const q = new URLSearchParams({ region: values.region, account: values.account, since: values.since });
  if (values.fields.join(',') !== DEFAULT_FIELDS.join(',')) q.set('fields', values.fields.join(','));
  if (values.theme !== 'dark') q.set('theme', values.theme);
  return `${location.origin}/overlay/?${q.toString()}`;
}

function formValues() {
  const f = $('#form-overlay').elements;
  const fields = OVERLAY_FIELDS.map(([name]) => name).filter((name) => f[`field-${name}`].checked);
  return {
    region: f.region.value,
    account: f.account.value.trim(),
    since: f.since.value,
    fields: fields.length ? fields : DEFAULT_FIELDS,
    theme: f.theme.value,
  };
}

function show() {
  const values = formValues();
  const out = $('#overlay-out');
  if (!/^[0-9]{1,20}$/.test(values.account)) {
    out.replaceChildren(h('p', { class: 'hint' }, 'Enter an account ID (a player’s page shows it) to build the overlay’s address.'));
    return;
  }
  const url = overlayUrl(values);
  const frame = h('iframe', { id: 'overlay-preview', class: 'overlay-preview', src: url, title: 'Overlay preview' });
  out.replaceChildren(
    h('label', { class: 'grow' }, 'Browser source URL ',
      h('input', { id: 'overlay-url', type: 'text', readonly: '', value: url, size: 80 })),
    h('p', { class: 'hint' }, 'Add it as a browser source (1920×1080 or 1280×720) in your streaming program; ',
      'the background is transparent. “since now” counts from when the source loads.'),
    h('div', { class: 'overlay-stage' }, frame),
    h('h4', null, 'Session card'),
    h('p', { class: 'hint' }, 'The session since the start of the UTC day as an image: its banner fits a stream’s corner or a forum signature (transparent around its panel).'),
    shareBox(`/player/${values.account}/${encodeURIComponent(values.region)}/session`,
      `${API}/player/${values.account}/${encodeURIComponent(values.region)}/session`, {}, `Session of ${values.account}`),
  );
}

export function bindOverlay() {
  const form = $('#form-overlay');
  const fields = $('#overlay-fields');
  fields.replaceChildren(...OVERLAY_FIELDS.map(([name, title]) => h('label', { class: 'check' },
    h('input', { type: 'checkbox', name: `field-${name}`, ...(DEFAULT_FIELDS.includes(name) ? { checked: '' } : {}) }), ` ${title}`)));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const v = formValues();
    if (/^[0-9]{1,20}$/.test(v.account)) go(`#overlay/${encodeURIComponent(v.region)}/${v.account}`);
    show();
  });
  form.addEventListener('change', () => show());
}

/** #overlay[/region/account]: the form set from the hash, the address and its preview. */
export function routeOverlay(args) {
  const f = $('#form-overlay').elements;
  if (args[0] && [...f.region.options].some((o) => o.value === args[0])) f.region.value = args[0];
  if (args[1]) f.account.value = args[1];
  show();
}

/** The player page's "today": the session since the start of the UTC day, and a link to its overlay. */
export async function todayCard(region, accountId) {
  const box = h('div', { class: 'today', id: 'player-today' }, h('h3', {}, 'Today'));
  const answer = await api(`${API}/player/${encodeURIComponent(accountId)}/${encodeURIComponent(region)}/session?since=today`);
  const link = h('a', { href: `#overlay/${encodeURIComponent(region)}/${accountId}` }, 'Stream overlay');
  if (!answer.ok) {
    box.append(h('p', { class: 'muted' }, 'No session today yet.'), link);
    return box;
  }
  const s = answer.data;
  box.append(
    h('p', { class: 'today-figures' },
      `${NUM.format(s.battles)} battle${s.battles === 1 ? '' : 's'}`,
      s.battles ? ` · ${NUM.format(s.win_rate)} % wins · ${NUM.format(s.avg_damage)} damage · WN8 ` : '',
      s.battles ? wn8Node(s.wn8) : ''),
    h('p', { class: 'muted' }, `Measured ${new Date(s.as_of * 1000).toISOString().slice(11, 16)} UTC`,
      s.watching ? ' · updated every minute while you watch' : ''),
    link,
  );
  return box;
}
