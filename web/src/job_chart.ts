// One metric across a job's nodes (GET /api/jobs/<id>/series): the band view draws the minimum and maximum
// over the nodes as a filled area with the median as a line, the per-node view one line per node; both on
// the job's clock (seconds since its first node started). The tooltip and the legend name, at the hovered
// point (or the latest one), the node at the minimum (the slowest: for utilisation, power or throughput the
// node doing least work) and the node at the maximum. Drag to zoom (refetched for that range), double-click
// or Reset to see everything; live refreshes are throttled to one a second.
//
// The server leaves out buckets no node has a value in: where the times jump by more than a bucket and a
// half, a row of nulls is put in so lines and the band break there. A node missing from a bucket or two is
// drawn across (joinSmallGaps); a longer absence is a gap in its line.

import type uPlot from 'uplot';
import { fetchJobSeries, type JobSeries } from './api';
import { ChartBase, cssVar, joinSmallGaps, kPalette, kRelTimeAxis, limited, type PlottedChart, type PlottedSeries } from './chart_common';
import { h, replaceChildren } from './dom';
import { formatDuration, formatValue } from './format';

export type JobView = 'band' | 'nodes';

// The chart's id in window.__runmonCharts.
export const kJobChartId = 'job';

const kHeight = 300;

// The x rows drawn: each is a band point, or a gap (-1) between points a bucket and a half or more apart.
interface Rows {
  x: number[];
  point: number[]; // row -> index into the band's points, -1 for a gap row
}

function buildRows(s: JobSeries): Rows {
  const x: number[] = [];
  const point: number[] = [];
  const t = s.band.t;
  for (let i = 0; i < t.length; i++) {
    if (!Number.isFinite(t[i])) continue;
    const prev = x.length ? x[x.length - 1] : NaN;
    if (s.bucket > 0 && Number.isFinite(prev) && t[i] - prev > 1.5 * s.bucket) {
      x.push((prev + t[i]) / 2);
      point.push(-1);
    }
    x.push(t[i]);
    point.push(i);
  }
  return { x, point };
}

export class JobChart extends ChartBase<JobSeries> {
  private readonly tipEl: HTMLElement;
  private readonly slowestEl: HTMLElement;
  private data: JobSeries | null = null;
  private rows: Rows = { x: [], point: [] };
  private published: PlottedChart | null = null; // what window.__runmonCharts holds for this chart

  constructor(
    private readonly jobId: string,
    private key: string,
    private view: JobView,
  ) {
    super({
      id: kJobChartId,
      title: key,
      unit: '',
      height: kHeight,
      attrs: { class: 'chart job-chart', testid: 'job-chart', 'data-view': view },
      bodyClass: 'chart-body job-chart-body',
    });
    this.tipEl = h('div', { class: 'job-tooltip', testid: 'job-tooltip', role: 'status' });
    this.tipEl.hidden = true;
    this.body.append(this.tipEl);
    this.slowestEl = h('div', { class: 'job-slowest muted', testid: 'job-slowest' });
    this.root.append(this.slowestEl);
    this.plotEl.addEventListener('mouseleave', () => this.showTip(null));
  }

  setKey(key: string): void {
    if (key === this.key) return;
    this.key = key;
    this.zoom = null;
    this.data = null;
    this.titleEl.textContent = key;
    this.loadNow();
  }

  setView(view: JobView): void {
    if (view === this.view) return;
    this.view = view;
    this.root.dataset.view = view;
    if (this.data) this.plot(this.data);
  }

  override destroy(): void {
    super.destroy();
    this.published = null;
  }

  protected request(signal: AbortSignal): Promise<JobSeries> {
    const query: Record<string, string | number> = { key: this.key, width: this.pixelWidth() };
    if (this.zoom) {
      query.start = this.zoom[0];
      query.end = this.zoom[1];
    }
    return limited(() => fetchJobSeries(this.jobId, query, signal));
  }

  protected received(s: JobSeries): void {
    this.data = s;
    this.plot(s);
  }

  protected loading(s: JobSeries): boolean {
    return s.loading;
  }

  private nodeName(s: JobSeries, index: number): string | null {
    return Number.isInteger(index) && index >= 0 && index < s.nodes.length ? s.nodes[index].node : null;
  }

  // The band point a row shows, or the latest point when `row` is null (not hovering).
  private pointAt(row: number | null): number {
    if (row !== null) return row >= 0 && row < this.rows.point.length ? this.rows.point[row] : -1;
    return this.data ? this.data.band.t.length - 1 : -1;
  }

  private series(s: JobSeries): PlottedSeries[] {
    const { point } = this.rows;
    const at = <T>(values: T[]): (T | null)[] => point.map((p) => (p < 0 ? null : values[p]));
    const finite = (values: (number | null)[]): (number | null)[] => values.map((v) => (v !== null && Number.isFinite(v) ? v : null));
    if (this.view === 'band') {
      return [
        { name: 'min', run: '', key: s.key, values: finite(at(s.band.min)) },
        { name: 'median', run: '', key: s.key, values: finite(at(s.band.median)) },
        { name: 'max', run: '', key: s.key, values: finite(at(s.band.max)) },
      ];
    }
    return s.nodes.map((n) => ({
      name: n.node,
      run: n.run,
      key: s.key,
      values: joinSmallGaps(this.rows.x, at(n.values).map((v) => v ?? null)),
    }));
  }

  private plot(s: JobSeries): void {
    this.rows = buildRows(s);
    const series = this.series(s);
    this.titleEl.textContent = s.title || s.key;
    this.setUnit(s.unit);
    const names = (column: number[]): (string | null)[] =>
      this.rows.point.map((p) => (p < 0 ? null : this.nodeName(s, column[p])));
    this.showMessage(this.rows.x.length === 0 ? (s.loading ? 'Loading…' : 'No data in this range') : null);
    this.renderSlowest(s);

    const u = this.draw(this.rows.x, series, [this.view, series.map((x) => x.name), s.unit], () => this.options(s, series));
    this.published = this.publish({
      kind: 'job',
      title: s.title || s.key,
      unit: s.unit,
      xAxis: 'time',
      timeMode: 'relative',
      x: this.rows.x,
      series,
      view: this.view,
      scale: this.drawnScale(),
      minNode: names(s.band.minNode),
      maxNode: names(s.band.maxNode),
    });
    this.showTip(u.cursor.idx ?? null);
  }

  // The x range uPlot drew (known once it has drawn: it draws after a microtask).
  private drawnScale(): [number, number] {
    const x = this.u?.scales.x;
    return [x?.min ?? NaN, x?.max ?? NaN];
  }

  // Under the chart: which node is at the minimum most often in the range shown.
  private renderSlowest(s: JobSeries): void {
    const counts = new Map<number, number>();
    for (const n of s.band.minNode) if (Number.isInteger(n)) counts.set(n, (counts.get(n) ?? 0) + 1);
    let best = -1;
    let most = 0;
    for (const [n, c] of counts) {
      if (c > most || (c === most && n < best)) {
        best = n;
        most = c;
      }
    }
    const name = this.nodeName(s, best);
    if (name === null || s.nodes.length < 2) {
      replaceChildren(this.slowestEl);
      return;
    }
    replaceChildren(
      this.slowestEl,
      'At the minimum most often: ',
      h('strong', { testid: 'job-slowest-node' }, name),
      ` (${most} of ${s.band.t.length} points)`,
      s.warning ? h('span', { class: 'job-warning', testid: 'job-series-warning' }, ` · ${s.warning}`) : null,
    );
  }

  private showTip(row: number | null): void {
    const s = this.data;
    const u = this.u;
    if (!s || !u || row === null) {
      this.tipEl.hidden = true;
      return;
    }
    const p = this.pointAt(row);
    if (p < 0) {
      this.tipEl.hidden = true;
      return;
    }
    const unit = s.unit;
    const minName = this.nodeName(s, s.band.minNode[p]) ?? '–';
    const maxName = this.nodeName(s, s.band.maxNode[p]) ?? '–';
    const line = (testid: string, label: string, value: string, node?: string) =>
      h(
        'div',
        { class: 'tip-row', testid },
        h('span', { class: 'tip-label' }, label),
        h('span', { class: 'tip-value' }, value),
        node ? h('span', { class: 'tip-node', testid: `${testid}-node` }, node) : null,
      );
    const rows: HTMLElement[] = [
      line('tooltip-time', 't', formatDuration(s.band.t[p]), `${s.band.count[p]} of ${s.nodes.length} nodes`),
      line('tooltip-max', 'max', formatValue(s.band.max[p], unit), maxName),
      line('tooltip-median', 'median', formatValue(s.band.median[p], unit)),
      line('tooltip-min', 'min', formatValue(s.band.min[p], unit), `${minName} · slowest`),
    ];
    if (this.view === 'nodes') {
      const byValue = s.nodes
        .map((n, i) => ({ name: n.node, i, v: n.values[p] }))
        .filter((n): n is { name: string; i: number; v: number } => n.v !== null)
        .sort((a, b) => b.v - a.v || a.i - b.i);
      for (const n of byValue.slice(0, 12)) {
        rows.push(line('tooltip-node', n.name, formatValue(n.v, unit)));
      }
    }
    replaceChildren(this.tipEl, ...rows);
    this.tipEl.hidden = false;
    // Beside the cursor, inside the chart.
    const left = u.cursor.left ?? -1;
    const over = u.over;
    const x = over.offsetLeft + Math.max(0, left);
    const room = this.body.clientWidth - this.tipEl.offsetWidth - 8;
    this.tipEl.style.left = `${Math.max(0, Math.min(room, x + 14))}px`;
    this.tipEl.style.top = `${over.offsetTop + 8}px`;
  }

  private options(s: JobSeries, series: PlottedSeries[]): uPlot.Options {
    const accent = cssVar('--accent', '#2f6fdb');
    const unit = s.unit;
    // The legend: the hovered point's values (the latest one's when not hovering), the band's edges with
    // the nodes holding them.
    const valueAt = (si: number, idx: number | null, v: number | null): string => {
      const d = this.data;
      if (!d) return '–';
      const p = this.pointAt(idx);
      if (idx !== null && p < 0) return '–';
      if (this.view === 'nodes') return formatValue(idx === null ? (p >= 0 ? d.nodes[si - 1]?.values[p] : null) : v, unit);
      if (p < 0) return '–';
      const value = formatValue(si === 1 ? d.band.min[p] : si === 2 ? d.band.median[p] : d.band.max[p], unit);
      if (si === 2) return value;
      const node = this.nodeName(d, si === 1 ? d.band.minNode[p] : d.band.maxNode[p]);
      return node ? `${value} · ${node}` : value;
    };
    const ySeries: uPlot.Series[] =
      this.view === 'band'
        ? [
            { label: 'min (slowest)', stroke: accent, width: 1, dash: [4, 3] },
            { label: 'median', stroke: accent, width: 2 },
            { label: 'max', stroke: accent, width: 1, dash: [4, 3] },
          ]
        : series.map((x, i) => ({ label: x.name, stroke: kPalette[i % kPalette.length], width: 1.5 }));
    return this.plotOptions({
      unit,
      wall: false,
      xAxis: kRelTimeAxis,
      series: [
        { label: 'time', value: (_u, v, _si, idx) => (idx === null ? 'latest' : formatDuration(v)) },
        ...ySeries.map((y) => ({
          ...y,
          spanGaps: false,
          value: (_u: uPlot, v: number | null, si: number, idx: number | null) => valueAt(si, idx, v),
        })),
      ],
      bands: this.view === 'band' ? [{ series: [3, 1], fill: 'rgba(90, 148, 240, 0.18)' }] : [],
      hooks: {
        setCursor: [(u) => this.showTip(u.cursor.idx ?? null)],
        draw: [
          () => {
            if (this.published) this.published.scale = this.drawnScale();
          },
        ],
      },
    });
  }
}
