// User panels: one of a picked key, one of a regular expression; both plot data, survive a reload and are
// stored in <logdir>/.runmon-dashboard.json; moving and removing one is kept too.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { csvPoints, plottedPoints, pollUntil, rawRequest, Session, waitPlotted } from './harness.mjs';

const s = new Session('panels');
let server;
let page;
let logdir;
let dirName;
let csv;
let layoutFile;
let keyPanel; // id of the panel of a picked key
let regexPanel; // id of the panel of a regular expression

const panelIds = () => page.locator('[data-testid="panels-grid"] [data-testid="panel"]').evaluateAll((els) => els.map((e) => e.dataset.panelId));

async function waitPanelIds(expected, timeout = 10000) {
  await page
    .waitForFunction(
      (want) => {
        const got = [...document.querySelectorAll('[data-testid="panels-grid"] [data-testid="panel"]')].map((e) => e.dataset.panelId);
        return JSON.stringify(got) === JSON.stringify(want);
      },
      expected,
      { timeout },
    )
    .catch(async (e) => {
      throw new Error(`panels: expected ${JSON.stringify(expected)}, got ${JSON.stringify(await panelIds())} (${e.message})`);
    });
}

function readLayout() {
  try {
    return JSON.parse(fs.readFileSync(layoutFile, 'utf8'));
  } catch {
    return null;
  }
}

// The stored layout once its panel ids are `ids` (saves are asynchronous).
async function waitStoredIds(ids) {
  return pollUntil(
    () => {
      const l = readLayout();
      return l && JSON.stringify(l.panels.map((p) => p.id)) === JSON.stringify(ids) ? l : null;
    },
    { timeoutMs: 10000, what: `${layoutFile} to hold panels ${JSON.stringify(ids)} (now: ${JSON.stringify(readLayout())})` },
  );
}

async function openWorkspace() {
  await page.goto(`${server.origin}/#/runs/${encodeURIComponent(dirName)}`);
  await page.locator('[data-testid="run-header"][data-state="finished"]').waitFor();
  await page.waitForFunction(() => !document.querySelector('[data-testid="add-panel"]')?.disabled);
}

async function addPanel(fill) {
  const before = await panelIds();
  await page.getByTestId('add-panel').click();
  const form = page.getByTestId('add-panel-form');
  await form.waitFor();
  await fill(form);
  await page.getByTestId('panel-add-submit').click();
  await form.waitFor({ state: 'detached' });
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid="panels-grid"] [data-testid="panel"]').length === n, before.length + 1);
  const ids = await panelIds();
  const fresh = ids.filter((id) => !before.includes(id));
  assert.equal(fresh.length, 1, `one new panel: ${JSON.stringify(ids)}`);
  assert.equal(ids[ids.length - 1], fresh[0], 'a new panel goes last');
  return fresh[0];
}

async function assertKeyPanelPlots() {
  const c = await waitPlotted(page, keyPanel);
  assert.equal(c.kind, 'panel');
  assert.equal(c.title, 'Host CPU panel');
  assert.deepEqual(c.series.map((x) => x.key), ['cpu_percent']);
  assert.equal(c.unit, '%');
  assert.equal(plottedPoints(c, 'cpu_percent').length, csvPoints(csv, 'cpu_percent').length);
}

async function assertRegexPanelPlots() {
  const c = await waitPlotted(page, regexPanel);
  assert.equal(c.kind, 'panel');
  const keys = c.series.map((x) => x.key);
  assert.ok(keys.length >= 2, `the regex panel plots several keys: ${keys.join(', ')}`);
  for (const k of keys) assert.match(k, /memory/i);
  for (const k of ['memory_percent', 'proc.memory.rssMB']) assert.ok(keys.includes(k), `${k} among ${keys.join(', ')}`);
  assert.ok(plottedPoints(c, 'memory_percent').length > 0);
}

describe('panels', () => {
  before(async () => {
    logdir = await s.tempDir('logdir');
    layoutFile = path.join(logdir, '.runmon-dashboard.json');
    const runDir = await s.record(logdir, { id: 'panelrun', name: 'panel-run', command: ['sh', '-c', 'sleep 1'] });
    dirName = runDir.split('/').pop();
    csv = await s.dumpCsv(runDir);
    server = await s.serve(['--logdir', logdir, '--port', '0']);
    await s.launchBrowser();
    page = await s.newPage();
  });

  after(() => s.cleanup());

  it(
    'adds a panel of a picked key and one of a regular expression',
    s.guard(async () => {
      await openWorkspace();
      assert.equal(await page.getByTestId('panels-section').isHidden(), true, 'no panels yet: the section is hidden');
      assert.equal(readLayout(), null, 'no layout file yet');

      keyPanel = await addPanel(async (form) => {
        await form.getByTestId('panel-title-input').fill('Host CPU panel');
        await form.getByTestId('panel-key-search').fill('cpu_percent');
        const option = form.locator('[data-testid="panel-key-option"][data-key="cpu_percent"]');
        await option.locator('input[type="checkbox"]').check();
        assert.equal((await form.getByTestId('panel-key-count').textContent()).trim(), '1 selected');
      });
      await assertKeyPanelPlots();

      regexPanel = await addPanel(async (form) => {
        await form.getByTestId('panel-match-input').fill('memory');
        await page.waitForFunction(() => /Matches [1-9]\d* of the known keys/.test(document.querySelector('[data-testid="panel-match-preview"]')?.textContent ?? ''));
      });
      await assertRegexPanelPlots();
      await waitPanelIds([keyPanel, regexPanel]);
      await s.screenshot(page, 'panels.png');
    }),
  );

  it(
    'keeps both panels across a reload, stored in the logdir',
    s.guard(async () => {
      const stored = await waitStoredIds([keyPanel, regexPanel]);
      assert.equal(stored.version, 1);
      assert.deepEqual(stored.panels[0], { id: keyPanel, title: 'Host CPU panel', keys: ['cpu_percent'], match: '' });
      assert.deepEqual(stored.panels[1], { id: regexPanel, title: '', keys: [], match: 'memory' });
      const api = JSON.parse((await rawRequest(server.origin, '/api/layout')).body);
      assert.deepEqual(api, stored, 'GET /api/layout answers the stored layout');

      await page.reload();
      await page.locator('[data-testid="run-header"][data-state="finished"]').waitFor();
      await waitPanelIds([keyPanel, regexPanel]);
      await assertKeyPanelPlots();
      await assertRegexPanelPlots();
    }),
  );

  it(
    'keeps a move and a removal across a reload',
    s.guard(async () => {
      // Move the regex panel up: it becomes first.
      const second = page.locator(`[data-testid="panel"][data-panel-id="${regexPanel}"]`);
      await second.getByTestId('panel-up').click();
      await waitPanelIds([regexPanel, keyPanel]);
      assert.equal(await second.getByTestId('panel-up').isDisabled(), true, 'the first panel cannot move up');
      await waitStoredIds([regexPanel, keyPanel]);

      // Remove the key panel.
      await page.locator(`[data-testid="panel"][data-panel-id="${keyPanel}"]`).getByTestId('panel-remove').click();
      await waitPanelIds([regexPanel]);
      assert.equal(await page.evaluate((id) => window.__runmonCharts.has(id), keyPanel), false, 'the removed panel left the chart map');
      const stored = await waitStoredIds([regexPanel]);
      assert.deepEqual(stored.panels, [{ id: regexPanel, title: '', keys: [], match: 'memory' }]);

      await page.reload();
      await page.locator('[data-testid="run-header"][data-state="finished"]').waitFor();
      await waitPanelIds([regexPanel]);
      await assertRegexPanelPlots();
      assert.equal(await page.locator(`[data-panel-id="${keyPanel}"]`).count(), 0);
      // The layout belongs to the logdir, not to the run: another browser (a fresh context) sees it too.
      const other = await s.newPage();
      await other.goto(`${server.origin}/#/runs/${encodeURIComponent(dirName)}`);
      await other.waitForFunction(
        (id) => [...document.querySelectorAll('[data-testid="panel"]')].map((e) => e.dataset.panelId).join() === id,
        regexPanel,
      );
      s.current = page;
      await s.screenshot(page, 'panels-after-reload.png');
      assert.deepEqual(page.pageErrors, []);
      assert.deepEqual(other.pageErrors, []);
    }),
  );

  it(
    'server exits 0 on SIGTERM',
    s.guard(() => s.stopServers()),
  );
});
