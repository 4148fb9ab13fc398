/* How a view opens another view without importing the router: main.js (the router) hands its
 * functions to `nav` at start, so the views import this leaf module and nothing imports them back.
 * `go`: a new view, scrolled to; `navigate`: another state of the view on screen (a sort, a page,
 * a period), a history entry without the scroll. */

export const nav = { go: (hash) => { location.hash = hash; }, navigate: (hash) => { location.hash = hash; } };

export function go(hash) {
  nav.go(hash);
}

export function navigate(hash) {
  nav.navigate(hash);
}
