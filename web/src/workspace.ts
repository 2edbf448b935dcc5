// A run workspace (#/runs/<dir>[,<dir>...]): the runs' overview, then two tabs: Charts (user panels, the
// System section of system and other charts, the Metrics section of logged history) and, once a run has
// console output, Logs (logs.ts: one run's output at a time, picked when several are shown). Several runs
// show the union of their charts by id, each series named "<run name> <series name>". The tab and the
// logs' run are in the hash's query (?tab=logs&run=<dir>), replaced in place so that switching is no new
// page. Live: an event stream for the shown runs refetches a run's header and the charts (each at most once
// per second, and only while the Charts tab shows) when the run grows, and tells the Logs tab.

import { ApiError, apiUrl, type ChartDef, errorText, fetchRun, type RunDetail } from './api';
import { type ChartHost, ChartView, type RunRef } from './chart';
import type { TimeMode } from './chart_common';
import { button, h, replaceChildren } from './dom';
import { EventStream } from './events';
import { formatDuration, formatTime } from './format';
import { Panels } from './panels';
import { LogsView } from './logs';
import { jobHash, type Page, runsHash } from './router';
import { stateBadge } from './widgets';

const kTimeModeKey = 'runmon.timeMode';
const kThrottleMs = 1000;

function loadTimeMode(): TimeMode {
  try {
    return localStorage.getItem(kTimeModeKey) === 'wall' ? 'wall' : 'relative';
  } catch {
    return 'relative';
  }
}

function saveTimeMode(m: TimeMode): void {
  try {
    localStorage.setItem(kTimeModeKey, m);
  } catch {
    // storage disabled: the choice lasts for this page only
  }
}

type RunSlot = { dir: string; detail: RunDetail | null; error: string | null };

type Tab = 'charts' | 'logs';

export function workspacePage(dirs: string[], query: URLSearchParams): Page {
  const slots: RunSlot[] = dirs.map((dir) => ({ dir, detail: null, error: null }));
  let tab: Tab = query.get('tab') === 'logs' ? 'logs' : 'charts';
  let logsDir = dirs.find((d) => d === query.get('run')) ?? dirs[0];
  let logs: LogsView | null = null;
  let chartsStale = false; // live events came while the Logs tab showed
  let timeMode: TimeMode = loadTimeMode();
  const charts = new Map<string, ChartView>();
  let destroyed = false;
  let events: EventStream | null = null;
  let wasConnected = false;
  let everConnected = false;
  let loadingTimer: number | null = null;
  const headerTimers = new Map<string, number>();
  const headerPending = new Set<string>();
  const headerLast = new Map<string, number>();
  const openDetails = new Set<string>(); // which <details> the user opened, kept across header refreshes

  const host: ChartHost = {
    runs: (): RunRef[] =>
      slots
        .filter((s) => s.detail !== null)
        .map((s) => ({ dir: s.dir, name: s.detail!.name || s.dir, start: s.detail!.start, duration: s.detail!.duration })),
    timeMode: () => timeMode,
  };

  const allKeys = (): string[] => {
    const keys = new Set<string>();
    for (const s of slots) for (const c of s.detail?.charts ?? []) for (const se of c.series) if (se.key) keys.add(se.key);
    return [...keys].sort((a, b) => a.localeCompare(b));
  };
  const panels = new Panels(host, allKeys);

  // ---- skeleton ----
  const relBtn = button('Relative time', { class: 'seg', testid: 'time-relative' }, () => setTimeMode('relative'));
  const wallBtn = button('Wall-clock time', { class: 'seg', testid: 'time-wall' }, () => setTimeMode('wall'));
  const liveEl = h('span', { class: 'live', testid: 'live-status' });
  const addPanelBtn = button('+ Add panel', { class: 'btn btn-primary', testid: 'add-panel' }, () => panels.openForm());
  addPanelBtn.disabled = true;
  const headerEl = h('div', { class: 'run-cards', testid: 'run-headers' });
  const statusEl = h('div', { class: 'status', testid: 'workspace-status' });
  const systemGrid = h('div', { class: 'chart-grid', testid: 'system-grid' });
  const metricsGrid = h('div', { class: 'chart-grid', testid: 'metrics-grid' });
  const systemCount = h('span', { class: 'count' });
  const metricsCount = h('span', { class: 'count' });
  const systemEmpty = h('div', { class: 'muted empty-note' }, 'No system metrics recorded.');
  const systemSection = h(
    'section',
    { class: 'section', testid: 'system-section' },
    h('h2', { class: 'section-title' }, 'System', systemCount),
    systemEmpty,
    systemGrid,
  );
  const metricsSection = h(
    'section',
    { class: 'section', testid: 'metrics-section' },
    h('h2', { class: 'section-title' }, 'Metrics', metricsCount),
    metricsGrid,
  );
  systemSection.hidden = true;
  metricsSection.hidden = true;
  const chartsPane = h('div', { class: 'tab-pane', role: 'tabpanel', testid: 'charts-pane' }, panels.section, systemSection, metricsSection);

  const chartsTab = button('Charts', { class: 'tab', role: 'tab', testid: 'tab-charts' }, () => setTab('charts'));
  const logsCount = h('span', { class: 'count', testid: 'logs-count' });
  const logsTab = button(h('span', null, 'Logs', logsCount), { class: 'tab', role: 'tab', testid: 'tab-logs' }, () => setTab('logs'));
  const tabsEl = h('div', { class: 'tabs', role: 'tablist', testid: 'workspace-tabs' }, chartsTab, logsTab);
  const logsRun = h(
    'select',
    { class: 'logs-run', 'aria-label': 'Run', testid: 'logs-run' },
    ...slots.map((s) => h('option', { value: s.dir }, s.dir)),
  );
  logsRun.addEventListener('change', () => {
    logsDir = logsRun.value;
    showLogs();
  });
  const logsHost = h('div', { class: 'logs-host' });
  const logsPane = h('div', { class: 'tab-pane', role: 'tabpanel', testid: 'logs-pane' }, logsRun, logsHost);
  const timeToggle = h('div', { class: 'segmented', role: 'group', 'aria-label': 'Time axis', testid: 'time-toggle' }, relBtn, wallBtn);

  const root = h(
    'div',
    { class: 'page workspace', testid: 'workspace' },
    h(
      'div',
      { class: 'toolbar' },
      h('a', { href: '#/', class: 'btn', testid: 'back-to-runs' }, '← Runs'),
      timeToggle,
      h('span', { class: 'spacer' }),
      liveEl,
      addPanelBtn,
    ),
    statusEl,
    headerEl,
    tabsEl,
    chartsPane,
    logsPane,
  );

  function renderTimeToggle(): void {
    relBtn.setAttribute('aria-pressed', String(timeMode === 'relative'));
    wallBtn.setAttribute('aria-pressed', String(timeMode === 'wall'));
    const runs = host.runs();
    const noStart = runs.some((r) => r.start === null);
    wallBtn.disabled = noStart;
    wallBtn.title = noStart ? 'A run has no known start time' : 'x = run start + elapsed time';
    relBtn.title = 'x = seconds since each run started';
  }

  function setTimeMode(m: TimeMode): void {
    if (m === timeMode) return;
    timeMode = m;
    saveTimeMode(m);
    renderTimeToggle();
    for (const v of charts.values()) v.timeModeChanged();
    panels.timeModeChanged();
  }

  function setLive(connected: boolean): void {
    const running = slots.some((s) => s.detail?.state === 'running');
    liveEl.textContent = connected ? (running ? '● live' : '● connected') : everConnected ? '○ reconnecting…' : '○ connecting…';
    liveEl.classList.toggle('on', connected);
    liveEl.dataset.connected = String(connected);
  }

  // ---- tabs ----

  function renderTabs(): void {
    const lines = slots.reduce((sum, s) => sum + (s.detail?.consoleLines ?? 0), 0);
    tabsEl.hidden = lines === 0 && tab === 'charts';
    logsCount.textContent = lines > 0 ? ` (${lines.toLocaleString()})` : '';
    chartsTab.setAttribute('aria-selected', String(tab === 'charts'));
    logsTab.setAttribute('aria-selected', String(tab === 'logs'));
    chartsPane.hidden = tab !== 'charts';
    logsPane.hidden = tab !== 'logs';
    timeToggle.hidden = tab !== 'charts';
    addPanelBtn.hidden = tab !== 'charts';
    logsRun.hidden = slots.length < 2;
    slots.forEach((s, i) => {
      const option = logsRun.options[i];
      option.textContent = s.detail?.name || s.dir;
      option.selected = s.dir === logsDir;
    });
  }

  function saveTab(): void {
    const q = new URLSearchParams();
    if (tab === 'logs') q.set('tab', 'logs');
    if (tab === 'logs' && logsDir !== dirs[0]) q.set('run', logsDir);
    history.replaceState(null, '', runsHash(dirs, q));
  }

  // The Logs tab's view of the picked run, made when first shown.
  function showLogs(): void {
    if (logs && logs.root.dataset.runDir !== logsDir) {
      logs.destroy();
      logs = null;
    }
    if (!logs) {
      logs = new LogsView(logsDir);
      logsHost.appendChild(logs.root);
    }
    saveTab();
    logs.setActive(true);
  }

  function setTab(t: Tab): void {
    if (t === tab) return;
    tab = t;
    renderTabs();
    if (tab === 'logs') {
      showLogs();
      return;
    }
    logs?.setActive(false);
    saveTab();
    if (chartsStale) {
      chartsStale = false;
      refreshCharts();
    }
  }

  // ---- header ----

  function detailsBlock(key: string, summary: string, rows: [string, string][], testid: string): HTMLElement {
    const d = h(
      'details',
      { class: 'kv-block', testid },
      h('summary', null, `${summary} (${rows.length})`),
      h(
        'table',
        { class: 'kv' },
        h('tbody', null, ...rows.map(([k, v]) => h('tr', null, h('th', null, k), h('td', { class: 'mono' }, v)))),
      ),
    );
    d.open = openDetails.has(key);
    d.addEventListener('toggle', () => {
      if (d.open) openDetails.add(key);
      else openDetails.delete(key);
    });
    return d;
  }

  function runCard(s: RunSlot): HTMLElement {
    if (!s.detail) {
      return h(
        'article',
        { class: 'run-card', testid: 'run-header', 'data-run-dir': s.dir },
        h('h2', { class: 'run-title', testid: 'run-name' }, s.dir),
        h('div', { class: s.error ? 'error' : 'muted' }, s.error ?? 'Loading…'),
      );
    }
    const d = s.detail;
    const command = d.environment.find(([k]) => k.toLowerCase() === 'command')?.[1] ?? '';
    const facts: [string, string, string][] = [
      ['ID', d.id || '–', 'run-id'],
      ['Project', d.project || '–', 'run-project'],
      ['Host', d.host || '–', 'run-host'],
      ['Start', formatTime(d.start), 'run-start'],
      ['Duration', formatDuration(d.duration), 'run-duration'],
      ['Samples', String(d.samples), 'run-samples'],
    ];
    if (d.exitCode !== null) facts.push(['Exit code', String(d.exitCode), 'run-exit-code']);
    const env = d.environment.filter(([k]) => k.toLowerCase() !== 'command');
    return h(
      'article',
      { class: 'run-card', testid: 'run-header', 'data-run-dir': s.dir, 'data-state': d.state },
      h(
        'div',
        { class: 'run-card-head' },
        h('h2', { class: 'run-title', testid: 'run-name', title: d.dir }, d.name || d.dir),
        stateBadge(d.state),
        d.loading ? h('span', { class: 'muted', testid: 'run-loading' }, 'reading the log…') : null,
      ),
      h(
        'dl',
        { class: 'facts' },
        ...facts.map(([k, v, t]) => h('div', { class: 'fact' }, h('dt', null, k), h('dd', { testid: t }, v))),
      ),
      d.jobId !== null
        ? h(
            'div',
            { class: 'job-of-run', testid: 'run-job' },
            `Node ${d.nodeRank || '?'} of job `,
            h('a', { href: jobHash(d.jobId), testid: 'run-job-link' }, d.jobId),
          )
        : null,
      command ? h('div', { class: 'command mono', testid: 'run-command', title: command }, command) : null,
      d.warnings.length
        ? h(
            'ul',
            { class: 'warnings', testid: 'run-warnings' },
            ...d.warnings.map((w) => h('li', { testid: 'run-warning' }, '⚠ ', w)),
          )
        : null,
      env.length ? detailsBlock(`env:${s.dir}`, 'Environment', env, 'run-environment') : null,
      d.config.length ? detailsBlock(`config:${s.dir}`, 'Config', d.config, 'run-config') : null,
    );
  }

  function renderHeader(): void {
    replaceChildren(headerEl, ...slots.map(runCard));
    headerEl.classList.toggle('multi', slots.length > 1);
    const names = slots.map((s) => s.detail?.name || s.dir);
    document.title = `runmon: ${names.join(', ')}`;
    renderTimeToggle();
    renderTabs();
    setLive(wasConnected);
  }

  // ---- charts ----

  function unionCharts(): ChartDef[] {
    const seen = new Set<string>();
    const out: ChartDef[] = [];
    for (const s of slots) {
      for (const c of s.detail?.charts ?? []) {
        if (seen.has(c.id)) continue;
        seen.add(c.id);
        out.push(c);
      }
    }
    return out;
  }

  function placeAll(grid: HTMLElement, views: ChartView[]): void {
    views.forEach((v, i) => {
      const at = grid.children[i];
      if (at !== v.root) grid.insertBefore(v.root, at ?? null);
    });
  }

  function syncCharts(): void {
    const defs = unionCharts();
    const fresh: ChartView[] = [];
    const system: ChartView[] = [];
    const metrics: ChartView[] = [];
    for (const c of defs) {
      let v = charts.get(c.id);
      if (!v) {
        v = new ChartView(
          { id: c.id, kind: 'chart', title: c.title || c.id, unit: c.unit, xAxis: c.xAxis, query: { chart: c.id } },
          host,
        );
        charts.set(c.id, v);
        fresh.push(v);
      }
      (c.section === 'logged' ? metrics : system).push(v);
    }
    placeAll(systemGrid, system);
    placeAll(metricsGrid, metrics);
    const loaded = slots.some((s) => s.detail !== null);
    systemSection.hidden = !loaded;
    systemEmpty.hidden = system.length > 0;
    metricsSection.hidden = metrics.length === 0;
    systemCount.textContent = system.length ? ` (${system.length})` : '';
    metricsCount.textContent = metrics.length ? ` (${metrics.length})` : '';
    for (const v of fresh) v.start();
  }

  function refreshCharts(): void {
    for (const v of charts.values()) v.refresh();
    panels.refresh();
  }

  // Charts hidden behind the Logs tab are refreshed when it is left.
  function chartsChanged(): void {
    if (tab === 'charts') refreshCharts();
    else chartsStale = true;
  }

  // ---- loading ----

  async function loadRun(s: RunSlot): Promise<void> {
    try {
      s.detail = await fetchRun(s.dir);
      s.error = null;
    } catch (e) {
      if (s.detail === null) s.error = e instanceof ApiError && e.status === 404 ? 'No such run in this logdir.' : errorText(e);
    }
  }

  function scheduleWhileLoading(): void {
    if (destroyed || loadingTimer !== null) return;
    if (!slots.some((s) => s.detail?.loading)) return;
    loadingTimer = window.setTimeout(() => {
      loadingTimer = null;
      void Promise.all(slots.filter((s) => s.detail?.loading).map(loadRun)).then(() => {
        if (destroyed) return;
        renderHeader();
        syncCharts();
        chartsChanged();
        scheduleWhileLoading();
      });
    }, 1000);
  }

  // A live event for one run: the charts at once (each chart throttles itself and keeps the last request),
  // the header at most once per second. An event that comes while the header is being refreshed asks for
  // one more refresh after it, so the last event of a run is never lost.
  function refreshRun(dir: string): void {
    const s = slots.find((x) => x.dir === dir);
    if (!s) return;
    chartsChanged();
    if (headerTimers.has(dir)) {
      headerPending.add(dir);
      return;
    }
    const wait = Math.max(0, (headerLast.get(dir) ?? 0) + kThrottleMs - Date.now());
    headerTimers.set(
      dir,
      window.setTimeout(() => {
        headerLast.set(dir, Date.now());
        void loadRun(s).then(() => {
          headerTimers.delete(dir);
          if (destroyed) return;
          renderHeader();
          syncCharts();
          if (headerPending.delete(dir)) refreshRun(dir);
        });
      }, wait),
    );
  }

  async function start(): Promise<void> {
    renderHeader();
    await Promise.all(slots.map(loadRun));
    if (destroyed) return;
    renderHeader();
    const ok = slots.filter((s) => s.detail !== null);
    if (ok.length === 0) {
      replaceChildren(statusEl, h('div', { class: 'error' }, 'None of these runs could be loaded.'));
      return;
    }
    syncCharts();
    void panels.load().then((loaded) => {
      if (!destroyed) addPanelBtn.disabled = !loaded;
    });
    scheduleWhileLoading();
    events = new EventStream(apiUrl('/api/events', { runs: ok.map((s) => s.dir).join(',') }), {
      run: (e) => {
        refreshRun(e.dir);
        if (e.dir === logsDir) logs?.runChanged(e);
      },
      status: (connected) => {
        // Back after a drop: events may have been missed.
        if (connected && !wasConnected && everConnected) {
          for (const s of ok) refreshRun(s.dir);
          logs?.runChanged(null);
        }
        if (connected) everConnected = true;
        wasConnected = connected;
        setLive(connected);
      },
    });
  }

  const scheme = matchMedia('(prefers-color-scheme: dark)');
  const onScheme = () => {
    for (const v of charts.values()) v.themeChanged();
    panels.themeChanged();
  };
  scheme.addEventListener('change', onScheme);

  renderTimeToggle();
  renderTabs();
  if (tab === 'logs') showLogs();
  setLive(false);
  void start();

  return {
    root,
    title: 'runmon',
    destroy() {
      destroyed = true;
      events?.close();
      scheme.removeEventListener('change', onScheme);
      if (loadingTimer !== null) clearTimeout(loadingTimer);
      for (const t of headerTimers.values()) clearTimeout(t);
      for (const v of charts.values()) v.destroy();
      charts.clear();
      panels.destroy();
      logs?.destroy();
    },
  };
}
