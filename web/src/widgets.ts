// Small shared pieces: the state badge, the page-wide messages (the token banner, short notices).

import type { RunState } from './api';
import { h, replaceChildren } from './dom';

export function stateBadge(state: RunState): HTMLElement {
  // The class comes from the closed set of states (api.ts maps anything else to "unknown"), spaces as '-'.
  const cls = `state-${state.replace(/ /g, '-')}`;
  return h('span', { class: `badge ${cls}`, testid: 'state-badge', 'data-state': state }, state);
}

let banner: HTMLElement | null = null;

export function showAuthBanner(): void {
  if (banner) return;
  banner = h(
    'div',
    { class: 'auth-banner', testid: 'auth-error', role: 'alert' },
    h('strong', null, 'This server needs a token: '),
    'open the URL printed by runmon serve (it ends in ?token=…).',
  );
  document.body.prepend(banner);
}

let toastEl: HTMLElement | null = null;
let toastTimer: number | null = null;

export function toast(text: string, error = false): void {
  if (!toastEl) {
    toastEl = h('div', { class: 'toast', testid: 'toast', role: 'status' });
    document.body.appendChild(toastEl);
  }
  replaceChildren(toastEl, text);
  toastEl.classList.toggle('error', error);
  toastEl.hidden = false;
  if (toastTimer !== null) clearTimeout(toastTimer);
  toastTimer = window.setTimeout(() => {
    if (toastEl) toastEl.hidden = true;
  }, error ? 8000 : 3000);
}
