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
  state: RunState;
  exitCode: number | null;
  start: number | null;
  duration: number | null;
  samples: number;
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
    state: state(b.state),
    exitCode: numOrNull(b.exit_code),
    start: numOrNull(b.start),
    duration: numOrNull(b.duration),
    samples: numOrNull(b.samples) ?? 0,
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
