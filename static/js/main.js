/* statsapi site: documentation rendered from the live index, and a live explorer.
 * Plain browser JavaScript as ES modules, no build step, no framework. Every fact about the API
 * (endpoints, limits, parameters, errors, regions, games) comes from GET /api/v1.
 * All API text is inserted with textContent (never innerHTML).
 *
 * Modules: render.js (DOM helpers, formatting, generic rendering), api.js (requests, errors,
 * index parameters), docs.js (endpoint and error docs), explorer.js (forms, tabs, routing),
 * charts.js, player.js, tanks.js (a player's tanks), history.js, clan.js, tankstats.js (the tanks
 * page), marks.js (a region's marks of excellence), tank.js (a tank's page), expected.js (a
 * region's WN8 expected values), online.js, dumps.js (the daily bulk files), status.js, search.js. */

import { $ } from './render.js';
import { loading } from './api.js';
import { bindForms, fillForms, route } from './explorer.js';
import { loadIndex } from './docs.js';
import { bindSearch } from './search.js';

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
