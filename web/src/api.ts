// The client side of docs/serve-api.md: typed fetches of /api/*, with the answers normalized (a missing
// or mistyped field becomes a harmless default) because a damaged run log may give the server odd values.
// A 401 anywhere raises the global "needs a token" message.

export type RunState = 'running' | 'finished' | 'failed' | 'crashed' | 'not a run log' | 'unknown';
const kStates: readonly RunState[] = ['running', 'finished', 'failed', 'crashed', 'not a run log', 'unknown'];

export interface RunSummary {
  dir: string;
  id: string;
  name: string;
  project: string;
  state: RunState;
  start: number | null;
  duration: number | null;
  host: string;
  command: string;
  gpu: string;
  gpuCount: number;
  jobId: string | null; // the distributed job the run is a node of
  nodeRank: string;
  warning: string | null;
}

export interface RunsPage {
  total: number;
  offset: number;
  logdir: string;
  runs: RunSummary[];
}

export interface SeriesDef {
  key: string;
  name: string;
}

export interface ChartDef {
  id: string;
  title: string;
  unit: string;
  section: string; // system, other, logged
  xAxis: string; // time, step
  series: SeriesDef[];
}

export interface RunDetail {
  dir: string;
  id: string;
  name: string;
  project: string;
  host: string;
  jobId: string | null;
  nodeRank: string;
  state: RunState;
  exitCode: number | null;
  start: number | null;
  duration: number | null;
  samples: number;
  consoleLines: number; // console lines the run has written (its Logs tab shows when there are any)
  loading: boolean;
  warnings: string[];
  environment: [string, string][];
  config: [string, string][];
  charts: ChartDef[];
}

export interface ChartSeries {
  run: string;
  runName: string;
  key: string;
  name: string;
  values: (number | null)[];
  last: number | null;
}

export interface ChartData {
  title: string;
  unit: string;
  xAxis: string;
  start: number | null;
  end: number | null;
  width: number;
  x: number[];
  series: ChartSeries[];
  loading: boolean;
}

export interface ConsoleLine {
  n: number; // the line's number in the run's output, from 0
  t: number | null; // when the output that started it came, seconds since the epoch
  stderr: boolean;
  text: string; // as the command wrote it: escape sequences and control characters included
  cut: boolean; // the line is longer than the text sent
}

// One answer of /api/runs/{dir}/console: every matching line numbered in [prev, next) is in `lines`.
export interface ConsolePage {
  first: number; // the oldest line the server holds
  total: number; // lines written
  dropped: number; // lines no longer held
  settled: number; // lines numbered below it no longer change
  prev: number;
  next: number;
  loading: boolean;
  lines: ConsoleLine[];
}

export interface Panel {
  id: string;
  title: string;
  keys: string[];
  match: string;
}

export interface Layout {
  version: number;
  panels: Panel[];
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

type Query = Record<string, string | number | null | undefined>;

let onUnauthorized: () => void = () => {};
export function setUnauthorizedHandler(fn: () => void): void {
  onUnauthorized = fn;
}

export function apiUrl(path: string, query?: Query): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v === null || v === undefined || v === '') continue;
    params.set(k, String(v));
  }
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

async function request(url: string, init: RequestInit): Promise<unknown> {
  const resp = await fetch(url, { credentials: 'same-origin', cache: 'no-store', ...init });
  let body: unknown = null;
  const text = await resp.text();
  if (text) {
    try {
      body = JSON.parse(text);
    } catch {
      body = null;
    }
  }
  if (!resp.ok) {
    if (resp.status === 401) onUnauthorized();
    const msg = isObj(body) && typeof body.error === 'string' ? body.error : `${resp.status} ${resp.statusText}`;
    throw new ApiError(resp.status, msg);
  }
  return body;
}

export function getJSON(path: string, query?: Query, signal?: AbortSignal): Promise<unknown> {
  return request(apiUrl(path, query), { method: 'GET', signal, headers: { Accept: 'application/json' } });
}

export function putJSON(path: string, body: unknown): Promise<unknown> {
  return request(path, {
    method: 'PUT',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify(body),
  });
}

export function isAbort(err: unknown): boolean {
  return err instanceof DOMException && err.name === 'AbortError';
}

export function errorText(err: unknown): string {
  if (err instanceof ApiError) return err.status === 401 ? 'this server needs a token' : err.message;
  if (err instanceof Error) return err.message;
  return String(err);
}

// ---- normalization ----

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
function str(v: unknown): string {
  return typeof v === 'string' ? v : v === null || v === undefined ? '' : String(v);
}
function numOrNull(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}
function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}
function state(v: unknown): RunState {
  return kStates.includes(v as RunState) ? (v as RunState) : 'unknown';
}
function pairs(v: unknown): [string, string][] {
  return arr(v).map((p) => {
    const a = arr(p);
    return [str(a[0]), str(a[1])] as [string, string];
  });
}

function jobId(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

function runSummary(v: unknown): RunSummary {
  const o = isObj(v) ? v : {};
  return {
    dir: str(o.dir),
    id: str(o.id),
    name: str(o.name),
    project: str(o.project),
    state: state(o.state),
    start: numOrNull(o.start),
    duration: numOrNull(o.duration),
    host: str(o.host),
    command: str(o.command),
    gpu: str(o.gpu),
    gpuCount: numOrNull(o.gpu_count) ?? 0,
    jobId: jobId(o.job_id),
    nodeRank: str(o.node_rank),
    warning: o.warning === null || o.warning === undefined || o.warning === '' ? null : str(o.warning),
  };
}

function chartDef(v: unknown): ChartDef {
  const o = isObj(v) ? v : {};
  return {
    id: str(o.id),
    title: str(o.title),
    unit: str(o.unit),
    section: str(o.section) || 'other',
    xAxis: str(o.x_axis) || 'time',
    series: arr(o.series).map((s) => {
      const so = isObj(s) ? s : {};
      return { key: str(so.key), name: str(so.name) };
    }),
  };
}

export async function fetchRuns(query: Query, signal?: AbortSignal): Promise<RunsPage> {
  const o = await getJSON('/api/runs', query, signal);
  const b = isObj(o) ? o : {};
  return {
    total: numOrNull(b.total) ?? 0,
    offset: numOrNull(b.offset) ?? 0,
    logdir: str(b.logdir),
    runs: arr(b.runs).map(runSummary).filter((r) => r.dir !== ''),
  };
}

export async function fetchRun(dir: string, signal?: AbortSignal): Promise<RunDetail> {
  const o = await getJSON(`/api/runs/${encodeURIComponent(dir)}`, undefined, signal);
  const b = isObj(o) ? o : {};
  return {
    dir: str(b.dir) || dir,
    id: str(b.id),
    name: str(b.name),
    project: str(b.project),
    host: str(b.host),
    jobId: jobId(b.job_id),
    nodeRank: str(b.node_rank),
    state: state(b.state),
    exitCode: numOrNull(b.exit_code),
    start: numOrNull(b.start),
    duration: numOrNull(b.duration),
    samples: numOrNull(b.samples) ?? 0,
    consoleLines: numOrNull(b.console_lines) ?? 0,
    loading: b.loading === true,
    warnings: arr(b.warnings).map(str).filter((w) => w !== ''),
    environment: pairs(b.environment),
    config: pairs(b.config),
    charts: arr(b.charts)
      .map(chartDef)
      .filter((c) => c.id !== ''),
  };
}

export async function fetchChart(query: Query, signal?: AbortSignal): Promise<ChartData> {
  const o = await getJSON('/api/chart', query, signal);
  const b = isObj(o) ? o : {};
  const x = arr(b.x).map((v) => (typeof v === 'number' ? v : NaN));
  return {
    title: str(b.title),
    unit: str(b.unit),
    xAxis: str(b.x_axis) || 'time',
    start: numOrNull(b.start),
    end: numOrNull(b.end),
    width: numOrNull(b.width) ?? 0,
    x,
    series: arr(b.series).map((s) => {
      const so = isObj(s) ? s : {};
      const values = arr(so.values).map(numOrNull);
      values.length = x.length; // a short array would misalign; holes read as gaps below
      for (let i = 0; i < values.length; i++) if (values[i] === undefined) values[i] = null;
      return {
        run: str(so.run),
        runName: str(so.run_name),
        key: str(so.key),
        name: str(so.name),
        values,
        last: numOrNull(so.last),
      };
    }),
    loading: b.loading === true,
  };
}

export async function fetchConsole(dir: string, query: Query, signal?: AbortSignal): Promise<ConsolePage> {
  const o = await getJSON(`/api/runs/${encodeURIComponent(dir)}/console`, query, signal);
  const b = isObj(o) ? o : {};
  const lines: ConsoleLine[] = [];
  for (const v of arr(b.lines)) {
    const l = isObj(v) ? v : {};
    const n = numOrNull(l.n);
    // Lines come in order; one out of order (a damaged answer) is left out rather than misplaced.
    if (n === null || (lines.length > 0 && n <= lines[lines.length - 1].n)) continue;
    lines.push({ n, t: numOrNull(l.t), stderr: l.stderr === true, text: str(l.text), cut: l.cut === true });
  }
  const total = numOrNull(b.total) ?? 0;
  return {
    first: numOrNull(b.first) ?? 0,
    total,
    dropped: numOrNull(b.dropped) ?? 0,
    settled: numOrNull(b.settled) ?? 0,
    prev: numOrNull(b.prev) ?? 0,
    next: numOrNull(b.next) ?? total,
    loading: b.loading === true,
    lines,
  };
}

export async function fetchLayout(): Promise<Layout> {
  const o = await getJSON('/api/layout');
  const b = isObj(o) ? o : {};
  const panels: Panel[] = [];
  for (const p of arr(b.panels)) {
    if (!isObj(p)) continue;
    const id = str(p.id);
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(id) || panels.some((q) => q.id === id)) continue;
    panels.push({ id, title: str(p.title), keys: arr(p.keys).map(str).filter((k) => k !== ''), match: str(p.match) });
  }
  return { version: 1, panels };
}

export function saveLayout(layout: Layout): Promise<unknown> {
  return putJSON('/api/layout', {
    version: 1,
    panels: layout.panels.map((p) => ({ id: p.id, title: p.title, keys: p.keys, match: p.match })),
  });
}

// ---- jobs (several nodes' runs of one distributed job) ----

export interface JobNode {
  dir: string;
  runName: string;
  node: string; // "node 1 (gpu-b)", unique within the job
  nodeRank: string;
  host: string;
  state: RunState;
  start: number | null;
  duration: number | null;
}

export interface JobSummary {
  jobId: string;
  name: string;
  launcher: string;
  start: number | null;
  duration: number | null;
  nodeCount: number;
  states: [RunState, number][];
  nodes: JobNode[];
}

export interface JobsPage {
  total: number;
  offset: number;
  jobs: JobSummary[];
}

export interface JobKey {
  key: string;
  title: string;
  unit: string;
}

export interface JobDetail extends JobSummary {
  keys: JobKey[];
  chartedNodes: number;
  loading: boolean;
  warning: string | null;
}

export interface JobSeriesNode {
  node: string;
  nodeRank: string;
  run: string;
  values: (number | null)[];
}

// The band of one metric across the nodes: per time bucket the minimum, median and maximum over the nodes
// with a value there, and the indices (into `nodes`) of the nodes holding the minimum and the maximum.
export interface JobBand {
  t: number[];
  min: number[];
  median: number[];
  max: number[];
  minNode: number[];
  maxNode: number[];
  count: number[];
}

export interface JobSeries {
  jobId: string;
  key: string;
  title: string;
  unit: string;
  startTime: number | null; // the job's t = 0, seconds since the epoch
  start: number;
  end: number;
  bucket: number;
  loading: boolean;
  warning: string | null;
  nodes: JobSeriesNode[];
  band: JobBand;
}

export function jobUrl(jobId: string): string {
  return `/api/jobs/${encodeURIComponent(jobId)}`;
}

function jobNode(v: unknown): JobNode {
  const o = isObj(v) ? v : {};
  return {
    dir: str(o.dir),
    runName: str(o.run_name),
    node: str(o.node),
    nodeRank: str(o.node_rank),
    host: str(o.host),
    state: state(o.state),
    start: numOrNull(o.start),
    duration: numOrNull(o.duration),
  };
}

function jobSummary(v: unknown): JobSummary {
  const o = isObj(v) ? v : {};
  const states: [RunState, number][] = [];
  if (isObj(o.states)) {
    for (const [k, n] of Object.entries(o.states)) {
      const count = numOrNull(n);
      if (count !== null && count > 0) states.push([state(k), count]);
    }
  }
  return {
    jobId: str(o.job_id),
    name: str(o.name),
    launcher: str(o.launcher),
    start: numOrNull(o.start),
    duration: numOrNull(o.duration),
    nodeCount: numOrNull(o.node_count) ?? 0,
    states,
    nodes: arr(o.nodes).map(jobNode).filter((n) => n.dir !== ''),
  };
}

export async function fetchJobs(query: Query, signal?: AbortSignal): Promise<JobsPage> {
  const o = await getJSON('/api/jobs', query, signal);
  const b = isObj(o) ? o : {};
  return {
    total: numOrNull(b.total) ?? 0,
    offset: numOrNull(b.offset) ?? 0,
    jobs: arr(b.jobs)
      .map(jobSummary)
      .filter((j) => j.jobId !== ''),
  };
}

export async function fetchJob(jobId: string, signal?: AbortSignal): Promise<JobDetail> {
  const o = await getJSON(jobUrl(jobId), undefined, signal);
  const b = isObj(o) ? o : {};
  return {
    ...jobSummary(b),
    keys: arr(b.keys)
      .map((k) => {
        const ko = isObj(k) ? k : {};
        return { key: str(ko.key), title: str(ko.title), unit: str(ko.unit) };
      })
      .filter((k) => k.key !== ''),
    chartedNodes: numOrNull(b.charted_nodes) ?? 0,
    loading: b.loading === true,
    warning: typeof b.warning === 'string' && b.warning !== '' ? b.warning : null,
  };
}

export async function fetchJobSeries(jobId: string, query: Query, signal?: AbortSignal): Promise<JobSeries> {
  const o = await getJSON(`${jobUrl(jobId)}/series`, query, signal);
  const b = isObj(o) ? o : {};
  const bo = isObj(b.band) ? b.band : {};
  const t = arr(bo.t).map((v) => (typeof v === 'number' ? v : NaN));
  const n = t.length;
  // Columns shorter than t (a damaged answer) are padded, so every index reads something.
  const column = (v: unknown): number[] => {
    const out = arr(v).map((x) => numOrNull(x) ?? NaN);
    while (out.length < n) out.push(NaN);
    return out.slice(0, n);
  };
  const nodes = arr(b.nodes).map((v) => {
    const no = isObj(v) ? v : {};
    const values = arr(no.values).map(numOrNull);
    while (values.length < n) values.push(null);
    return { node: str(no.node), nodeRank: str(no.node_rank), run: str(no.run), values: values.slice(0, n) };
  });
  return {
    jobId: str(b.job_id),
    key: str(b.key),
    title: str(b.title),
    unit: str(b.unit),
    startTime: numOrNull(b.start_time),
    start: numOrNull(b.start) ?? 0,
    end: numOrNull(b.end) ?? 0,
    bucket: numOrNull(b.bucket) ?? 0,
    loading: b.loading === true,
    warning: typeof b.warning === 'string' && b.warning !== '' ? b.warning : null,
    nodes,
    band: {
      t,
      min: column(bo.min),
      median: column(bo.median),
      max: column(bo.max),
      minNode: column(bo.min_node),
      maxNode: column(bo.max_node),
      count: column(bo.count),
    },
  };
}
