// What the run charts (chart.ts) and a job's chart (job_chart.ts) share: the window.__runmonCharts test
// hook and its types, the request limit, the palette, gap joining, and ChartBase, which both extend: the
// chart's frame, fetching (aborting the request under way, throttled live refreshes, a retry while the
// server is still loading), drawing with uPlot, zoom by drag-select and Reset, resizing and teardown.

import uPlot from 'uplot';
import { errorText, isAbort } from './api';
import { type Attrs, button, h, replaceChildren } from './dom';
import { formatRelTick, formatTicks, isByteUnit, kByteIncrs, kRelTimeIncrs } from './format';

export type TimeMode = 'relative' | 'wall';

export type PlotValue = number | null | undefined;

export interface PlottedSeries {
  name: string; // the legend label
  run: string;
  key: string;
  values: PlotValue[];
}

// What tests read from window.__runmonCharts.
export interface PlottedChart {
  kind: 'chart' | 'panel' | 'job';
  title: string;
  unit: string;
  xAxis: string;
  timeMode: TimeMode;
  range: [number, number] | null; // the zoomed x range (plotted units), null when showing everything
  updates: number; // how many times it was plotted
  x: number[];
  series: PlottedSeries[];
  // A job's chart (job_chart.ts): its view, the x scale drawn, and per x the nodes at the band's edges.
  view?: 'band' | 'nodes';
  scale?: [number, number];
  minNode?: (string | null)[];
  maxNode?: (string | null)[];
}

declare global {
  interface Window {
    __runmonCharts: Map<string, PlottedChart>;
  }
}
window.__runmonCharts = window.__runmonCharts ?? new Map();

const kThrottleMs = 1000;
export const kPalette = [
  '#4e9af1', '#f28e2b', '#59a14f', '#e15759', '#b07aa1', '#76b7b2',
  '#edc948', '#ff9da7', '#9c755f', '#8cd17d', '#a0cbe8', '#d37295',
];

// At most a few chart requests at once: the browser has six connections per host and the event stream
// holds one.
const kMaxConcurrent = 4;
let active = 0;
const waiting: (() => void)[] = [];
export async function limited<T>(fn: () => Promise<T>): Promise<T> {
  while (active >= kMaxConcurrent) await new Promise<void>((resolve) => waiting.push(resolve));
  active++;
  try {
    return await fn();
  } finally {
    active--;
    waiting.shift()?.();
  }
}

export function cssVar(name: string, fallback: string): string {
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return v || fallback;
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

// An x axis of seconds since a start (a run's or a job's).
export const kRelTimeAxis: uPlot.Axis = {
  incrs: kRelTimeIncrs,
  values: (_u, splits, _ai, _space, incr) => splits.map((v) => formatRelTick(v, incr)),
};

// How a chart's frame differs: ChartBase builds the section with these, a subclass adds its own elements.
export interface ChartFrame {
  id: string; // its entry in window.__runmonCharts
  title: string;
  unit: string;
  height: number; // the plot's, in pixels
  attrs: Attrs; // the root section's
  bodyClass: string;
}

// A chart's own part of its uPlot options; ChartBase adds the size, the axes' look, the y axis and scale,
// the cursor and the legend.
export interface PlotParts {
  unit: string; // the y values'
  wall: boolean; // x is wall-clock time (uPlot's time scale)
  xAxis: uPlot.Axis; // how the x axis places and labels its ticks
  series: uPlot.Series[]; // x's first, then one per line
  bands?: uPlot.Band[];
  hooks?: uPlot.Hooks.Arrays; // besides setSelect, which zooms to the dragged range
}

// A chart whose data, of type T, one request fetches.
export abstract class ChartBase<T> {
  readonly root: HTMLElement;
  protected readonly body: HTMLElement;
  protected readonly plotEl: HTMLElement;
  protected readonly titleEl: HTMLElement;
  protected readonly controls: HTMLElement;
  private readonly msgEl: HTMLElement;
  private readonly unitEl: HTMLElement;
  protected u: uPlot | null = null;
  protected sig = ''; // what the uPlot was built for; a different one builds it anew
  protected zoom: [number, number] | null = null;
  private readonly id: string;
  private readonly height: number;
  private abort: AbortController | null = null;
  private lastFetch = 0;
  private timer: number | null = null;
  private retryTimer: number | null = null;
  private updates = 0;
  private destroyed = false;
  private readonly ro: ResizeObserver;

  protected constructor(frame: ChartFrame) {
    this.id = frame.id;
    this.height = frame.height;
    this.titleEl = h('span', { class: 'chart-title', testid: 'chart-title' }, frame.title);
    this.unitEl = h('span', { class: 'chart-unit', testid: 'chart-unit' });
    this.controls = h(
      'div',
      { class: 'chart-controls' },
      button('Reset', { class: 'btn btn-small', testid: 'chart-reset', title: 'Show the whole range (or double-click)' }, () => this.reset()),
    );
    this.plotEl = h('div', { class: 'chart-plot' });
    this.msgEl = h('div', { class: 'chart-msg', testid: 'chart-message' }, 'Loading…');
    this.body = h('div', { class: frame.bodyClass }, this.plotEl, this.msgEl);
    this.root = h(
      'section',
      frame.attrs,
      h('header', { class: 'chart-head' }, h('div', { class: 'chart-name' }, this.titleEl, this.unitEl), this.controls),
      this.body,
    );
    this.setUnit(frame.unit);

    this.plotEl.addEventListener('dblclick', () => this.reset());
    this.ro = new ResizeObserver(() => this.onResize());
    this.ro.observe(this.body);
  }

  // First load; call once the root is in the document (the width comes from the layout).
  start(): void {
    void this.load();
  }

  // A live update: refetch, at most once a second.
  refresh(): void {
    if (this.destroyed || this.timer !== null || this.deferRefresh()) return;
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

  destroy(): void {
    this.destroyed = true;
    this.abort?.abort();
    if (this.timer !== null) clearTimeout(this.timer);
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.ro.disconnect();
    this.u?.destroy();
    this.u = null;
    window.__runmonCharts.delete(this.id);
    this.root.remove();
  }

  // ---- what a chart supplies ----

  // Fetches the data to show.
  protected abstract request(signal: AbortSignal): Promise<T>;

  // Keeps and plots what a request fetched.
  protected abstract received(data: T): void;

  // Whether the server was still loading the data: then it is fetched again a second later.
  protected abstract loading(data: T): boolean;

  // Whether a live update waits instead of fetching now (false: never).
  protected deferRefresh(): boolean {
    return false;
  }

  // The message shown when a request failed.
  protected failure(e: unknown): string {
    return `Error: ${errorText(e)}`;
  }

  // Called when the body's width changed, after the plot took it.
  protected resized(_width: number): void {}

  // ---- data ----

  protected pixelWidth(): number {
    const w = Math.round(this.body.clientWidth || this.root.clientWidth || 600);
    return Math.max(1, Math.min(2000, w));
  }

  protected loadNow(): void {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    void this.load();
  }

  protected async load(): Promise<void> {
    if (this.destroyed) return;
    this.abort?.abort();
    const ac = new AbortController();
    this.abort = ac;
    this.lastFetch = Date.now();
    if (this.retryTimer !== null) {
      clearTimeout(this.retryTimer);
      this.retryTimer = null;
    }
    try {
      const data = await this.request(ac.signal);
      if (ac.signal.aborted || this.destroyed) return;
      this.received(data);
      if (this.loading(data)) {
        this.retryTimer = window.setTimeout(() => {
          this.retryTimer = null;
          this.refresh();
        }, 1000);
      }
    } catch (e) {
      if (isAbort(e) || ac.signal.aborted || this.destroyed) return;
      this.showMessage(this.failure(e), true);
    } finally {
      if (this.abort === ac) this.abort = null;
    }
  }

  // ---- drawing ----

  protected setUnit(unit: string): void {
    this.unitEl.textContent = unit ? unit : '';
    this.unitEl.hidden = unit === '';
  }

  protected showMessage(text: string | null, error = false): void {
    if (text === null) {
      this.msgEl.hidden = true;
      return;
    }
    replaceChildren(this.msgEl, text);
    this.msgEl.classList.toggle('error', error);
    this.msgEl.hidden = false;
  }

  // Counts a plot and puts what it shows into window.__runmonCharts (its fields in PlottedChart's order).
  protected publish(plotted: Omit<PlottedChart, 'range' | 'updates'>): PlottedChart {
    const { kind, title, unit, xAxis, timeMode, x, series, ...more } = plotted;
    const range: [number, number] | null = this.zoom ? [this.zoom[0], this.zoom[1]] : null;
    const chart: PlottedChart = { kind, title, unit, xAxis, timeMode, range, updates: ++this.updates, x, series, ...more };
    window.__runmonCharts.set(this.id, chart);
    return chart;
  }

  // Draws x and the series' values: into a new uPlot (with `options`) when `shape`, what the options
  // depend on, or the colour scheme changed, else into the one there.
  protected draw(x: number[], series: PlottedSeries[], shape: unknown[], options: () => uPlot.Options): uPlot {
    const data = [x, ...series.map((s) => s.values)] as uPlot.AlignedData;
    const dark = matchMedia('(prefers-color-scheme: dark)').matches;
    const sig = JSON.stringify([...shape, dark]);
    if (!this.u || sig !== this.sig) {
      this.u?.destroy();
      this.sig = sig;
      this.u = new uPlot(options(), data, this.plotEl);
    } else {
      this.u.setData(data, !this.zoom);
    }
    if (this.zoom) this.u.setScale('x', { min: this.zoom[0], max: this.zoom[1] });
    return this.u;
  }

  protected plotOptions(p: PlotParts): uPlot.Options {
    const fg = cssVar('--fg-muted', '#888');
    const grid = cssVar('--grid', 'rgba(128,128,128,0.2)');
    const unit = p.unit;
    const axisBase = {
      stroke: fg,
      grid: { stroke: grid, width: 1 },
      ticks: { stroke: grid, width: 1, size: 4 },
      font: '11px system-ui, sans-serif',
    };
    return {
      width: this.pixelWidth(),
      height: this.height,
      scales: {
        x: { time: p.wall },
        y: unit === '%' ? { range: (_u, mn, mx) => [Math.min(0, mn ?? 0), Math.max(100, mx ?? 100)] } : {},
      },
      series: p.series,
      bands: p.bands,
      axes: [
        { ...axisBase, ...p.xAxis },
        {
          ...axisBase,
          ...(isByteUnit(unit) ? { incrs: kByteIncrs } : {}),
          values: (_u, splits) => formatTicks(splits, unit),
          size: (_u, values) => (values ? Math.max(36, Math.max(...values.map((v) => String(v ?? '').length)) * 6.5 + 16) : 50),
        },
      ],
      cursor: {
        y: false,
        drag: { x: true, y: false, setScale: false },
        bind: { dblclick: () => null },
      },
      legend: { live: true },
      hooks: { setSelect: [(u) => this.onSelect(u)], ...p.hooks },
    };
  }

  // ---- interaction ----

  private onSelect(u: uPlot): void {
    const sel = u.select;
    if (sel.width < 4) return;
    const a = u.posToVal(sel.left, 'x');
    const b = u.posToVal(sel.left + sel.width, 'x');
    u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
    if (b > a) {
      this.zoom = [a, b];
      u.setScale('x', { min: a, max: b });
      this.loadNow();
    }
  }

  private reset(): void {
    if (!this.zoom) return;
    this.zoom = null;
    this.loadNow();
  }

  private onResize(): void {
    if (this.destroyed) return;
    const w = this.pixelWidth();
    if (this.u && Math.abs(this.u.width - w) >= 1) this.u.setSize({ width: w, height: this.height });
    this.resized(w);
  }
}
