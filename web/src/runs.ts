// The runs table (#/): server-side sorting, filtering and paging (a logdir may hold 10,000 runs), a
// selection that survives paging for "Compare N runs", a link from each node of a distributed job to the
// job's view (jobs.ts), and a refresh when the server says the list changed. The table state lives in the
// hash's query (#/?sort=name&order=asc&q=x&offset=100) so a
// reload or the back button returns to the same page.

import { errorText, fetchRuns, isAbort, type RunSummary, type RunsPage } from './api';
import { button, h, replaceChildren } from './dom';
import { EventStream } from './events';
import { formatDuration, formatTime } from './format';
import { jobHash, runsHash, type Page } from './router';
import { stateBadge } from './widgets';

const kPageSize = 100;
const kMaxCompare = 16;
const kFilterDebounceMs = 200;

type SortKey = 'name' | 'id' | 'state' | 'start' | 'duration' | 'host';
const kSortKeys: readonly SortKey[] = ['name', 'id', 'state', 'start', 'duration', 'host'];

interface Column {
  label: string;
  sort?: SortKey;
  cls: string;
}

const kColumns: Column[] = [
  { label: 'Name', sort: 'name', cls: 'col-name' },
  { label: 'ID', sort: 'id', cls: 'col-id' },
  { label: 'State', sort: 'state', cls: 'col-state' },
  { label: 'Start', sort: 'start', cls: 'col-start' },
  { label: 'Duration', sort: 'duration', cls: 'col-duration' },
  { label: 'Host', sort: 'host', cls: 'col-host' },
  { label: 'Command', cls: 'col-command' },
  { label: 'GPU', cls: 'col-gpu' },
];

interface TableState {
  sort: SortKey;
  order: 'asc' | 'desc';
  q: string;
  offset: number;
}

// Kept across pages and visits to a workspace.
const selected = new Set<string>();

function parseState(query: URLSearchParams): TableState {
  const sort = query.get('sort') as SortKey | null;
  const offset = Number(query.get('offset') ?? '0');
  return {
    sort: sort && kSortKeys.includes(sort) ? sort : 'start',
    order: query.get('order') === 'asc' ? 'asc' : 'desc',
    q: query.get('q') ?? '',
    offset: Number.isInteger(offset) && offset > 0 ? offset : 0,
  };
}

function stateQuery(s: TableState): string {
  const p = new URLSearchParams();
  if (s.sort !== 'start') p.set('sort', s.sort);
  if (s.order !== 'desc') p.set('order', s.order);
  if (s.q) p.set('q', s.q);
  if (s.offset) p.set('offset', String(s.offset));
  const qs = p.toString();
  return qs ? `#/?${qs}` : '#/';
}

export function runsPage(query: URLSearchParams): Page {
  const st = parseState(query);
  let page: RunsPage | null = null;
  let abort: AbortController | null = null;
  let filterTimer: number | null = null;
  let refreshTimer: number | null = null;
  let lastLoad = 0;

  const filter = h('input', {
    type: 'search',
    class: 'filter',
    testid: 'runs-filter',
    placeholder: 'Filter: name, id, host, command, project, GPU',
    'aria-label': 'Filter runs',
    value: st.q,
  });
  filter.value = st.q;
  const logdirEl = h('span', { class: 'logdir', testid: 'logdir' });
  const compareBtn = button('Compare', { class: 'btn btn-primary', testid: 'compare-button' }, () => {
    if (selected.size === 0 || selected.size > kMaxCompare) return;
    location.hash = runsHash([...selected]);
  });
  const clearBtn = button('Clear selection', { class: 'btn', testid: 'clear-selection' }, () => {
    selected.clear();
    render();
  });
  const statusEl = h('div', { class: 'status', testid: 'runs-status', role: 'status' });
  const selectPage = h('input', { type: 'checkbox', testid: 'select-page', 'aria-label': 'Select all runs on this page' });
  const headRow = h('tr', null, h('th', { class: 'col-select' }, selectPage));
  const tbody = h('tbody', { testid: 'runs-body' });
  const table = h('table', { class: 'runs', testid: 'runs-table' }, h('thead', null, headRow), tbody);
  const rangeEl = h('span', { class: 'range', testid: 'runs-range' });
  const prevBtn = button('‹ Prev', { class: 'btn', testid: 'runs-prev' }, () => go(st.offset - kPageSize));
  const nextBtn = button('Next ›', { class: 'btn', testid: 'runs-next' }, () => go(st.offset + kPageSize));

  const sortButtons = new Map<SortKey, HTMLButtonElement>();
  for (const col of kColumns) {
    const th = h('th', { class: col.cls });
    if (col.sort) {
      const key = col.sort;
      const b = button(col.label, { class: 'sort', testid: `sort-${key}`, title: `Sort by ${col.label.toLowerCase()}` }, () => {
        if (st.sort === key) st.order = st.order === 'asc' ? 'desc' : 'asc';
        else {
          st.sort = key;
          st.order = key === 'start' || key === 'duration' ? 'desc' : 'asc';
        }
        st.offset = 0;
        load();
      });
      sortButtons.set(key, b);
      th.appendChild(b);
    } else {
      th.textContent = col.label;
    }
    headRow.appendChild(th);
  }

  selectPage.addEventListener('change', () => {
    for (const r of page?.runs ?? []) {
      if (selectPage.checked) selected.add(r.dir);
      else selected.delete(r.dir);
    }
    render();
  });

  filter.addEventListener('input', () => {
    if (filterTimer !== null) clearTimeout(filterTimer);
    filterTimer = window.setTimeout(() => {
      filterTimer = null;
      if (filter.value === st.q) return;
      st.q = filter.value;
      st.offset = 0;
      load();
    }, kFilterDebounceMs);
  });

  const root = h(
    'div',
    { class: 'page runs-page', testid: 'runs-page' },
    h(
      'div',
      { class: 'toolbar' },
      h('h1', null, 'Runs'),
      h('a', { href: '#/jobs', class: 'btn', testid: 'nav-jobs', title: 'Runs grouped by the job their nodes ran' }, 'Jobs'),
      logdirEl,
      filter,
      h('div', { class: 'pager' }, prevBtn, rangeEl, nextBtn),
      h('span', { class: 'spacer' }),
      clearBtn,
      compareBtn,
    ),
    statusEl,
    h('div', { class: 'table-wrap' }, table),
  );

  function go(offset: number): void {
    st.offset = Math.max(0, offset);
    load();
  }

  function load(): void {
    history.replaceState(null, '', stateQuery(st));
    abort?.abort();
    const ac = new AbortController();
    abort = ac;
    lastLoad = Date.now();
    root.classList.add('busy');
    fetchRuns({ offset: st.offset, limit: kPageSize, sort: st.sort, order: st.order, q: st.q || null }, ac.signal)
      .then((p) => {
        if (ac.signal.aborted) return;
        page = p;
        // The list shrank under this page (or the hash asked for too much): go to the last page.
        if (p.runs.length === 0 && p.total > 0 && st.offset > 0) {
          st.offset = Math.floor((p.total - 1) / kPageSize) * kPageSize;
          load();
          return;
        }
        replaceChildren(statusEl);
        render();
      })
      .catch((e: unknown) => {
        if (isAbort(e) || ac.signal.aborted) return;
        replaceChildren(statusEl, h('div', { class: 'error' }, `Could not load the runs: ${errorText(e)}`));
      })
      .finally(() => {
        if (abort === ac) {
          abort = null;
          root.classList.remove('busy');
        }
      });
  }

  function row(r: RunSummary): HTMLTableRowElement {
    const check = h('input', { type: 'checkbox', testid: 'run-select', 'aria-label': `Select ${r.name || r.dir}` });
    check.checked = selected.has(r.dir);
    check.addEventListener('change', () => {
      if (check.checked) selected.add(r.dir);
      else selected.delete(r.dir);
      renderSelection();
    });
    const link = h('a', { href: runsHash([r.dir]), testid: 'run-link', class: 'run-name', title: r.name || r.dir }, r.name || r.dir);
    const nameCell = h('td', { class: 'col-name' }, link);
    if (r.jobId !== null) {
      // A node of a distributed job: its job's view of all the nodes.
      nameCell.appendChild(
        h(
          'a',
          { href: jobHash(r.jobId), class: 'job-ref', testid: 'run-job-link', title: `All the nodes of job ${r.jobId}` },
          `job ${r.jobId} · node ${r.nodeRank || '?'}`,
        ),
      );
    }
    if (r.warning !== null) {
      nameCell.appendChild(
        h('span', { class: 'warn-icon', testid: 'run-warning', title: r.warning, role: 'img', 'aria-label': `Warning: ${r.warning}` }, '⚠'),
      );
    }
    const gpu = r.gpu ? (r.gpuCount > 1 ? `${r.gpuCount}× ${r.gpu}` : r.gpu) : '–';
    const tr = h(
      'tr',
      { testid: 'run-row', 'data-run-dir': r.dir, 'data-state': r.state },
      h('td', { class: 'col-select' }, check),
      nameCell,
      h('td', { class: 'col-id mono', testid: 'run-id' }, r.id || '–'),
      h('td', { class: 'col-state' }, stateBadge(r.state)),
      h('td', { class: 'col-start', testid: 'run-start' }, formatTime(r.start)),
      h('td', { class: 'col-duration', testid: 'run-duration' }, formatDuration(r.duration)),
      h('td', { class: 'col-host', testid: 'run-host' }, r.host || '–'),
      h('td', { class: 'col-command mono', testid: 'run-command', title: r.command }, r.command || '–'),
      h('td', { class: 'col-gpu', testid: 'run-gpu', title: r.gpu }, gpu),
    );
    if (selected.has(r.dir)) tr.classList.add('selected');
    return tr;
  }

  function renderSelection(): void {
    const n = selected.size;
    compareBtn.textContent = n === 1 ? 'Compare 1 run' : `Compare ${n} runs`;
    compareBtn.disabled = n === 0 || n > kMaxCompare;
    compareBtn.title = n > kMaxCompare ? `At most ${kMaxCompare} runs at once` : '';
    clearBtn.hidden = n === 0;
    const runs = page?.runs ?? [];
    const onPage = runs.filter((r) => selected.has(r.dir)).length;
    selectPage.checked = runs.length > 0 && onPage === runs.length;
    selectPage.indeterminate = onPage > 0 && onPage < runs.length;
    for (const tr of tbody.querySelectorAll<HTMLTableRowElement>('tr[data-run-dir]')) {
      tr.classList.toggle('selected', selected.has(tr.dataset.runDir ?? ''));
    }
  }

  function render(): void {
    const p = page;
    logdirEl.textContent = p?.logdir ?? '';
    for (const [key, b] of sortButtons) {
      const active = key === st.sort;
      b.textContent = kColumns.find((c) => c.sort === key)?.label ?? key;
      if (active) b.appendChild(h('span', { class: 'arrow' }, st.order === 'asc' ? ' ▲' : ' ▼'));
      b.parentElement?.setAttribute('aria-sort', active ? (st.order === 'asc' ? 'ascending' : 'descending') : 'none');
      b.classList.toggle('active', active);
    }
    if (!p) {
      prevBtn.disabled = true;
      nextBtn.disabled = true;
      renderSelection();
      return;
    }
    if (p.runs.length === 0) {
      replaceChildren(
        tbody,
        h('tr', { class: 'empty' }, h('td', { colspan: kColumns.length + 1, testid: 'runs-empty' }, st.q ? 'No runs match the filter.' : 'No runs in this logdir yet.')),
      );
    } else {
      replaceChildren(tbody, ...p.runs.map(row));
    }
    const from = p.runs.length ? p.offset + 1 : 0;
    const to = p.offset + p.runs.length;
    rangeEl.textContent = `${from}-${to} of ${p.total}`;
    prevBtn.disabled = p.offset <= 0;
    nextBtn.disabled = to >= p.total;
    renderSelection();
  }

  // The list changed on the server: reload, at most once per second.
  function refresh(): void {
    if (refreshTimer !== null) return;
    const wait = Math.max(0, lastLoad + 1000 - Date.now());
    refreshTimer = window.setTimeout(() => {
      refreshTimer = null;
      load();
    }, wait);
  }

  const events = new EventStream('/api/events', { runs: refresh });
  render();
  load();

  return {
    root,
    title: 'runmon: runs',
    destroy() {
      events.close();
      abort?.abort();
      if (filterTimer !== null) clearTimeout(filterTimer);
      if (refreshTimer !== null) clearTimeout(refreshTimer);
    },
  };
}
