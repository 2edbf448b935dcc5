// Live updates: a run recorded into the served logdir while the page is open appears in the runs table,
// and its workspace's charts grow without a reload until the state badge turns "finished".

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { csvPoints, plotted, Session, waitPlotted } from './harness.mjs';

const kSleepSeconds = 8;

const s = new Session('live');
let server;
let page;
let logdir;
let run; // {child, done}
let dirName;

const headerState = () => page.locator('[data-testid="run-header"]').getAttribute('data-state');

describe('live updates', () => {
  before(async () => {
    logdir = await s.tempDir('logdir');
    server = await s.serve(['--logdir', logdir, '--port', '0']);
    await s.launchBrowser();
    page = await s.newPage();
  });

  after(() => s.cleanup());

  it(
    'lists a new run without a reload',
    s.guard(async () => {
      await page.goto(`${server.origin}/`);
      await page.getByTestId('runs-empty').waitFor();
      // A marker that a reload would wipe.
      await page.evaluate(() => {
        window.__noReload = true;
      });
      run = s.recordInBackground(logdir, {
        id: 'liverun1',
        name: 'live-run',
        interval: '0.2',
        command: ['python3', '-c', `import time; time.sleep(${kSleepSeconds})`],
      });
      const row = page.locator('[data-testid="run-row"]');
      await row.first().waitFor({ timeout: 10000 });
      assert.equal(await row.count(), 1);
      // The run's name comes with its first records: until they are read the row may show its id.
      await row.getByTestId('run-link').filter({ hasText: /^\s*live-run\s*$/ }).waitFor({ timeout: 10000 });
      assert.equal((await row.getByTestId('run-link').textContent()).trim(), 'live-run');
      await page.locator('[data-testid="run-row"][data-state="running"]').waitFor({ timeout: 10000 });
      assert.equal(await page.evaluate(() => window.__noReload), true, 'the page was reloaded');
    }),
  );

  it(
    'grows the open run\'s chart without a reload',
    s.guard(async () => {
      await page.getByTestId('run-link').click();
      await page.locator('[data-testid="run-header"][data-state="running"]').waitFor();
      dirName = await page.locator('[data-testid="run-header"]').getAttribute('data-run-dir');
      assert.equal((await page.locator('[data-testid="run-header"] [data-testid="state-badge"]').textContent()).trim(), 'running');
      await page.locator('[data-testid="live-status"][data-connected="true"]').waitFor();
      const first = await waitPlotted(page, 'cpu');
      // More points arrive while the run goes on (one every 0.2 s; charts refetch at most once a second).
      const grown = await page.waitForFunction(
        ([n, u]) => {
          const c = window.__runmonCharts.get('cpu');
          return c && c.x.length >= n + 5 && c.updates > u ? { n: c.x.length, u: c.updates } : false;
        },
        [first.x.length, first.updates],
        { timeout: 10000 },
      );
      const g = await grown.jsonValue();
      assert.ok(g.n > first.x.length && g.u > first.updates, `cpu chart: ${first.x.length} -> ${g.n} points, ${first.updates} -> ${g.u} updates`);
      assert.equal(await headerState(), 'running', 'still running while it grew (else the check proves nothing)');
      assert.equal(await page.evaluate(() => window.__noReload), true, 'the page was reloaded');
      await s.screenshot(page, 'live-running.png');
    }),
  );

  it(
    'turns the state badge "finished" when the run ends, even with a slow answer',
    s.guard(async () => {
      // From now on the run's overview (GET /api/runs/<dir>) is answered only once the run has ended, as a
      // busy server or a slow link might: the page must still end up with the run's final state and data.
      // Charts (GET /api/chart) and the event stream are not touched.
      let ended = false;
      const runEnded = run.done.then(() => new Promise((r) => setTimeout(r, 300))).then(() => (ended = true));
      await page.route(
        (url) => url.pathname === `/api/runs/${dirName}`,
        async (route) => {
          if (!ended) await runEnded;
          await route.continue().catch(() => {});
        },
      );
      await page.locator('[data-testid="run-header"][data-state="finished"]').waitFor({ timeout: kSleepSeconds * 1000 + 15000 });
      assert.equal((await page.locator('[data-testid="run-header"] [data-testid="state-badge"]').textContent()).trim(), 'finished');
      const { code } = await run.done;
      assert.equal(code, 0, 'runmon run exit status');
      assert.equal(await page.evaluate(() => window.__noReload), true, 'the page was reloaded');
    }),
  );

  // Guards against a workspace that stops refreshing its charts: live events that arrive while the run's
  // overview is being refetched must still refresh the charts, or the run's last samples never show.
  it(
    'shows every sample of the run once it has ended',
    s.guard(async () => {
      const csv = await s.dumpCsv(s.runDir(logdir, 'liverun1'));
      const want = csvPoints(csv, 'cpu').length;
      try {
        await page.waitForFunction((n) => window.__runmonCharts.get('cpu')?.x.length === n, want, { timeout: 8000 });
      } catch (e) {
        const stale = await plotted(page, 'cpu');
        await s.screenshot(page, 'live-FAILED-stale-chart.png');
        // What a reload shows, for the report.
        await page.unrouteAll?.({ behavior: 'ignoreErrors' });
        await page.reload();
        const fresh = await waitPlotted(page, 'cpu', { minPoints: want }).catch(() => null);
        throw new Error(
          `the cpu chart stays at ${stale.x.length} points (${stale.updates} updates) after the run ended; ` +
            `the dump has ${want}, a reload shows ${fresh ? fresh.x.length : 'no chart'} (${e.message})`,
        );
      }
      await s.screenshot(page, 'live-finished.png');
      assert.deepEqual(page.pageErrors, []);
    }),
  );

  it(
    'server exits 0 on SIGTERM',
    s.guard(() => s.stopServers()),
  );
});
