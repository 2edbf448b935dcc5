// Many nodes of one job in one view: a logdir with three node runs of job 4711 and one run of no job
// (written by job_fixture.py with tests/e2e/runlog_writer.py, environment records holding the job). Checks
// the jobs list, the band on the chart at a known point (node 1 is the slowest from 30 s to 40 s: the
// tooltip and the legend name it at the minimum, node 2 at the maximum), the per-node view's three lines,
// and the runs table's link from a node's run to its job.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { close, plotted, rawRequest, Session } from './harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const s = new Session('jobs');
let server;
let page;
const kStart = Math.floor(Date.now() / 1000) - 3600;
// The buckets run from 0.8 s past one second of the job to 0.8 s past the next (the nodes tick at 0.1, 0.3
// and 0.5 s past each second): the one centred at 35.3 s holds every node's 36th sample.
const kPoint = 35.3;

function writeFixture(logdir) {
  return new Promise((resolve, reject) => {
    const child = spawn('python3', [path.join(here, 'job_fixture.py'), logdir, String(kStart)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`job_fixture.py exited ${code}: ${stderr}`))));
  });
}

async function waitJobChart(view, minUpdates = 0) {
  await page.waitForFunction(
    ([v, u]) => {
      const c = window.__runmonCharts.get('job');
      return c && c.view === v && c.updates > u && c.x.length > 0 && Number.isFinite(c.scale[0]) && Number.isFinite(c.scale[1]);
    },
    [view, minUpdates],
  );
  return plotted(page, 'job');
}

function pointIndex(chart) {
  const i = chart.x.findIndex((x) => close(x, kPoint, { abs: 1e-3, rel: 0 }));
  assert.ok(i >= 0, `no point at ${kPoint} s among ${chart.x.slice(0, 10).join(', ')}…`);
  return i;
}

// Moves the mouse over the plot at job time `t` (the x scale the page drew with).
async function hover(chart, t) {
  const box = await page.locator('[data-testid="job-chart"] .u-over').boundingBox();
  const [min, max] = chart.scale;
  assert.ok(max > min, `x scale ${min}..${max}`);
  await page.mouse.move(box.x + ((t - min) / (max - min)) * box.width, box.y + box.height / 2);
}

describe('jobs', () => {
  before(async () => {
    const logdir = await s.tempDir('logdir');
    await writeFixture(logdir);
    server = await s.serve(['--logdir', logdir, '--port', '0']);
    await s.launchBrowser();
    page = await s.newPage();
  });

  after(() => s.cleanup());

  it(
    'lists the job with its three nodes',
    s.guard(async () => {
      await page.goto(`${server.origin}/#/`);
      await page.getByTestId('nav-jobs').click();
      await page.waitForURL('**/#/jobs');
      const rows = page.getByTestId('job-row');
      await rows.first().waitFor();
      assert.equal(await rows.count(), 1, 'the run of no job is in no job');
      assert.equal(await rows.first().getAttribute('data-job-id'), '4711');
      assert.equal((await page.getByTestId('job-node-count').textContent()).trim(), '3');
      assert.equal((await page.getByTestId('job-launcher').textContent()).trim(), 'slurm');
      await page.getByTestId('job-link').click();
      await page.waitForURL('**/#/jobs/4711**');
      const names = await page.getByTestId('job-node-name').allTextContents();
      assert.deepEqual(names, ['node 0 (gpu-a)', 'node 1 (gpu-b)', 'node 2 (gpu-c)']);
      assert.deepEqual(page.pageErrors, []);
    }),
  );

  it(
    'draws the band and names the slowest node at a known point',
    s.guard(async () => {
      const chart = await waitJobChart('band');
      assert.equal(await page.getByTestId('job-metric').inputValue(), 'gpu.0.gpu');
      assert.equal(chart.unit, '%');
      assert.deepEqual(
        chart.series.map((x) => x.name),
        ['min', 'median', 'max'],
      );
      assert.equal(chart.x.length, 60, 'one point a second, each holding all three nodes');
      const i = pointIndex(chart);
      const [min, median, max] = chart.series.map((x) => x.values[i]);
      assert.deepEqual([min, median, max], [20, 80, 90]);
      assert.equal(chart.minNode[i], 'node 1 (gpu-b)');
      assert.equal(chart.maxNode[i], 'node 2 (gpu-c)');
      // Before the slow stretch node 0 is the lowest.
      assert.equal(chart.minNode[5], 'node 0 (gpu-a)');
      assert.deepEqual(
        chart.series.map((x) => x.values[5]),
        [80, 85, 90],
      );
      // What was drawn is what the API computed.
      const api = JSON.parse((await rawRequest(server.origin, '/api/jobs/4711/series?key=gpu.0.gpu&width=1000')).body);
      const j = api.band.t.findIndex((t) => close(t, kPoint, { abs: 1e-3, rel: 0 }));
      assert.deepEqual([api.band.min[j], api.band.median[j], api.band.max[j]], [20, 80, 90]);
      assert.equal(api.nodes[api.band.min_node[j]].node, 'node 1 (gpu-b)');

      // The tooltip and the legend at the hovered point.
      await hover(chart, kPoint);
      const tip = page.getByTestId('job-tooltip');
      await tip.waitFor({ state: 'visible' });
      await page.waitForFunction(() => document.querySelector('[data-testid="tooltip-min"]')?.textContent?.includes('20%'));
      assert.match(await page.getByTestId('tooltip-min').textContent(), /20%.*node 1 \(gpu-b\).*slowest/);
      assert.match(await page.getByTestId('tooltip-max').textContent(), /90%.*node 2 \(gpu-c\)/);
      assert.match(await page.getByTestId('tooltip-median').textContent(), /80%/);
      assert.match(await page.getByTestId('tooltip-time').textContent(), /3 of 3 nodes/);
      const legend = await page.locator('[data-testid="job-chart"] .u-legend').textContent();
      assert.match(legend, /20%\s*·\s*node 1 \(gpu-b\)/, `legend: ${legend}`);
      assert.match(legend, /90%\s*·\s*node 2 \(gpu-c\)/, `legend: ${legend}`);
      await s.screenshot(page, 'jobs-band.png');
      // Elsewhere node 0 is at the minimum.
      await hover(chart, 5.3);
      await page.waitForFunction(() => document.querySelector('[data-testid="tooltip-min-node"]')?.textContent?.includes('node 0'));
      assert.match(await page.getByTestId('tooltip-min').textContent(), /80%.*node 0 \(gpu-a\)/);
      assert.equal((await page.getByTestId('job-slowest-node').textContent()).trim(), 'node 0 (gpu-a)');
      assert.deepEqual(page.pageErrors, []);
    }),
  );

  it(
    'shows one line per node',
    s.guard(async () => {
      const before = await plotted(page, 'job');
      await page.getByTestId('view-nodes').click();
      assert.equal(await page.getByTestId('view-nodes').getAttribute('aria-pressed'), 'true');
      const chart = await waitJobChart('nodes', before.updates);
      assert.deepEqual(
        chart.series.map((x) => x.name),
        ['node 0 (gpu-a)', 'node 1 (gpu-b)', 'node 2 (gpu-c)'],
      );
      const i = pointIndex(chart);
      assert.deepEqual(
        chart.series.map((x) => x.values[i]),
        [80, 20, 90],
      );
      for (const line of chart.series) {
        assert.equal(line.values.filter((v) => v !== null && v !== undefined).length, 60, `${line.name} has a value at every point`);
      }
      assert.equal(await page.locator('[data-testid="job-chart"] .u-legend .u-series').count(), 4, 'time and three nodes');
      assert.match(page.url(), /view=nodes/);
      await hover(chart, kPoint);
      await page.waitForFunction(() => document.querySelectorAll('[data-testid="tooltip-node"]').length === 3);
      assert.match(await page.getByTestId('tooltip-min').textContent(), /node 1 \(gpu-b\)/);
      await s.screenshot(page, 'jobs-nodes.png');
      // A reload keeps the metric and the view.
      await page.reload();
      const again = await waitJobChart('nodes');
      assert.equal(again.series.length, 3);
      assert.deepEqual(page.pageErrors, []);
    }),
  );

  it(
    'links a node\'s run in the runs table to its job',
    s.guard(async () => {
      await page.goto(`${server.origin}/#/`);
      await page.getByTestId('run-row').first().waitFor();
      assert.equal(await page.getByTestId('run-row').count(), 4);
      const solo = page.locator('[data-testid="run-row"][data-run-dir$="-solo"]');
      assert.equal(await solo.getByTestId('run-job-link').count(), 0, 'a run of no job has no job link');
      const node1 = page.locator('[data-testid="run-row"][data-run-dir$="-node1"]');
      assert.equal((await node1.getByTestId('run-job-link').textContent()).trim(), 'job 4711 · node 1');
      assert.equal(await page.getByTestId('run-job-link').count(), 3);
      await node1.getByTestId('run-job-link').click();
      await page.waitForURL('**/#/jobs/4711**');
      await waitJobChart('band');
      assert.deepEqual(page.pageErrors, []);
    }),
  );

  it(
    'server exits 0 on SIGTERM',
    s.guard(() => s.stopServers()),
  );
});
