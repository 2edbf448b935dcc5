// A run's workspace: the System charts, what the "cpu" and memory charts plot compared with the run's own
// data (runmon dump --format csv), and the relative / wall-clock time toggle.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { close, csvPoints, plotted, plottedPoints, rawRequest, Session, waitPlotted } from './harness.mjs';

// Some CPU and a growing resident set for about 1.5 s.
const kWorkload = [
  'python3',
  '-c',
  'import time\nblocks = []\nt = time.time()\nwhile time.time() - t < 1.5:\n    blocks.append(b"x" * (1 << 20))\n    sum(range(20000))\n    if len(blocks) > 120: blocks.clear()\n',
];
// Charts compared point by point with the dump: id -> the keys they plot.
const kCompared = {
  cpu: ['cpu'],
  'proc.memory.rssMB': ['proc.memory.rssMB'],
  memory_percent: ['memory_percent'],
  cpu_percent: ['cpu_percent'],
};

const s = new Session('run_charts');
let server;
let page;
let runDir;
let dirName;
let csv;
let detail;

function assertSamePoints(label, got, want, xOffset = 0) {
  assert.equal(got.length, want.length, `${label}: ${got.length} points plotted, ${want.length} in the dump`);
  for (let i = 0; i < want.length; i++) {
    const [gx, gv] = got[i];
    const [wx, wv] = want[i];
    assert.ok(close(gx, wx + xOffset, { abs: 2e-3, rel: 0 }), `${label}: x[${i}] = ${gx}, dump ${wx + xOffset}`);
    assert.ok(close(gv, wv, { abs: 1e-6, rel: 1e-5 }), `${label}: value[${i}] = ${gv}, dump ${wv}`);
  }
}

describe('run charts', () => {
  before(async () => {
    const logdir = await s.tempDir('logdir');
    runDir = await s.record(logdir, { id: 'chartrun', name: 'chart-run', command: kWorkload });
    dirName = runDir.split('/').pop();
    csv = await s.dumpCsv(runDir);
    server = await s.serve(['--logdir', logdir, '--port', '0']);
    detail = JSON.parse((await rawRequest(server.origin, `/api/runs/${dirName}`)).body);
    await s.launchBrowser();
    page = await s.newPage();
  });

  after(() => s.cleanup());

  it(
    'opens the run and shows its System charts',
    s.guard(async () => {
      assert.ok(csv.rows.length >= 8, `the fixture run has ${csv.rows.length} samples`);
      await page.goto(`${server.origin}/`);
      await page.getByTestId('run-link').first().click();
      await page.waitForURL(`**/#/runs/${dirName}`);
      await page.locator('[data-testid="run-header"][data-state="finished"]').waitFor();
      assert.equal((await page.locator('[data-testid="run-header"] [data-testid="run-name"]').textContent()).trim(), 'chart-run');
      const system = page.getByTestId('system-section');
      await system.waitFor({ state: 'visible' });
      const ids = await page.locator('[data-testid="system-grid"] [data-testid="chart"]').evaluateAll((els) => els.map((e) => e.dataset.chartId));
      for (const id of Object.keys(kCompared)) assert.ok(ids.includes(id), `chart ${id} among ${ids.join(', ')}`);
      // The server's chart list is what the page shows, in its order.
      const systemIds = detail.charts.filter((c) => c.section !== 'logged').map((c) => c.id);
      assert.deepEqual(ids, systemIds);
      for (const id of Object.keys(kCompared)) {
        const c = await waitPlotted(page, id);
        assert.equal(c.kind, 'chart');
        assert.equal(c.xAxis, 'time');
        assert.equal(c.timeMode, 'relative');
        assert.equal(c.range, null);
        const def = detail.charts.find((d) => d.id === id);
        assert.equal(c.title, def.title);
        assert.equal(c.unit, def.unit);
        assert.equal(await page.locator(`[data-chart-id="${id}"] canvas`).count() > 0, true, `chart ${id} drew a canvas`);
      }
      assert.equal((await plotted(page, 'cpu')).unit, '%');
      assert.equal((await plotted(page, 'proc.memory.rssMB')).unit, 'MiB');
      assert.deepEqual(page.pageErrors, []);
    }),
  );

  it(
    'plots the run\'s real data',
    s.guard(async () => {
      for (const [id, keys] of Object.entries(kCompared)) {
        const c = await plotted(page, id);
        // The page asked for about its pixel width: few enough points that nothing is downsampled.
        const apiAnswer = JSON.parse(
          (await rawRequest(server.origin, `/api/chart?runs=${dirName}&chart=${encodeURIComponent(id)}&width=400`)).body,
        );
        assert.equal(apiAnswer.raw, true, `chart ${id} is raw at width 400`);
        for (const key of keys) assertSamePoints(`${id}/${key}`, plottedPoints(c, key), csvPoints(csv, key));
      }
      await s.screenshot(page, 'run_charts.png');
    }),
  );

  it(
    'moves x by the run\'s start in wall-clock mode',
    s.guard(async () => {
      const rel = await plotted(page, 'cpu');
      const relMem = await plotted(page, 'memory_percent');
      // The run's start, as the dump has it (timestamp minus runtime of any sample) and as the API says.
      const start = csv.rows[0]._timestamp - csv.rows[0]._runtime;
      assert.ok(close(start, detail.start, { abs: 2e-3, rel: 0 }), `start ${detail.start} vs dump ${start}`);

      await page.getByTestId('time-wall').click();
      assert.equal(await page.getByTestId('time-wall').getAttribute('aria-pressed'), 'true');
      await page.waitForFunction(() => ['cpu', 'memory_percent'].every((id) => window.__runmonCharts.get(id)?.timeMode === 'wall'));
      const wall = await plotted(page, 'cpu');
      assert.equal(wall.x.length, rel.x.length);
      for (let i = 0; i < rel.x.length; i++) {
        assert.ok(close(wall.x[i] - rel.x[i], detail.start, { abs: 1e-3, rel: 0 }), `x[${i}]: ${wall.x[i]} - ${rel.x[i]} != ${detail.start}`);
      }
      // And so x is the samples' own timestamps.
      const ts = csv.rows.filter((r) => r.cpu !== null).map((r) => [r._timestamp, r.cpu]);
      assertSamePoints('cpu (wall clock)', plottedPoints(wall, 'cpu'), ts);
      const wallMem = await plotted(page, 'memory_percent');
      assert.ok(close(wallMem.x[0] - relMem.x[0], detail.start, { abs: 1e-3, rel: 0 }));
      await s.screenshot(page, 'run_charts-wall.png');

      await page.getByTestId('time-relative').click();
      await page.waitForFunction(() => window.__runmonCharts.get('cpu')?.timeMode === 'relative');
      const back = await plotted(page, 'cpu');
      assert.deepEqual(back.x, rel.x);
      assert.deepEqual(page.pageErrors, []);
    }),
  );

  it(
    'server exits 0 on SIGTERM',
    s.guard(() => s.stopServers()),
  );
});
