/* The session overlay: the figures of /player/{account}/{region}/session, pushed by its stream
 * (EventSource), polled every 15 s when the stream fails. All text via textContent. */

const API = '/api/v1';
const FIELDS = {
  battles: ['Battles', (s) => String(s.battles)],
  win_rate: ['Win rate', (s) => (s.win_rate == null ? '—' : `${s.win_rate.toFixed(1)} %`)],
  avg_damage: ['Damage', (s) => (s.avg_damage == null ? '—' : Math.round(s.avg_damage).toLocaleString('en'))],
  wn8: ['WN8', (s) => (s.wn8 == null ? '—' : Math.round(s.wn8).toLocaleString('en'))],
  avg_frags: ['Frags', (s) => (s.avg_frags == null ? '—' : s.avg_frags.toFixed(2))],
  avg_combined_damage: ['Combined', (s) => (s.avg_combined_damage == null ? '—' : Math.round(s.avg_combined_damage).toLocaleString('en'))],
};
const DEFAULT_FIELDS = ['battles', 'win_rate', 'avg_damage', 'wn8'];
const WN8_SCALE = [[300, 'very_bad'], [450, 'bad'], [650, 'below_average'], [900, 'average'], [1200, 'above_average'],
  [1600, 'good'], [2000, 'very_good'], [2450, 'great'], [2900, 'unicum']];
const POLL_SECONDS = 15;

export function wn8Band(value) {
  if (typeof value !== 'number' || !Number.isFinite(value)) return null;
  for (const [upper, name] of WN8_SCALE) if (value < upper) return name;
  return 'super_unicum';
}

export function options(search) {
  const q = new URLSearchParams(search);
  const fields = (q.get('fields') || '').split(',').map((f) => f.trim()).filter((f) => f in FIELDS);
  let since = q.get('since') || 'today';
  if (since === 'now') since = String(Math.floor(Date.now() / 1000));
  return {
    region: q.get('region') || 'eu',
    account: q.get('account') || '',
    since,
    fields: fields.length ? fields : DEFAULT_FIELDS,
    theme: q.get('theme') === 'light' ? 'light' : 'dark',
  };
}

function show(opts, session) {
  const root = document.getElementById('overlay');
  const figures = document.getElementById('overlay-figures');
  const items = opts.fields.map((name) => {
    const [title, format] = FIELDS[name];
    const box = document.createElement('div');
    box.className = `overlay-figure ${name}`;
    if (name === 'wn8') {
      const band = wn8Band(session.wn8);
      if (band) box.classList.add(`wn8-${band}`);
    }
    const dt = document.createElement('dt');
    dt.textContent = title;
    const dd = document.createElement('dd');
    dd.textContent = format(session);
    box.append(dt, dd);
    return box;
  });
  figures.replaceChildren(...items);
  figures.hidden = false;
  const tank = document.getElementById('overlay-tank');
  const last = (session.tanks || [])[0];
  tank.hidden = !last;
  if (last) tank.textContent = `${last.name || `Tank ${last.tank_id}`}: ${last.period.battles} battles`;
  root.dataset.state = 'live';
  root.dataset.asOf = String(session.as_of);
}

function say(text, state) {
  const root = document.getElementById('overlay');
  root.dataset.state = state;
  document.getElementById('overlay-message').textContent = text;
}

async function poll(opts, path) {
  try {
    const response = await fetch(`${API}${path}`);
    const body = await response.json();
    if (body.success) show(opts, body.data);
    else say(`${body.error.code}: ${body.error.message}`, 'error');
  } catch (err) {
    say('The stats service cannot be reached; trying again.', 'error');
  }
  setTimeout(() => poll(opts, path), POLL_SECONDS * 1000);
}

function start() {
  const opts = options(location.search);
  document.getElementById('overlay').classList.add(opts.theme);
  if (!/^[0-9]{1,20}$/.test(opts.account)) {
    say('Add ?account=<account id>&region=eu to the address.', 'error');
    return;
  }
  const path = `/player/${opts.account}/${encodeURIComponent(opts.region)}/session?since=${encodeURIComponent(opts.since)}`;
  if (!('EventSource' in window)) {
    poll(opts, path);
    return;
  }
  const source = new EventSource(`${API}${path.replace('/session?', '/session/stream?')}`);
  let polling = false;
  source.addEventListener('session', (event) => show(opts, JSON.parse(event.data)));
  source.addEventListener('error', () => {
    // The stream refused (a bad parameter, a cap) or dropped: EventSource retries a dropped one;
    // a refused one is closed, and the page polls instead.
    if (source.readyState === EventSource.CLOSED && !polling) {
      polling = true;
      poll(opts, path);
    }
  });
}

if (typeof document !== 'undefined') start();
