// One chart: fetches /api/chart for the shown runs (downsampled to the chart's pixel width), draws it with
// uPlot, and handles zoom (drag-select, then a refetch at full resolution for that range), reset
// (double-click or the button), pan (shift+wheel or the buttons), the CSV link and throttled live refresh.
//
// The server sends each bucket's minimum and maximum as two points on a shared x array, with nulls for
// empty buckets; they are drawn as one line with spanGaps false so gaps stay visible. In wall-clock mode
// every run's points move by that run's start, so several runs' points are merged into one sorted x array
// where a series has `undefined` (joined across, unlike null) at the other runs' points.

import type uPlot from 'uplot';
import { apiUrl, ApiError, type ChartData, fetchChart } from './api';
import { ChartBase, joinSmallGaps, kPalette, kRelTimeAxis, limited, type PlottedSeries, type PlotValue, type TimeMode } from './chart_common';
import { button, h } from './dom';
import { formatTicks, formatWallTicks, formatValue, formatX } from './format';

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

const kHeight = 220;
const kPanDebounceMs = 250;

// Several runs: the same colours per series, a different dash per run.
const kDashes: number[][] = [[], [6, 3], [2, 3], [10, 3, 2, 3]];

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

// One load's answers and the width they were fetched for.
interface Fetched {
  width: number;
  answers: Answer[];
}

export class ChartView extends ChartBase<Fetched> {
  private readonly csv: HTMLAnchorElement;
  private extent: [number, number] | null = null;
  private answers: Answer[] | null = null;
  private xAxis: string;
  private panTimer: number | null = null;
  private fetchedWidth = 0;
  private lastVals: PlotValue[] = []; // per uPlot series index: the latest value, shown when not hovering
  private readonly io: IntersectionObserver;
  private onScreen = true;
  private stale = false; // a live refresh was skipped while off-screen or in a hidden tab
  private readonly onVisibility = (): void => this.catchUp();

  constructor(
    private readonly spec: ChartSpec,
    private readonly host: ChartHost,
  ) {
    const idAttrs =
      spec.kind === 'chart'
        ? { testid: 'chart', 'data-chart-id': spec.id }
        : { testid: 'panel', 'data-panel-id': spec.id };
    super({
      id: spec.id,
      title: spec.title,
      unit: spec.unit,
      height: kHeight,
      attrs: { class: 'chart', ...idAttrs },
      bodyClass: 'chart-body',
    });
    this.xAxis = spec.xAxis;
    this.csv = h('a', { class: 'btn btn-small', testid: 'chart-csv', download: '', title: 'Download CSV (full resolution)' }, 'CSV');
    this.controls.prepend(
      button('◀', { class: 'btn btn-small', testid: 'chart-pan-left', title: 'Pan left (or shift+wheel)' }, () => this.panBy(-0.25)),
      button('▶', { class: 'btn btn-small', testid: 'chart-pan-right', title: 'Pan right (or shift+wheel)' }, () => this.panBy(0.25)),
    );
    this.controls.append(this.csv, ...(spec.controls ?? []));
    this.updateCsv();

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

  // A chart off-screen (or in a hidden tab) only notes a live update and refetches when it comes into view.
  protected override deferRefresh(): boolean {
    if (this.onScreen && !document.hidden) return false;
    this.stale = true;
    return true;
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

  override destroy(): void {
    super.destroy();
    if (this.panTimer !== null) clearTimeout(this.panTimer);
    this.io.disconnect();
    document.removeEventListener('visibilitychange', this.onVisibility);
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

  protected async request(signal: AbortSignal): Promise<Fetched> {
    const width = this.pixelWidth();
    const runs = this.host.runs();
    this.updateCsv();
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
            return { data: await limited(() => fetchChart(q, signal)) };
          } catch (e) {
            if (e instanceof ApiError && e.status === 404) return null; // that run lacks the chart
            throw e;
          }
        }),
      );
      answers = got.filter((x): x is Answer => x !== null);
    } else {
      const q = { ...this.baseQuery(runs.map((r) => r.dir)), width, ...this.apiRange() };
      answers = [{ data: await limited(() => fetchChart(q, signal)) }];
    }
    return { width, answers };
  }

  protected received({ width, answers }: Fetched): void {
    this.fetchedWidth = width;
    this.answers = answers;
    this.plot(answers);
  }

  protected loading({ answers }: Fetched): boolean {
    return answers.some((a) => a.data.loading);
  }

  protected override failure(e: unknown): string {
    return e instanceof ApiError && e.status === 404 ? 'No data' : super.failure(e);
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

    this.publish({
      kind: this.spec.kind,
      title: b.title,
      unit: b.unit,
      xAxis: b.xAxis,
      timeMode: this.host.timeMode(),
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
    this.draw(b.x, b.series, [b.series.map((s) => s.name), b.xAxis, wall, b.unit], () => this.options(b, wall));
  }

  private options(b: Built, wall: boolean): uPlot.Options {
    const unit = b.unit;
    const xAxis = b.xAxis;
    const runIndex = this.host.runs().map((r) => r.dir);
    const keyIndex = [...new Set(b.series.map((s) => s.key))];
    return this.plotOptions({
      unit,
      wall,
      xAxis:
        xAxis === 'step'
          ? { values: (_u, splits) => formatTicks(splits, '') }
          : wall
            ? { values: (_u, splits, _ai, _space, incr) => formatWallTicks(splits, incr) }
            : kRelTimeAxis,
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
    });
  }

  // ---- interaction ----

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

  // Refetches when the width moved by more than a quarter from the one the data was fetched for.
  protected override resized(width: number): void {
    if (this.fetchedWidth > 0 && Math.abs(width - this.fetchedWidth) / this.fetchedWidth > 0.25) this.refresh();
  }
}
