/* The router: reads the address's #view/... and hands its arguments to that view's route function,
 * from the table main.js hands it ({view name: route(args, raw)}); it imports no view, so the
 * views (which open one another through nav.js) and the router form no circle of imports. */

import { state } from './api.js';
import { nav } from './nav.js';

let views = {};
// The tab a view belongs to: a tank's page and the expected values are the tanks tab's.
const TAB_OF = { tank: 'tanks', expected: 'tanks' };

export function showView(view) {
  document.querySelectorAll('#explorer > .panel').forEach((panel) => { panel.hidden = panel.id !== `panel-${view}`; });
  // A tank's page reached from the marks table stays in the marks tab.
  const selected = view === 'tank' && state.tankFrom === 'marks' ? 'marks' : TAB_OF[view] || view;
  document.querySelectorAll('.tabs .tab').forEach((tab) => {
    tab.setAttribute('aria-selected', String(tab.dataset.view === selected));
    tab.classList.toggle('active', tab.dataset.view === selected);
  });
}

const decoded = (part) => { try { return decodeURIComponent(part); } catch (e) { return part; } };

/** Route the hash: its view's function gets the decoded segments and the raw ones (a searched name
 * may hold any character). False for an ordinary in-page anchor (#endpoints, #errors...). */
export function routeAll() {
  const raw = location.hash.replace(/^#/, '').split('/').filter((p) => p !== '');
  let [view, ...rawArgs] = raw;
  document.documentElement.dataset.view = /^[a-z]+$/.test(view || '') ? view : '';
  let args = rawArgs.map(decoded);
  if (view === 'tank' && args.length < 2) [view, args, rawArgs] = ['tanks', [], []];   // no tank named: the table
  if (!Object.hasOwn(views, view)) {
    if (!location.hash) showView('player');
    return false;
  }
  showView(view);
  views[view](args, rawArgs);
  return true;
}

/** Take the views' table and become the way views open one another (nav.js). */
export function startRouter(table) {
  views = table;
  nav.go = (hash) => {
    if (location.hash === hash) routeAll();
    else location.hash = hash;
  };
  nav.navigate = (hash) => {   // another state of the page on screen: a history entry, no scroll
    if (location.hash !== hash) history.pushState(null, '', hash);
    routeAll();
  };
}
