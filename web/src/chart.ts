// One chart: fetches /api/chart for the shown runs (downsampled to the chart's pixel width), draws it with
// uPlot, and handles zoom (drag-select, then a refetch at full resolution for that range), reset
// (double-click or the button), pan (shift+wheel or the buttons), the CSV link and throttled live refresh.
//
// The server sends each bucket's minimum and maximum as two points on a shared x array, with nulls for
// empty buckets; they are drawn as one line with spanGaps false so gaps stay visible. In wall-clock mode
// every run's points move by that run's start, so several runs' points are merged into one sorted x array
// where a series has `undefined` (joined across, unlike null) at the other runs' points.

import uPlot from 'uplot';
import { apiUrl, ApiError, type ChartData, errorText, fetchChart, isAbort } from './api';
import { button, h, replaceChildren } from './dom';
import { formatRelTick, formatTicks, formatWallTicks, formatValue, formatX, isByteUnit, kByteIncrs, kRelTimeIncrs } from './format';

export type TimeMode = 'relative' | 'wall';

export interface RunRef {
  dir: string;
  name: string;
  start: number | null;
  duration: number | null;
}

// What a chart needs from the page that holds it.
export interface ChartHost {
  runs(): RunRef[];
  timeMode(): TimeMode;
}

export interface ChartSpec {
  id: string; // chart id, or panel id
  kind: 'chart' | 'panel';
  title: string;
  unit: string;
  xAxis: string; // a hint until the first answer: time or step
  query: Record<string, string>; // {chart} or {keys} or {match}
  controls?: HTMLElement[]; // extra buttons for the header (panels: move, remove)
}

export type PlotValue = number | null | undefined;

export interface PlottedSeries {
  name: string; // the legend label
  run: string;
  key: string;
  values: PlotValue[];
}

// What tests read from window.__runmonCharts.
export interface PlottedChart {
  kind: 'chart' | 'panel';
  title: string;
  unit: string;
  xAxis: string;
  timeMode: TimeMode;
  range: [number, number] | null; // the zoomed x range (plotted units), null when showing everything
  updates: number; // how many times it was plotted
  x: number[];
  series: PlottedSeries[];
}

declare global {
  interface Window {
    __runmonCharts: Map<string, PlottedChart>;
  }
}
window.__runmonCharts = window.__runmonCharts ?? new Map();

const kHeight = 220;
const kThrottleMs = 1000;
const kPanDebounceMs = 250;
const kPalette = [
  '#4e9af1', '#f28e2b', '#59a14f', '#e15759', '#b07aa1', '#76b7b2',
  '#edc948', '#ff9da7', '#9c755f', '#8cd17d', '#a0cbe8', '#d37295',
];

// Several runs: the same colours per series, a different dash per run.
const kDashes: number[][] = [[], [6, 3], [2, 3], [10, 3, 2, 3]];

// At most a few chart requests at once: the browser has six connections per host and the event stream
// holds one.
const kMaxConcurrent = 4;
let active = 0;
const waiting: (() => void)[] = [];
async function limited<T>(fn: () => Promise<T>): Promise<T> {
  while (active >= kMaxConcurrent) await new Promise<void>((resolve) => waiting.push(resolve));
  active++;
  try {
    return await fn();
  } finally {
    active--;
    waiting.shift()?.();
  }
}

function cssVar(name: string, fallback: string): string {
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return v || fallback;
}

interface Answer {
  data: ChartData;
}

interface Built {
  x: number[];
  series: PlottedSeries[];
  xAxis: string;
  unit: string;
  title: string;
  loading: boolean;
}

function lastValue(values: PlotValue[]): PlotValue {
  for (let i = values.length - 1; i >= 0; i--) if (values[i] !== null && values[i] !== undefined) return values[i];
  return null;
}

// When buckets are narrower than the sampling interval, most buckets are empty and a line with
// spanGaps false would fall apart into dots. A run of empty buckets is therefore joined across
// (undefined) when it spans at most kGapFactor times the series' median spacing between points;
// longer holes (a pause, a damaged stretch of the log) stay null and show as gaps.
const kGapFactor = 2.5;

export function joinSmallGaps(xs: number[], vals: (number | null)[]): PlotValue[] {
  const out: PlotValue[] = vals.slice();
  const pos: number[] = [];
  for (let i = 0; i < vals.length; i++) {
    if (vals[i] === null || !Number.isFinite(xs[i])) continue;
    if (pos.length === 0 || xs[i] !== pos[pos.length - 1]) pos.push(xs[i]);
  }
  if (pos.length < 3) return out;
  const d: number[] = [];
  for (let k = 1; k < pos.length; k++) d.push(pos[k] - pos[k - 1]);
  d.sort((a, b) => a - b);
  const limit = d[Math.floor(d.length / 2)] * kGapFactor;
  let last = -1;
  for (let i = 0; i < vals.length; i++) {
    if (vals[i] === null || !Number.isFinite(xs[i])) continue;
    if (last >= 0 && i - last > 1 && xs[i] - xs[last] <= limit) {
      for (let j = last + 1; j < i; j++) out[j] = undefined;
    }
    last = i;
  }
  return out;
}

export class ChartView {
  readonly root: HTMLElement;
  private readonly body: HTMLElement;
  private readonly plotEl: HTMLElement;
  private readonly msgEl: HTMLElement;
  private readonly unitEl: HTMLElement;
  private readonly titleEl: HTMLElement;
  private readonly csv: HTMLAnchorElement;
  private u: uPlot | null = null;
  private sig = '';
  private zoom: [number, number] | null = null;
  private extent: [number, number] | null = null;
  private answers: Answer[] | null = null;
  private xAxis: string;
  private abort: AbortController | null = null;
  private lastFetch = 0;
  private timer: number | null = null;
  private retryTimer: number | null = null;
  private panTimer: number | null = null;
  private fetchedWidth = 0;
  private updates = 0;
  private lastVals: PlotValue[] = []; // per uPlot series index: the latest value, shown when not hovering
  private destroyed = false;
  private readonly ro: ResizeObserver;
  private readonly io: IntersectionObserver;
  private onScreen = true;
  private stale = false; // a live refresh was skipped while off-screen or in a hidden tab
  private readonly onVisibility = (): void => this.catchUp();

  constructor(
    private readonly spec: ChartSpec,
    private readonly host: ChartHost,
  ) {
    this.xAxis = spec.xAxis;
    const idAttrs =
      spec.kind === 'chart'
        ? { testid: 'chart', 'data-chart-id': spec.id }
        : { testid: 'panel', 'data-panel-id': spec.id };
    this.titleEl = h('span', { class: 'chart-title', testid: 'chart-title' }, spec.title);
    this.unitEl = h('span', { class: 'chart-unit', testid: 'chart-unit' });
    this.csv = h('a', { class: 'btn btn-small', testid: 'chart-csv', download: '', title: 'Download CSV (full resolution)' }, 'CSV');
    const controls = h(
      'div',
      { class: 'chart-controls' },
      button('◀', { class: 'btn btn-small', testid: 'chart-pan-left', title: 'Pan left (or shift+wheel)' }, () => this.panBy(-0.25)),
      button('▶', { class: 'btn btn-small', testid: 'chart-pan-right', title: 'Pan right (or shift+wheel)' }, () => this.panBy(0.25)),
      button('Reset', { class: 'btn btn-small', testid: 'chart-reset', title: 'Show the whole range (or double-click)' }, () => this.reset()),
      this.csv,
      ...(spec.controls ?? []),
    );
    this.plotEl = h('div', { class: 'chart-plot' });
    this.msgEl = h('div', { class: 'chart-msg', testid: 'chart-message' }, 'Loading…');
    this.body = h('div', { class: 'chart-body' }, this.plotEl, this.msgEl);
    this.root = h(
      'section',
      { class: 'chart', ...idAttrs },
      h('header', { class: 'chart-head' }, h('div', { class: 'chart-name' }, this.titleEl, this.unitEl), controls),
      this.body,
    );
    this.setUnit(spec.unit);
    this.updateCsv();

    this.plotEl.addEventListener('dblclick', () => this.reset());
    this.plotEl.addEventListener(
      'wheel',
      (e) => {
        if (!e.shiftKey || !this.zoom) return;
        e.preventDefault();
        const d = e.deltaY !== 0 ? e.deltaY : e.deltaX;
        if (d !== 0) this.panBy(Math.sign(d) * 0.1, true);
      },
      { passive: false },
    );
    this.ro = new ResizeObserver(() => this.onResize());
    this.ro.observe(this.body);
    this.io = new IntersectionObserver(
      (entries) => {
        for (const e of entries) this.onScreen = e.isIntersecting;
        this.catchUp();
      },
      { rootMargin: '300px 0px' },
    );
    this.io.observe(this.root);
    document.addEventListener('visibilitychange', this.onVisibility);
  }

  private catchUp(): void {
    if (this.stale && this.onScreen && !document.hidden) {
      this.stale = false;
      this.refresh();
    }
  }

  // First load; call once the root is in the document (the width comes from the layout).
  start(): void {
    void this.load();
  }

  // A live update: refetch, at most once per second; a chart off-screen (or in a hidden tab) only notes
  // it and refetches when it comes into view.
  refresh(): void {
    if (this.destroyed || this.timer !== null) return;
    if (!this.onScreen || document.hidden) {
      this.stale = true;
      return;
    }
    const wait = this.lastFetch + kThrottleMs - Date.now();
    if (this.abort || wait > 0) {
      this.timer = window.setTimeout(() => {
        this.timer = null;
        this.refresh();
      }, Math.max(wait, 100));
      return;
    }
    void this.load();
  }

  timeModeChanged(): void {
    const wasZoomed = this.zoom !== null;
    this.zoom = null;
    this.extent = null;
    if (wasZoomed || !this.answers) void this.load();
    else this.plot(this.answers);
    this.updateCsv();
  }

  themeChanged(): void {
    this.sig = '';
    if (this.answers) this.plot(this.answers);
  }

  destroy(): void {
    this.destroyed = true;
    this.abort?.abort();
    if (this.timer !== null) clearTimeout(this.timer);
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    if (this.panTimer !== null) clearTimeout(this.panTimer);
    this.ro.disconnect();
    this.io.disconnect();
    document.removeEventListener('visibilitychange', this.onVisibility);
    this.u?.destroy();
    this.u = null;
    window.__runmonCharts.delete(this.spec.id);
    this.root.remove();
  }

  // ---- data ----

  private wall(): boolean {
    return this.host.timeMode() === 'wall' && this.xAxis === 'time';
  }

  private offsetOf(dir: string): number {
    if (!this.wall()) return 0;
    return this.host.runs().find((r) => r.dir === dir)?.start ?? 0;
  }

  // The API's x range (seconds since each run's start, or steps) that covers the zoomed display range.
  private apiRange(): { start?: string; end?: string } {
    if (!this.zoom) return {};
    let [a, b] = this.zoom;
    if (this.wall()) {
      const starts = this.host.runs().map((r) => r.start ?? 0);
      a -= Math.max(...starts);
      b -= Math.min(...starts);
    }
    if (this.xAxis === 'time') a = Math.max(0, a);
    if (!(b > a)) b = a + 1e-3;
    return { start: String(a), end: String(b) };
  }

  private baseQuery(dirs: string[]): Record<string, string> {
    return { runs: dirs.join(','), ...this.spec.query };
  }

  private updateCsv(): void {
    const dirs = this.host.runs().map((r) => r.dir);
    this.csv.href = apiUrl('/api/chart.csv', { ...this.baseQuery(dirs), ...this.apiRange() });
  }

  private pixelWidth(): number {
    const w = Math.round(this.body.clientWidth || this.root.clientWidth || 600);
    return Math.max(1, Math.min(2000, w));
  }

  private loadNow(): void {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    void this.load();
  }

  private async load(): Promise<void> {
    if (this.destroyed) return;
    this.abort?.abort();
    const ac = new AbortController();
    this.abort = ac;
    this.lastFetch = Date.now();
    if (this.retryTimer !== null) {
      clearTimeout(this.retryTimer);
      this.retryTimer = null;
    }
    const width = this.pixelWidth();
    const runs = this.host.runs();
    this.updateCsv();
    try {
      let answers: Answer[];
      if (this.wall() && this.zoom && runs.length > 1) {
        // Runs started at different times: each run's own x range, so each gets full resolution.
        const [a, b] = this.zoom;
        const got = await Promise.all(
          runs.map(async (r) => {
            const s = r.start ?? 0;
            const start = Math.max(0, a - s);
            const end = b - s;
            if (!(end > start)) return null;
            try {
              const q = { ...this.baseQuery([r.dir]), width, start, end };
              return { data: await limited(() => fetchChart(q, ac.signal)) };
            } catch (e) {
              if (e instanceof ApiError && e.status === 404) return null; // that run lacks the chart
              throw e;
            }
          }),
        );
        answers = got.filter((x): x is Answer => x !== null);
      } else {
        const q = { ...this.baseQuery(runs.map((r) => r.dir)), width, ...this.apiRange() };
        answers = [{ data: await limited(() => fetchChart(q, ac.signal)) }];
      }
      if (ac.signal.aborted || this.destroyed) return;
      this.fetchedWidth = width;
      this.answers = answers;
      this.plot(answers);
      if (answers.some((a) => a.data.loading)) {
        this.retryTimer = window.setTimeout(() => {
          this.retryTimer = null;
          this.refresh();
        }, 1000);
      }
    } catch (e) {
      if (isAbort(e) || ac.signal.aborted || this.destroyed) return;
      this.showMessage(e instanceof ApiError && e.status === 404 ? 'No data' : `Error: ${errorText(e)}`, true);
    } finally {
      if (this.abort === ac) this.abort = null;
    }
  }

  private build(answers: Answer[]): Built {
    const runs = this.host.runs();
    const multi = runs.length > 1;
    const first = answers[0]?.data;
    const xAxis = first?.xAxis ?? this.xAxis;
    this.xAxis = xAxis;
    const label = (s: ChartData['series'][number]): string => {
      const name = s.name || s.key;
      if (!multi) return name;
      const run = s.runName || runs.find((r) => r.dir === s.run)?.name || s.run;
      return `${run} ${name}`;
    };

    // Groups of series sharing one x array and one offset.
    interface Group {
      xs: number[];
      off: number;
      series: ChartData['series'];
    }
    const groups: Group[] = [];
    for (const { data } of answers) {
      const byOff = new Map<number, ChartData['series']>();
      for (const s of data.series) {
        const off = this.offsetOf(s.run);
        const list = byOff.get(off);
        if (list) list.push(s);
        else byOff.set(off, [s]);
      }
      for (const [off, series] of byOff) groups.push({ xs: data.x, off, series });
    }

    const out: PlottedSeries[] = [];
    let x: number[];
    if (groups.length <= 1) {
      const g = groups[0];
      const keep: number[] = [];
      (g?.xs ?? []).forEach((v, i) => {
        if (Number.isFinite(v)) keep.push(i);
      });
      x = keep.map((i) => g.xs[i] + g.off);
      for (const s of g?.series ?? []) {
        const joined = joinSmallGaps(g.xs, s.values);
        out.push({ name: label(s), run: s.run, key: s.key, values: keep.map((i) => joined[i]) });
      }
    } else {
      // Merge the groups' points in x order; a series is undefined at other groups' points.
      const pts: { x: number; g: number; i: number }[] = [];
      groups.forEach((g, gi) => {
        // Past a run's last value its points are all null: leave them out, or a short run would stretch
        // the wall-clock axis to (its start + the longest run's duration).
        let end = g.xs.length;
        while (end > 0 && g.series.every((s) => s.values[end - 1] === null)) end--;
        for (let i = 0; i < end; i++) {
          const v = g.xs[i];
          if (Number.isFinite(v)) pts.push({ x: v + g.off, g: gi, i });
        }
      });
      pts.sort((p, q) => p.x - q.x || p.g - q.g || p.i - q.i);
      x = pts.map((p) => p.x);
      groups.forEach((g, gi) => {
        for (const s of g.series) {
          const joined = joinSmallGaps(g.xs, s.values);
          const values: PlotValue[] = new Array<PlotValue>(pts.length);
          for (let j = 0; j < pts.length; j++) values[j] = pts[j].g === gi ? joined[pts[j].i] : undefined;
          out.push({ name: label(s), run: s.run, key: s.key, values });
        }
      });
    }
    return {
      x,
      series: out,
      xAxis,
      unit: first?.unit || this.spec.unit,
      title: this.spec.title || first?.title || this.spec.id,
      loading: answers.some((a) => a.data.loading),
    };
  }

  private setUnit(unit: string): void {
    this.unitEl.textContent = unit ? unit : '';
    this.unitEl.hidden = unit === '';
  }

  private showMessage(text: string | null, error = false): void {
    if (text === null) {
      this.msgEl.hidden = true;
      return;
    }
    replaceChildren(this.msgEl, text);
    this.msgEl.classList.toggle('error', error);
    this.msgEl.hidden = false;
  }

  private plot(answers: Answer[]): void {
    const b = this.build(answers);
    const wall = this.wall();
    this.setUnit(b.unit);
    if (this.spec.kind === 'panel' && !this.spec.title) this.titleEl.textContent = b.title;

    if (!this.zoom) {
      let lo = Infinity;
      let hi = -Infinity;
      for (const v of b.x) {
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
      if (b.xAxis === 'time') {
        for (const r of this.host.runs()) {
          const off = wall ? r.start ?? 0 : 0;
          lo = Math.min(lo, off);
          if (r.duration !== null) hi = Math.max(hi, off + r.duration);
        }
      }
      this.extent = lo < hi ? [lo, hi] : null;
    } else if (this.extent && b.xAxis === 'time') {
      // A live run grows while zoomed: let panning reach its new end.
      for (const r of this.host.runs()) {
        const off = wall ? r.start ?? 0 : 0;
        if (r.duration !== null) this.extent[1] = Math.max(this.extent[1], off + r.duration);
      }
    }

    this.updates++;
    window.__runmonCharts.set(this.spec.id, {
      kind: this.spec.kind,
      title: b.title,
      unit: b.unit,
      xAxis: b.xAxis,
      timeMode: this.host.timeMode(),
      range: this.zoom ? [this.zoom[0], this.zoom[1]] : null,
      updates: this.updates,
      x: b.x,
      series: b.series,
    });

    const hasData = b.series.some((s) => s.values.some((v) => v !== null && v !== undefined));
    if (b.series.length === 0 || b.x.length === 0 || !hasData) {
      this.showMessage(b.loading ? 'Loading…' : 'No data');
    } else {
      this.showMessage(null);
    }

    this.lastVals = [null, ...b.series.map((s) => lastValue(s.values))];
    const data = [b.x, ...b.series.map((s) => s.values)] as uPlot.AlignedData;
    const dark = matchMedia('(prefers-color-scheme: dark)').matches;
    const sig = JSON.stringify([b.series.map((s) => s.name), b.xAxis, wall, b.unit, dark]);
    if (!this.u || sig !== this.sig) {
      this.u?.destroy();
      this.sig = sig;
      this.u = new uPlot(this.options(b, wall), data, this.plotEl);
    } else {
      this.u.setData(data, !this.zoom);
    }
    if (this.zoom) this.u.setScale('x', { min: this.zoom[0], max: this.zoom[1] });
  }

  private options(b: Built, wall: boolean): uPlot.Options {
    const fg = cssVar('--fg-muted', '#888');
    const grid = cssVar('--grid', 'rgba(128,128,128,0.2)');
    const unit = b.unit;
    const xAxis = b.xAxis;
    const runIndex = this.host.runs().map((r) => r.dir);
    const keyIndex = [...new Set(b.series.map((s) => s.key))];
    const axisBase = {
      stroke: fg,
      grid: { stroke: grid, width: 1 },
      ticks: { stroke: grid, width: 1, size: 4 },
      font: '11px system-ui, sans-serif',
    };
    const xAxisOpts: uPlot.Axis =
      xAxis === 'step'
        ? { ...axisBase, values: (_u, splits) => formatTicks(splits, '') }
        : wall
          ? { ...axisBase, values: (_u, splits, _ai, _space, incr) => formatWallTicks(splits, incr) }
          : {
              ...axisBase,
              incrs: kRelTimeIncrs,
              values: (_u, splits, _ai, _space, incr) => splits.map((v) => formatRelTick(v, incr)),
            };
    const yAxisOpts: uPlot.Axis = {
      ...axisBase,
      ...(isByteUnit(unit) ? { incrs: kByteIncrs } : {}),
      values: (_u, splits) => formatTicks(splits, unit),
      size: (_u, values) => (values ? Math.max(36, Math.max(...values.map((v) => String(v ?? '').length)) * 6.5 + 16) : 50),
    };
    return {
      width: this.pixelWidth(),
      height: kHeight,
      scales: {
        x: { time: wall },
        y:
          unit === '%'
            ? { range: (_u, mn, mx) => [Math.min(0, mn ?? 0), Math.max(100, mx ?? 100)] }
            : {},
      },
      series: [
        {
          label: xAxis === 'step' ? 'step' : 'time',
          value: (_u, v, _si, idx) => (idx === null ? 'latest' : formatX(v, xAxis, wall)),
        },
        ...b.series.map((s) => ({
          label: s.name,
          stroke: kPalette[keyIndex.indexOf(s.key) % kPalette.length],
          dash: kDashes[Math.max(0, runIndex.indexOf(s.run)) % kDashes.length],
          width: 1.5,
          spanGaps: false,
          value: (_u: uPlot, v: number | null, si: number, idx: number | null) =>
            formatValue(idx === null ? this.lastVals[si] : v, unit),
        })),
      ],
      axes: [xAxisOpts, yAxisOpts],
      cursor: {
        y: false,
        drag: { x: true, y: false, setScale: false },
        bind: { dblclick: () => null },
      },
      legend: { live: true },
      hooks: { setSelect: [(u) => this.onSelect(u)] },
    };
  }

  // ---- interaction ----

  private onSelect(u: uPlot): void {
    const sel = u.select;
    if (sel.width < 4) return;
    const a = u.posToVal(sel.left, 'x');
    const b = u.posToVal(sel.left + sel.width, 'x');
    u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
    if (b > a) this.zoomTo([a, b]);
  }

  private zoomTo(range: [number, number]): void {
    this.zoom = range;
    this.u?.setScale('x', { min: range[0], max: range[1] });
    this.loadNow();
  }

  private reset(): void {
    if (!this.zoom) return;
    this.zoom = null;
    this.loadNow();
  }

  private panBy(fraction: number, debounce = false): void {
    if (!this.zoom) return;
    const [a, b] = this.zoom;
    const span = b - a;
    let d = span * fraction;
    if (this.extent) {
      const [lo, hi] = this.extent;
      if (a + d < lo) d = Math.min(0, lo - a);
      if (b + d > hi) d = Math.max(0, hi - b);
    }
    if (d === 0) return;
    this.zoom = [a + d, b + d];
    this.u?.setScale('x', { min: this.zoom[0], max: this.zoom[1] });
    this.updateCsv();
    if (this.panTimer !== null) clearTimeout(this.panTimer);
    if (debounce) {
      this.panTimer = window.setTimeout(() => {
        this.panTimer = null;
        this.loadNow();
      }, kPanDebounceMs);
    } else {
      this.loadNow();
    }
  }

  private onResize(): void {
    if (this.destroyed) return;
    const w = this.pixelWidth();
    if (this.u && Math.abs(this.u.width - w) >= 1) this.u.setSize({ width: w, height: kHeight });
    if (this.fetchedWidth > 0 && Math.abs(w - this.fetchedWidth) / this.fetchedWidth > 0.25) this.refresh();
  }
}
