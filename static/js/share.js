/* "Share" and "Embed" of a view (a player, a clan, a tank, a session): the page's real URL, whose
 * link preview is its card, the card itself as the API serves it (?format=png|svg), and the banner
 * (size=banner) as HTML and BBCode for a forum signature or a web page. */

import { h } from './render.js';

const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text) => String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]);

/** The card's URL: the answer's API path with its own query and the card's options. */
export function cardUrl(apiPath, query, options) {
  const q = new URLSearchParams({ ...query, ...options });
  return `${location.origin}${apiPath}?${q.toString()}`;
}

function copyField(id, labelText, value, rows) {
  const field = rows
    ? h('textarea', { id, readonly: '', rows: String(rows), spellcheck: 'false' })
    : h('input', { id, type: 'text', readonly: '', size: 60 });
  field.value = value;
  const copy = h('button', { type: 'button', class: 'btn btn-small' }, 'Copy');
  copy.addEventListener('click', async () => {
    field.select();
    try { await navigator.clipboard.writeText(value); copy.textContent = 'Copied'; } catch { copy.textContent = 'Select and copy'; }
  });
  return h('label', { class: 'share-field' }, labelText, field, copy);
}

/** The Share and Embed boxes of a view: `pagePath` its real URL's path (/player/{id}/{region}),
 * `apiPath` its answer's (/api/v1/...), `query` what both carry (?since=, ?days=), `what` its name. */
export function shareBox(pagePath, apiPath, query, what) {
  const q = new URLSearchParams(query).toString();
  const page = `${location.origin}${pagePath}${q ? `?${q}` : ''}`;
  const png = cardUrl(apiPath, query, { format: 'png' });
  const svg = cardUrl(apiPath, query, { format: 'svg' });
  const banner = cardUrl(apiPath, query, { format: 'png', size: 'banner' });
  const alt = `${what} on statsapi`;
  const html = `<a href="${escapeHtml(page)}"><img src="${escapeHtml(banner)}" width="600" height="160" alt="${escapeHtml(alt)}"></a>`;
  const bbcode = `[url=${page}][img]${banner}[/img][/url]`;
  return h('div', { class: 'share' },
    h('details', { class: 'share-box', id: 'share' },
      h('summary', null, 'Share'),
      copyField('share-link', 'Link ', page),
      h('p', { class: 'hint' }, 'A chat or a social network shows this card under the link.'),
      h('img', { class: 'share-card', id: 'share-card', src: png, width: '600', height: '315', alt, loading: 'lazy' }),
      h('p', null, h('a', { href: png, id: 'share-png' }, 'PNG'), ' · ', h('a', { href: svg, id: 'share-svg' }, 'SVG'),
        ' · ', h('a', { href: cardUrl(apiPath, query, { format: 'png', theme: 'light' }) }, 'light PNG'))),
    h('details', { class: 'share-box', id: 'embed' },
      h('summary', null, 'Embed'),
      h('img', { class: 'share-banner', id: 'share-banner', src: banner, width: '600', height: '160', alt, loading: 'lazy' }),
      copyField('embed-html', 'HTML ', html, 3),
      copyField('embed-bbcode', 'BBCode (forums) ', bbcode, 2)));
}
