/* statsapi site: documentation rendered from the live index, and a live explorer.
 * Plain browser JavaScript as ES modules, no build step, no framework. Every fact about the API
 * (endpoints, limits, parameters, errors, regions, games) comes from GET /api/v1.
 * All API text is inserted with textContent (never innerHTML).
 *
 * Modules: render.js (DOM helpers, formatting, generic rendering), api.js (requests, errors,
 * index parameters), docs.js (endpoint and error docs), explorer.js (forms, tabs, routing),
 * charts.js, player.js, tanks.js (a player's tanks), history.js, clan.js, tankstats.js (the tanks
 * page), marks.js (a region's marks of excellence), tank.js (a tank's page), expected.js (a
 * region's WN8 expected values), online.js, dumps.js (the daily bulk files), status.js, search.js,
 * vehicles.js (the vehicle catalogue), strength.js (a tier's tier list) and roster.js (a battle's
 * players at once), which are routed here; share.js (a view's Share and Embed boxes); nav.js
 * (the views' way to another view: this router hands it go and navigate, so no view imports the
 * router). A page with a real URL (/player/{id}/{region}, ...) names its view in its head (handlers/pages.py). */

import { $ } from './render.js';
import { loading } from './api.js';
import { bindForms, fillForms, route } from './explorer.js';
import { loadIndex } from './docs.js';
import { bindSearch } from './search.js';
import { bindVehicles, routeVehicles } from './vehicles.js';
import { nav } from './nav.js';
import { bindStrength, fillStrength, routeStrength } from './strength.js';
import { bindRoster, routeRoster } from './roster.js';

// The views routed here before explorer.js's route(): #vehicles/..., #strength/... and #roster/... (each
// module parses its own raw hash segments: a name searched may hold any character).
const PAGES = { vehicles: routeVehicles, strength: routeStrength, roster: routeRoster };

function showPage(view) {
  document.querySelectorAll('#explorer > .panel').forEach((panel) => { panel.hidden = panel.id !== `panel-${view}`; });
  document.querySelectorAll('.tabs .tab').forEach((tab) => {
    tab.setAttribute('aria-selected', String(tab.dataset.view === view));
    tab.classList.toggle('active', tab.dataset.view === view);
  });
}

/** Route the hash: one of PAGES, else explorer.js's views (which then hide these pages' panels). */
function routeAll() {
  const [view, ...args] = location.hash.replace(/^#/, '').split('/').filter((p) => p !== '');
  document.documentElement.dataset.view = /^[a-z]+$/.test(view || '') ? view : '';
  if (Object.hasOwn(PAGES, view)) {
    showPage(view);
    PAGES[view](args);
    return true;
  }
  const routed = route();
  // Another view, or none (the player's tab): these pages' panels go; an in-page anchor keeps them.
  if (routed || !view) for (const page of Object.keys(PAGES)) $(`#panel-${page}`).hidden = true;
  return routed;
}

nav.go = (hash) => {
  if (location.hash === hash) routeAll();
  else location.hash = hash;
};
nav.navigate = (hash) => {   // another state of the page on screen: a history entry, no scroll
  if (location.hash !== hash) history.pushState(null, '', hash);
  routeAll();
};

/** A page with a real URL (/player/{id}/{region}, /clan/..., /tank/..., a session's) names its view in
 * its head: the site opens that view, in the hash, keeping the page's address. */
function openPageView() {
  const view = document.querySelector('meta[name="statsapi:view"]');
  if (view && !location.hash) history.replaceState(null, '', `${location.pathname}${location.search}#${view.content}`);
}

async function start() {
  openPageView();
  bindForms();
  bindSearch();
  bindVehicles();
  bindStrength();
  bindRoster();
  fillForms();
  fillStrength();
  window.addEventListener('hashchange', () => {
    if (routeAll()) $('#explorer').scrollIntoView({ block: 'start' });
  });
  // The view the address names is shown before the index loads (its forms fill and it routes after).
  const first = document.documentElement.dataset.view;
  if (first && document.getElementById(`panel-${first}`)) {
    showPage(first);
    $('#explorer').scrollIntoView({ block: 'start' });   // at once: the index then fills the intro above it
  }
  $('#index-status').replaceChildren(loading('Loading the index…'));
  await loadIndex();
  fillForms();
  fillStrength();
  const routed = routeAll();
  if (routed && location.hash) $('#explorer').scrollIntoView({ block: 'start' });
  else if (location.hash && !routed) {
    const target = document.getElementById(location.hash.slice(1));
    if (target) target.scrollIntoView();
  }
  document.documentElement.dataset.ready = '1';
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
