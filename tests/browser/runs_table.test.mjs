// The runs table (#/): the fixture runs with their names and states, newest first; sorting by name from
// the header; the filter box; run names holding markup shown as text and never run.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Session } from './harness.mjs';

const kImgPayload = '<img src=x onerror=window.__xss=1>';
const kScriptPayload = '<script>window.__xss=2</script>';

// In the order they are recorded (so the last one is the newest).
const kRuns = [
  { id: 'tblalpha', name: 'alpha-ok', command: ['sh', '-c', 'sleep 0.3'], expectCode: 0, state: 'finished' },
  { id: 'tblbravo', name: 'bravo-fails', command: ['sh', '-c', 'sleep 0.3; exit 3'], expectCode: 3, state: 'failed' },
  { id: 'tblcharl', name: 'charlie-ok', command: ['sh', '-c', 'sleep 0.3'], expectCode: 0, state: 'finished' },
  { id: 'tblxssim', name: kImgPayload, command: ['sh', '-c', 'sleep 0.2'], expectCode: 0, state: 'finished' },
  { id: 'tblxsssc', name: kScriptPayload, command: ['sh', '-c', 'sleep 0.2'], expectCode: 0, state: 'finished' },
];

const s = new Session('runs_table');
let server;
let page;

const rowNames = () => page.locator('[data-testid="run-row"] [data-testid="run-link"]').allTextContents();

async function waitRowNames(expected, timeout = 10000) {
  await page.waitForFunction(
    (want) => {
      const got = [...document.querySelectorAll('[data-testid="run-row"] [data-testid="run-link"]')].map((a) => a.textContent);
      return JSON.stringify(got) === JSON.stringify(want);
    },
    expected,
    { timeout },
  ).catch(async (e) => {
    throw new Error(`runs table rows: expected ${JSON.stringify(expected)}, got ${JSON.stringify(await rowNames())} (${e.message})`);
  });
}

async function assertNoXss() {
  assert.equal(await page.evaluate(() => typeof window.__xss), 'undefined', 'a run name was executed as markup');
  assert.deepEqual(page.dialogs, [], 'no dialog may open');
  assert.equal(await page.locator('img[src="x"]').count(), 0, 'the <img> payload became an element');
  assert.equal(
    await page.evaluate(() => [...document.scripts].filter((sc) => sc.textContent.includes('__xss')).length),
    0,
    'the <script> payload became an element',
  );
}

describe('runs table', () => {
  before(async () => {
    const logdir = await s.tempDir('logdir');
    // One after the other: the start times order the table.
    for (const r of kRuns) r.dir = await s.record(logdir, r);
    server = await s.serve(['--logdir', logdir, '--port', '0']);
    await s.launchBrowser();
    page = await s.newPage();
  });

  after(() => s.cleanup());

  it(
    'lists the runs newest first with their states',
    s.guard(async () => {
      await page.goto(`${server.origin}/`);
      const newestFirst = kRuns.map((r) => r.name).reverse();
      await waitRowNames(newestFirst);
      for (const r of kRuns) {
        const dirName = r.dir.split('/').pop();
        const row = page.locator(`[data-testid="run-row"][data-run-dir="${dirName}"]`);
        assert.equal(await row.count(), 1, `one row for ${r.id}`);
        assert.equal(await row.getAttribute('data-state'), r.state, `state of ${r.id}`);
        assert.equal((await row.getByTestId('state-badge').textContent()).trim(), r.state, `badge of ${r.id}`);
        assert.equal((await row.getByTestId('run-id').textContent()).trim(), r.id);
      }
      assert.equal((await page.getByTestId('runs-range').textContent()).trim(), `1-${kRuns.length} of ${kRuns.length}`);
      await s.screenshot(page, 'runs_table.png');
    }),
  );

  it(
    'sorts by name from the header',
    s.guard(async () => {
      const names = kRuns.map((r) => r.name);
      const asc = [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      await page.getByTestId('sort-name').click();
      await waitRowNames(asc);
      assert.equal(await page.locator('th:has([data-testid="sort-name"])').getAttribute('aria-sort'), 'ascending');
      assert.match(page.url(), /sort=name/);
      await page.getByTestId('sort-name').click();
      await waitRowNames([...asc].reverse());
      assert.equal(await page.locator('th:has([data-testid="sort-name"])').getAttribute('aria-sort'), 'descending');
      // Back to the default: newest first.
      await page.getByTestId('sort-start').click();
      await waitRowNames(names.slice().reverse());
    }),
  );

  it(
    'narrows the table with the filter box',
    s.guard(async () => {
      const filter = page.getByTestId('runs-filter');
      await filter.fill('bravo');
      await waitRowNames(['bravo-fails']);
      assert.equal((await page.getByTestId('runs-range').textContent()).trim(), '1-1 of 1');
      await filter.fill('no-such-run-anywhere');
      await page.getByTestId('runs-empty').waitFor();
      assert.equal((await page.getByTestId('runs-empty').textContent()).trim(), 'No runs match the filter.');
      // The payload as a filter is plain text too.
      await filter.fill('onerror');
      await waitRowNames([kImgPayload]);
      await filter.fill('');
      await waitRowNames(kRuns.map((r) => r.name).reverse());
    }),
  );

  it(
    'shows names holding markup as text and never runs them',
    s.guard(async () => {
      // The table: the exact payloads as text (checked by waitRowNames above), nothing executed.
      const names = await rowNames();
      assert.ok(names.includes(kImgPayload) && names.includes(kScriptPayload), `payloads listed as text: ${JSON.stringify(names)}`);
      await assertNoXss();
      // Each run's workspace: the header and the document title hold the payload as text.
      for (const r of kRuns.filter((x) => x.id.startsWith('tblxss'))) {
        await page.locator(`[data-testid="run-row"][data-run-dir="${r.dir.split('/').pop()}"] [data-testid="run-link"]`).click();
        const title = page.locator('[data-testid="run-header"] [data-testid="run-name"]');
        await title.waitFor();
        await page.waitForFunction((want) => document.querySelector('[data-testid="run-header"] [data-testid="run-name"]')?.textContent === want, r.name);
        assert.equal(await page.title(), `runmon: ${r.name}`);
        await page.waitForFunction(() => window.__runmonCharts.size > 0, null, { timeout: 15000 });
        await assertNoXss();
        if (r.id === 'tblxssim') await s.screenshot(page, 'runs_table-xss-workspace.png');
        await page.getByTestId('back-to-runs').click();
        await waitRowNames(kRuns.map((x) => x.name).reverse());
      }
      await assertNoXss();
      assert.deepEqual(page.pageErrors, [], 'uncaught errors in the page');
    }),
  );

  it(
    'server exits 0 on SIGTERM',
    s.guard(() => s.stopServers()),
  );
});
