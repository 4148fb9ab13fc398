/* statsapi site: documentation rendered from the live index, and a live explorer.
 * Plain browser JavaScript as ES modules, no build step, no framework. Every fact about the API
 * (endpoints, limits, parameters, errors, regions, games) comes from GET /api/v1.
 * All API text is inserted with textContent (never innerHTML).
 *
 * Modules: render.js (DOM helpers, formatting, generic rendering), api.js (requests, errors,
 * index parameters), docs.js (endpoint and error docs), explorer.js (the forms and their views' routes),
 * charts.js, player.js, tanks.js (a player's tanks), history.js, clan.js, tankstats.js (the tanks
 * page), marks.js (a region's marks of excellence), tank.js (a tank's page), expected.js (a
 * region's WN8 expected values), online.js, dumps.js (the daily bulk files), status.js, search.js,
 * vehicles.js (the vehicle catalogue), strength.js (a tier's tier list) and roster.js (a battle's
 * players at once), whose route functions this module hands to router.js as a table (so the router
 * imports no view); share.js (a view's Share and Embed boxes); seeding.js (the demo seeding's
 * banner); nav.js (the views' way to another view: the router fills its go and navigate, so no
 * view imports the router). A page with a real URL (/player/{id}/{region}, ...) names its view in
 * its head (handlers/pages.py). */

import { $ } from './render.js';
import { loading } from './api.js';
import { startRouter, routeAll, showView } from './router.js';
import { bindForms, fillForms, routeClan, routeExpected, routeMarks, routeOnline, routePlayer, routeTank, routeTanks } from './explorer.js';
import { loadIndex, showReference } from './docs.js';
import { bindSearch } from './search.js';
import { bindVehicles, routeVehicles } from './vehicles.js';
import { bindStrength, fillStrength, routeStrength } from './strength.js';
import { bindRoster, routeRoster } from './roster.js';
import { routeRankings } from './rankings.js';
import { routeOverlay } from './overlaybuilder.js';
import { routeDumps } from './dumps.js';
import { loadStatus } from './status.js';
import { watchSeeding } from './seeding.js';

// The router's table: each view's route, given the hash's decoded segments after the view's name
// (and the raw ones: #vehicles/..., #strength/... and #roster/... parse their own, a searched name
// may hold any character).
const VIEWS = {
  player: routePlayer,
  clan: routeClan,
  tanks: routeTanks,
  marks: routeMarks,
  rankings: routeRankings,
  overlay: routeOverlay,
  tank: routeTank,
  expected: routeExpected,
  online: routeOnline,
  data: routeDumps,
  status: () => loadStatus(),
  vehicles: (args, raw) => routeVehicles(raw),
  strength: (args, raw) => routeStrength(raw),
  roster: (args, raw) => routeRoster(raw),
};

/** A page with a real URL (/player/{id}/{region}, /clan/..., /tank/..., a session's) names its view in
 * its head: the site opens that view, in the hash, keeping the page's address. */
function openPageView() {
  const view = document.querySelector('meta[name="statsapi:view"]');
  if (view && !location.hash) history.replaceState(null, '', `${location.pathname}${location.search}#${view.content}`);
}

/** An in-page anchor (#endpoints, #endpoint-player, #errors...): the reference it may point into
 * is drawn first (docs.js draws it when it nears the screen), then scrolled to. */
function openAnchor() {
  let target;
  try { target = document.getElementById(decodeURIComponent(location.hash.slice(1))); } catch (e) { return; }
  if (!target || target.closest('#endpoints, #errors')) {
    showReference();
    target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
  }
  if (target) target.scrollIntoView();
}

async function start() {
  startRouter(VIEWS);
  openPageView();
  bindForms();
  bindSearch();
  bindVehicles();
  bindStrength();
  bindRoster();
  fillForms();
  fillStrength();
  window.addEventListener('hashchange', () => {
    if (routeAll()) { $('#explorer').scrollIntoView({ block: 'start' }); return; }
    openAnchor();
  });
  // The view the address names is shown before the index loads (its forms fill and it routes after).
  const first = document.documentElement.dataset.view;
  if (first && document.getElementById(`panel-${first}`)) {
    showView(first);
    $('#explorer').scrollIntoView({ block: 'start' });   // at once: the index then fills the intro above it
  }
  $('#index-status').replaceChildren(loading('Loading the index…'));
  await loadIndex(!first);   // the home page's content is the reference below: drawn as it nears the screen
  fillForms();
  fillStrength();
  const routed = routeAll();
  if (routed && location.hash) $('#explorer').scrollIntoView({ block: 'start' });
  else if (location.hash && !routed) openAnchor();
  document.documentElement.dataset.ready = '1';
  // While the demo seeds: its banner, and this view drawn again once ready. Asked when the page is
  // idle, so the status's database reads do not queue before the view's own.
  const idle = window.requestIdleCallback || ((run) => setTimeout(run, 1000));
  idle(() => watchSeeding(routeAll), { timeout: 3000 });
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
