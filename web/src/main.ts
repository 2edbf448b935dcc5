// The dashboard's entry: styles, the token message, and the hash router that swaps pages.

import 'uplot/dist/uPlot.min.css';
import './style.css';
import { setUnauthorizedHandler } from './api';
import { h, replaceChildren } from './dom';
import { type Page, parseRoute } from './router';
import { jobPage, jobsPage } from './jobs';
import { runsPage } from './runs';
import { showAuthBanner } from './widgets';
import { workspacePage } from './workspace';

setUnauthorizedHandler(showAuthBanner);

const app = document.getElementById('app') ?? document.body.appendChild(h('div', { id: 'app' }));
let current: Page | null = null;

function missingPage(hash: string): Page {
  return {
    root: h(
      'div',
      { class: 'page', testid: 'not-found' },
      h('h1', null, 'Not found'),
      h('p', null, 'No page at ', h('code', null, `#${hash}`), '. '),
      h('a', { href: '#/', class: 'btn' }, '← Runs'),
    ),
    title: 'runmon',
    destroy() {},
  };
}

function route(): void {
  current?.destroy();
  current = null;
  window.__runmonCharts.clear();
  const r = parseRoute(location.hash);
  const page =
    r.kind === 'runs'
      ? runsPage(r.query)
      : r.kind === 'workspace'
        ? workspacePage(r.dirs, r.query)
        : r.kind === 'jobs'
          ? jobsPage()
          : r.kind === 'job'
            ? jobPage(r.id, r.query)
            : missingPage(r.hash);
  current = page;
  document.title = page.title;
  replaceChildren(app, page.root);
  window.scrollTo(0, 0);
}

window.addEventListener('hashchange', route);
route();
