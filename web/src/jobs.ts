// Jobs: the logdir's runs grouped by the job id their launcher gave (one run a node of a distributed job).
// #/jobs lists the jobs; #/jobs/<id> shows one job's nodes in one view: a metric picked from its nodes'
// keys, as a band of min / median / max across the nodes (the slowest node named at each point) or as one
// line per node (job_chart.ts), and the nodes with links to their runs. The picked metric and view live in
// the hash's query (#/jobs/4711?key=gpu.0.gpu&view=nodes), so a reload or a shared link shows the same.

import { ApiError, apiUrl, errorText, fetchJob, fetchJobs, isAbort, type JobDetail, type JobSummary } from './api';
import { button, h, replaceChildren } from './dom';
import { EventStream } from './events';
import { formatDuration, formatTime } from './format';
import { JobChart, type JobView } from './job_chart';
import { jobHash, runsHash, type Page } from './router';
import { stateBadge } from './widgets';

const kListLimit = 1000;
const kMaxWatched = 16; // the event stream watches at most 16 runs
const kReloadMs = 1000;
// Picked first when the job has them: the metrics where the slowest node shows.
const kPreferredKeys = ['gpu.0.gpu', 'gpu.process.0.gpu', 'cpu', 'cpu_percent'];

function stateCounts(job: JobSummary): HTMLElement {
  return h(
    'span',
    { class: 'job-states', testid: 'job-states' },
    ...job.states.map(([s, n]) => h('span', { class: 'job-state' }, stateBadge(s), job.states.length > 1 || n > 1 ? ` ${n}` : '')),
  );
}

export function jobsPage(): Page {
  let abort: AbortController | null = null;
  let refreshTimer: number | null = null;
  const statusEl = h('div', { class: 'status', testid: 'jobs-status', role: 'status' });
  const tbody = h('tbody', { testid: 'jobs-body' });
  const table = h(
    'table',
    { class: 'runs jobs', testid: 'jobs-table' },
    h(
      'thead',
      null,
      h('tr', null, ...['Job', 'Name', 'Launcher', 'Nodes', 'State', 'Start', 'Duration'].map((c) => h('th', null, c))),
    ),
    tbody,
  );
  const root = h(
    'div',
    { class: 'page jobs-page', testid: 'jobs-page' },
    h('div', { class: 'toolbar' }, h('a', { href: '#/', class: 'btn', testid: 'back-to-runs' }, '← Runs'), h('h1', null, 'Jobs')),
    statusEl,
    h('div', { class: 'table-wrap' }, table),
  );

  function row(j: JobSummary): HTMLTableRowElement {
    return h(
      'tr',
      { testid: 'job-row', 'data-job-id': j.jobId },
      h('td', { class: 'col-name' }, h('a', { href: jobHash(j.jobId), testid: 'job-link', class: 'run-name mono', title: j.jobId }, j.jobId)),
      h('td', { testid: 'job-name' }, j.name || '–'),
      h('td', { testid: 'job-launcher' }, j.launcher || '–'),
      h('td', { testid: 'job-node-count' }, String(j.nodeCount)),
      h('td', null, stateCounts(j)),
      h('td', { class: 'col-start' }, formatTime(j.start)),
      h('td', { class: 'col-duration' }, formatDuration(j.duration)),
    );
  }

  function load(): void {
    abort?.abort();
    const ac = new AbortController();
    abort = ac;
    fetchJobs({ limit: kListLimit }, ac.signal)
      .then((p) => {
        if (ac.signal.aborted) return;
        replaceChildren(statusEl, p.total > p.jobs.length ? `The newest ${p.jobs.length} of ${p.total} jobs.` : null);
        if (p.jobs.length === 0) {
          replaceChildren(
            tbody,
            h(
              'tr',
              { class: 'empty' },
              h(
                'td',
                { colspan: 7, testid: 'jobs-empty' },
                'No jobs in this logdir: runs recorded under a launcher (SLURM, torchrun, MPI, Kubernetes) are grouped here by their job id.',
              ),
            ),
          );
        } else {
          replaceChildren(tbody, ...p.jobs.map(row));
        }
      })
      .catch((e: unknown) => {
        if (isAbort(e) || ac.signal.aborted) return;
        replaceChildren(statusEl, h('div', { class: 'error' }, `Could not load the jobs: ${errorText(e)}`));
      });
  }

  const events = new EventStream('/api/events', {
    runs: () => {
      if (refreshTimer !== null) return;
      refreshTimer = window.setTimeout(() => {
        refreshTimer = null;
        load();
      }, kReloadMs);
    },
  });
  load();
  return {
    root,
    title: 'runmon: jobs',
    destroy() {
      events.close();
      abort?.abort();
      if (refreshTimer !== null) clearTimeout(refreshTimer);
    },
  };
}

function pickKey(job: JobDetail, wanted: string | null): string | null {
  const keys = job.keys.map((k) => k.key);
  if (wanted && keys.includes(wanted)) return wanted;
  for (const k of kPreferredKeys) if (keys.includes(k)) return k;
  return job.keys.find((k) => k.unit === '%')?.key ?? keys[0] ?? null;
}

export function jobPage(id: string, query: URLSearchParams): Page {
  let job: JobDetail | null = null;
  let key: string | null = query.get('key');
  let view: JobView = query.get('view') === 'nodes' ? 'nodes' : 'band';
  let chart: JobChart | null = null;
  let events: EventStream | null = null;
  let watched = '';
  let destroyed = false;
  let reloadTimer: number | null = null;
  let abort: AbortController | null = null;

  const titleEl = h('h1', { testid: 'job-title' }, `Job ${id}`);
  const statusEl = h('div', { class: 'status', testid: 'job-status', role: 'status' });
  const factsEl = h('dl', { class: 'facts', testid: 'job-facts' });
  const metric = h('select', { class: 'job-metric', testid: 'job-metric', 'aria-label': 'Metric' });
  metric.disabled = true;
  const bandBtn = button('Band', { class: 'seg', testid: 'view-band', title: 'Min–max across the nodes, median line' }, () => setView('band'));
  const nodesBtn = button('Per node', { class: 'seg', testid: 'view-nodes', title: 'One line per node' }, () => setView('nodes'));
  const chartSlot = h('div', { class: 'job-chart-slot' });
  const nodesBody = h('tbody', { testid: 'job-nodes-body' });
  const compareEl = h('span', { class: 'job-compare' });
  const nodesTable = h(
    'table',
    { class: 'runs job-nodes', testid: 'job-nodes-table' },
    h('thead', null, h('tr', null, ...['Node', 'Run', 'State', 'Host', 'Start', 'Duration'].map((c) => h('th', null, c)))),
    nodesBody,
  );
  const root = h(
    'div',
    { class: 'page job-page', testid: 'job-page' },
    h(
      'div',
      { class: 'toolbar' },
      h('a', { href: '#/jobs', class: 'btn', testid: 'back-to-jobs' }, '← Jobs'),
      titleEl,
      h('span', { class: 'spacer' }),
      metric,
      h('div', { class: 'segmented', role: 'group', 'aria-label': 'View', testid: 'view-toggle' }, bandBtn, nodesBtn),
    ),
    statusEl,
    h('article', { class: 'run-card job-card', testid: 'job-header' }, factsEl),
    chartSlot,
    h('section', { class: 'section' }, h('h2', { class: 'section-title' }, 'Nodes ', compareEl), h('div', { class: 'table-wrap' }, nodesTable)),
  );

  function saveQuery(): void {
    const q = new URLSearchParams();
    if (key) q.set('key', key);
    if (view !== 'band') q.set('view', view);
    history.replaceState(null, '', jobHash(id, q));
  }

  function renderView(): void {
    bandBtn.setAttribute('aria-pressed', String(view === 'band'));
    nodesBtn.setAttribute('aria-pressed', String(view === 'nodes'));
  }

  function setView(v: JobView): void {
    if (v === view) return;
    view = v;
    renderView();
    chart?.setView(v);
    saveQuery();
  }

  metric.addEventListener('change', () => {
    key = metric.value;
    chart?.setKey(key);
    saveQuery();
  });

  function render(j: JobDetail): void {
    titleEl.textContent = j.name ? `Job ${j.jobId} · ${j.name}` : `Job ${j.jobId}`;
    document.title = `runmon: job ${j.jobId}`;
    const facts: [string, string, string][] = [
      ['Nodes', String(j.nodeCount), 'job-node-count'],
      ['Launcher', j.launcher || '–', 'job-launcher'],
      ['Start', formatTime(j.start), 'job-start'],
      ['Duration', formatDuration(j.duration), 'job-duration'],
    ];
    replaceChildren(
      factsEl,
      ...facts.map(([k, v, t]) => h('div', { class: 'fact' }, h('dt', null, k), h('dd', { testid: t }, v))),
      h('div', { class: 'fact' }, h('dt', null, 'State'), h('dd', null, stateCounts(j))),
    );
    replaceChildren(
      statusEl,
      j.warning ? h('div', { class: 'warn', testid: 'job-warning' }, `⚠ ${j.warning}`) : null,
      j.loading ? h('div', { class: 'muted', testid: 'job-loading' }, 'reading the nodes’ logs…') : null,
    );
    const dirs = j.nodes.map((n) => n.dir);
    replaceChildren(
      compareEl,
      dirs.length > 1
        ? h('a', { href: runsHash(dirs.slice(0, 16)), class: 'btn btn-small', testid: 'job-compare', title: 'The nodes’ runs side by side (at most 16)' }, 'Compare the runs')
        : null,
    );
    replaceChildren(
      nodesBody,
      ...j.nodes.map((n) =>
        h(
          'tr',
          { testid: 'job-node-row', 'data-run-dir': n.dir, 'data-node-rank': n.nodeRank },
          h('td', { testid: 'job-node-name' }, n.node),
          h('td', { class: 'col-name' }, h('a', { href: runsHash([n.dir]), testid: 'job-node-run', class: 'run-name', title: n.dir }, n.runName || n.dir)),
          h('td', null, stateBadge(n.state)),
          h('td', { class: 'col-host' }, n.host || '–'),
          h('td', { class: 'col-start' }, formatTime(n.start)),
          h('td', { class: 'col-duration' }, formatDuration(n.duration)),
        ),
      ),
    );
    // The metric picker: the nodes' keys, titled from the catalog.
    const picked = pickKey(j, key);
    replaceChildren(metric, ...j.keys.map((k) => h('option', { value: k.key }, k.title && k.title !== k.key ? `${k.title} (${k.key})` : k.key)));
    metric.disabled = j.keys.length === 0;
    if (picked) metric.value = picked;
    if (picked && picked !== key) {
      key = picked;
      saveQuery();
    }
    if (!key || j.keys.length === 0) {
      replaceChildren(chartSlot, h('div', { class: 'muted empty-note', testid: 'job-no-metrics' }, j.loading ? 'Loading…' : 'The nodes recorded no system metrics.'));
    } else if (!chart) {
      chart = new JobChart(id, key, view);
      replaceChildren(chartSlot, chart.root);
      chart.start();
    }
    watch(j);
  }

  // Live: the nodes' runs (the first kMaxWatched) refresh the chart as they grow; a change in the runs
  // list reloads the job (a node may have joined).
  function watch(j: JobDetail): void {
    const dirs = j.nodes.slice(0, kMaxWatched).map((n) => n.dir).join(',');
    if (dirs === watched) return;
    watched = dirs;
    events?.close();
    events = new EventStream(apiUrl('/api/events', { runs: dirs }), {
      run: () => chart?.refresh(),
      runs: () => scheduleReload(),
    });
  }

  function scheduleReload(): void {
    if (destroyed || reloadTimer !== null) return;
    reloadTimer = window.setTimeout(() => {
      reloadTimer = null;
      void load();
    }, kReloadMs);
  }

  async function load(): Promise<void> {
    abort?.abort();
    const ac = new AbortController();
    abort = ac;
    try {
      const j = await fetchJob(id, ac.signal);
      if (destroyed || ac.signal.aborted) return;
      job = j;
      render(j);
      if (j.loading) scheduleReload();
    } catch (e) {
      if (isAbort(e) || ac.signal.aborted || destroyed) return;
      const text = e instanceof ApiError && e.status === 404 ? `No job ${id} in this logdir.` : `Could not load the job: ${errorText(e)}`;
      if (job === null) replaceChildren(statusEl, h('div', { class: 'error', testid: 'job-error' }, text));
    }
  }

  renderView();
  void load();
  return {
    root,
    title: `runmon: job ${id}`,
    destroy() {
      destroyed = true;
      abort?.abort();
      events?.close();
      if (reloadTimer !== null) clearTimeout(reloadTimer);
      chart?.destroy();
    },
  };
}
