/* While the demo seeds (GET /status's `demo`), a banner on every view says so with its progress,
 * polling the status every few seconds; once it is ready the view on screen is drawn again
 * (its tables were empty or partial). Fixed at the bottom of the screen: it moves nothing. */

import { $, h, NUM } from './render.js';
import { API, api } from './api.js';

export const SEED_POLL_MS = 3000;

function progressText(demo) {
  const steps = Number.isInteger(demo.total) && demo.total > 0 ? ` (${NUM.format(demo.done ?? 0)} of ${NUM.format(demo.total)})` : '';
  return `The demo data is being seeded: ${NUM.format(demo.percent ?? 0)} % — now ${demo.phase || 'starting'}${steps}. `
    + 'Tables fill as it goes; this view is drawn again when it is done.';
}

function banner() {
  let box = $('#seeding-banner');
  if (!box) {
    const bar = h('progress', { id: 'seeding-progress', max: 100, value: 0, 'aria-hidden': 'true' });
    box = h('div', { id: 'seeding-banner', class: 'seeding-banner', role: 'status', 'aria-live': 'polite' },
      h('p', { id: 'seeding-text' }), bar);
    document.body.append(box);
  }
  return box;
}

/** Ask /status until the seeding is over; `onReady` (the router's redraw) once it turns ready. */
export async function watchSeeding(onReady) {
  let seen = false;
  for (;;) {
    const res = await api(`${API}/status`, true);   // revalidated: the status is cacheable for seconds
    const demo = res.ok && res.data ? res.data.demo : undefined;
    if (demo && demo.state === 'seeding') {
      seen = true;
      const box = banner();
      box.hidden = false;
      $('#seeding-text', box).textContent = progressText(demo);
      $('#seeding-progress', box).value = Math.max(0, Math.min(100, Number(demo.percent) || 0));
    } else if (seen && demo && demo.state === 'failed') {
      $('#seeding-text', banner()).textContent = `The demo seeding failed (${demo.phase}): the tables hold what it had stored.`;
      $('#seeding-progress').hidden = true;
      return;
    } else if (!seen) {
      return;   // not seeding now (never here, or done before this page opened), or no status to read
    } else if (demo) {   // it was seeding and is over: the view is drawn again with the data
      banner().hidden = true;
      onReady();
      return;
    }   // else a read that failed while it seeds: ask again
    await new Promise((resolve) => { setTimeout(resolve, SEED_POLL_MS); });
  }
}
