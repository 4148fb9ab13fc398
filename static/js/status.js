/* The status view: the service's health and its figures. */

import { $, h, renderAny } from './render.js';
import { API, api, current, errorBox, loading, rateLine, takeToken } from './api.js';

// ---------------------------------------------------------------- status view
export async function loadStatus() {
  const token = takeToken('status');
  const out = $('#status-out');
  out.replaceChildren(loading('Fetching the service status…'));
  const res = await api(`${API}/status`);
  if (!current('status', token)) return;
  if (!res.ok) { out.replaceChildren(errorBox(res, loadStatus)); return; }
  const data = res.data || {};
  const health = data.health !== undefined ? String(data.health) : null;
  out.replaceChildren(
    health ? h('p', { class: 'health health-' + health.replace(/[^a-z_-]/gi, '') }, 'Health: ', h('strong', null, health)) : '',
    renderAny(data, {}, 0),
    h('div', { class: 'actions' }, h('button', { type: 'button', class: 'btn', onclick: loadStatus }, 'Reload')),
    rateLine(res));
}
