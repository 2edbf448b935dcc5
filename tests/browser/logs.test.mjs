// The Logs tab of a run: the console output `runmon run` recorded, in order, stderr marked, SGR colours as
// styled spans, and hostile output (escape sequences that would retitle, clear or move a terminal, invalid
// UTF-8, control characters, a bidirectional override, a 1 MB line, markup) shown as inert text; the search
// box and the stream select narrowing the lines on the server; and a live run's lines arriving while the
// view follows the end, scrolling up stopping that, Follow resuming it, Start going to the oldest lines; in a
// workspace of two runs, the one picked.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pollUntil, rawRequest, Session } from './harness.mjs';

// Printed by the hostile run, line by line (stdout unless said).
const kHostileProgram = String.raw`
import sys, time
out = sys.stdout
print("plain line one")
print("\x1b[31mred\x1b[0m \x1b[1;32mbold green\x1b[0m \x1b[38;5;208morange\x1b[39m \x1b[94mbright\x1b[0m")
# The two streams are read apart: time between them keeps their lines in this order.
out.flush()
time.sleep(0.3)
print("to stderr", file=sys.stderr)
sys.stderr.flush()
time.sleep(0.3)
print("\x1b]0;evil title\x07after-osc \x1b[2Jafter-clear \x1b[5;10Hafter-move \x1b[Kend")
print("<script>window.__pwned=1</script>")
print("<img src=x onerror=window.__pwned=2>")
out.flush()
out.buffer.write(b"bad bytes \xff\xfe end\n")
out.buffer.flush()
print("bell\x07 backspace\x08 del\x7f rlo\u202eevil")
# A 1 MB line, written as a command writes a long record: in pieces, each recorded as it comes.
for _ in range(16):
    out.write("x" * 65536)
    out.flush()
    time.sleep(0.05)
print("\nlast line")
`;

// What each line shows, in order: escape sequences dropped, control characters as their pictures, what
// could reorder or hide text as U+FFFD.
const kShown = [
  'plain line one',
  'red bold green orange bright',
  'to stderr',
  'after-osc after-clear after-move end',
  '<script>window.__pwned=1</script>',
  '<img src=x onerror=window.__pwned=2>',
  'bad bytes \ufffd\ufffd end',
  'bell\u2407 backspace\u2408 del\u2421 rlo\ufffdevil',
  'x × 16384',
  'last line',
];

// A first screenful at once, then a line every 0.2 s.
const kBurst = 80;
const kTrickle = 30;
const kLiveProgram = `
import sys, time
for i in range(${kBurst}):
    print(f"burst {i}")
sys.stdout.flush()
for i in range(${kTrickle}):
    time.sleep(0.2)
    print(f"tick {i}", flush=True)
`;

const s = new Session('logs');
let server;
let page;
let logdir;
let hostileDir;

// The rows' texts, a run of x shown as its length (the 1 MB line is sent cut to 16 KiB).
const rowTexts = async () =>
  (await page.locator('[data-testid="log-line"] .log-text').allTextContents()).map((t) => (/^x+$/.test(t) ? `x × ${t.length}` : t));
const rowNumbers = () =>
  page.locator('[data-testid="log-line"]').evaluateAll((rows) => rows.map((r) => Number(r.dataset.n)));
const following = () => page.getByTestId('logs').getAttribute('data-following');

async function waitRows(count, what) {
  await page.waitForFunction(
    (n) => document.querySelectorAll('[data-testid="log-line"]').length === n,
    count,
    { timeout: 10000 },
  ).catch(async (e) => {
    throw new Error(`${what}: expected ${count} rows, got ${JSON.stringify(await rowTexts())} (${e.message})`);
  });
}

async function assertInert() {
  assert.equal(await page.evaluate(() => typeof window.__pwned), 'undefined', 'console output ran as markup');
  assert.deepEqual(page.dialogs, [], 'no dialog may open');
  assert.equal(await page.locator('img[src="x"]').count(), 0, 'the <img> text became an element');
  assert.equal(
    await page.evaluate(() => [...document.scripts].filter((sc) => sc.textContent.includes('__pwned')).length),
    0,
    'the <script> text became an element',
  );
  assert.notEqual(await page.title(), 'evil title');
}

describe('logs tab', () => {
  before(async () => {
    logdir = await s.tempDir('logdir');
    hostileDir = (await s.record(logdir, { id: 'logshostile', name: 'hostile-output', command: ['python3', '-c', kHostileProgram] }))
      .split('/')
      .pop();
    server = await s.serve(['--logdir', logdir, '--port', '0']);
    await s.launchBrowser();
    page = await s.newPage();
  });

  after(() => s.cleanup());

  it(
    'shows the lines in order with stderr marked and colours as spans',
    s.guard(async () => {
      await page.goto(`${server.origin}/#/runs/${encodeURIComponent(hostileDir)}`);
      await page.getByTestId('run-name').filter({ hasText: 'hostile-output' }).waitFor();
      assert.match(await page.getByTestId('tab-logs').textContent(), /Logs\s*\(10\)/);
      await page.getByTestId('tab-logs').click();
      assert.match(page.url(), /\?tab=logs$/);
      await waitRows(kShown.length, 'the hostile run');
      assert.deepEqual(await rowNumbers(), kShown.map((_, i) => i));
      assert.deepEqual(await rowTexts(), kShown);
      assert.equal(await page.getByTestId('charts-pane').isHidden(), true, 'the charts are behind their tab');
      // Following from the start: the view is at the end, below the 1 MB line's wrapped rows.
      await page.waitForFunction(() => {
        const el = document.querySelector('[data-testid="logs-scroll"]');
        return el.scrollHeight > el.clientHeight && el.scrollHeight - el.scrollTop - el.clientHeight < 4;
      });
      assert.equal(await following(), 'true');

      const streams = await page.locator('[data-testid="log-line"]').evaluateAll((rows) =>
        rows.map((r) => [r.dataset.stream, r.classList.contains('stderr')]),
      );
      assert.deepEqual(
        streams,
        kShown.map((_, i) => (i === 2 ? ['stderr', true] : ['stdout', false])),
      );
      const times = await page.locator('[data-testid="log-line"] .log-time').allTextContents();
      for (const t of times) assert.match(t, /^\d\d:\d\d:\d\d$/);

      const colours = await page.locator('[data-testid="log-line"][data-n="1"] .log-text span').evaluateAll((spans) =>
        spans.map((sp) => ({ text: sp.textContent, cls: sp.className, color: getComputedStyle(sp).color, weight: getComputedStyle(sp).fontWeight })),
      );
      assert.deepEqual(
        colours.map((c) => [c.text, c.cls]),
        [
          ['red', 'ansi-fg-1'],
          ['bold green', 'ansi-bold ansi-fg-2'],
          ['orange', ''],
          ['bright', 'ansi-fg-12'],
        ],
      );
      assert.equal(colours[2].color, 'rgb(255, 135, 0)', 'colour 208 of the 256');
      assert.equal(Number(colours[1].weight), 700);
      assert.notEqual(colours[0].color, colours[3].color);
      const stderrColour = await page.locator('[data-testid="log-line"][data-n="2"]').evaluate((r) => getComputedStyle(r).borderLeftColor);
      const stdoutColour = await page.locator('[data-testid="log-line"][data-n="0"]').evaluate((r) => getComputedStyle(r).borderLeftColor);
      assert.notEqual(stderrColour, stdoutColour, 'stderr lines are marked');
      await s.screenshot(page, 'logs-hostile.png');
    }),
  );

  it(
    'shows hostile output as text that never runs',
    s.guard(async () => {
      await assertInert();
      // Nothing of an escape sequence reaches the page, and no control character but as its picture.
      const raw = await page.locator('[data-testid="log-rows"]').textContent();
      assert.doesNotMatch(raw, /[\x00-\x08\x0b-\x1f\x7f\u202e]/);
      // The 1 MB line: its first 16 KiB, marked as cut.
      const wide = page.locator('[data-testid="log-line"][data-n="8"]');
      assert.equal(await wide.getByTestId('log-cut').count(), 1);
      assert.equal(await page.getByTestId('log-cut').count(), 1);
      // A reload comes back to the Logs tab.
      await page.reload();
      await waitRows(kShown.length, 'after a reload');
      await assertInert();
    }),
  );

  it(
    'narrows the lines with the search box and the stream select',
    s.guard(async () => {
      const search = page.getByTestId('logs-search');
      await search.fill('PWNED');
      await waitRows(2, 'searching "PWNED"');
      assert.deepEqual(await rowNumbers(), [4, 5]);
      await assertInert();
      // Matched against the text as shown: the sequences' bytes are not text.
      await search.fill('after-clear after-move');
      await waitRows(1, 'searching across dropped sequences');
      await search.fill('31m');
      await page.getByTestId('logs-empty').filter({ hasText: 'No lines match' }).waitFor();
      await waitRows(0, 'searching a sequence');
      await search.fill('');
      await waitRows(kShown.length, 'the search cleared');
      await page.getByTestId('logs-stream').selectOption('stderr');
      await waitRows(1, 'stderr only');
      assert.deepEqual(await rowTexts(), ['to stderr']);
      await page.getByTestId('logs-stream').selectOption('all');
      await waitRows(kShown.length, 'both streams');
    }),
  );

  it(
    'follows a live run, stops when scrolled up and resumes with Follow',
    s.guard(async () => {
      const live = s.recordInBackground(logdir, { id: 'logslive1', name: 'live-output', command: ['python3', '-c', kLiveProgram] });
      const liveDir = await pollUntil(() => s.runDir(logdir, 'logslive1').split('/').pop(), { what: 'the live run directory' });
      // Opened once the server lists it (it rescans the logdir every 2 s).
      await pollUntil(async () => (await rawRequest(server.origin, `/api/runs/${liveDir}`)).status === 200, {
        what: 'the server to list the live run',
      });
      await page.goto(`${server.origin}/#/runs/${encodeURIComponent(liveDir)}?tab=logs`);
      await page.locator('[data-testid="run-header"][data-state="running"]').waitFor();
      await page.waitForFunction((n) => document.querySelectorAll('[data-testid="log-line"]').length >= n, kBurst + 2);
      assert.equal(await following(), 'true');
      const first = (await rowTexts()).length;
      // More lines come without a reload while the run goes on, and the view stays at the end.
      await page.waitForFunction((n) => document.querySelectorAll('[data-testid="log-line"]').length >= n + 3, first);
      assert.equal(await page.locator('[data-testid="run-header"]').getAttribute('data-state'), 'running', 'it grew while running');
      const atEnd = await page.getByTestId('logs-scroll').evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight);
      assert.ok(atEnd < 4, `following keeps the view at the end (${atEnd}px from it)`);

      // Scrolling up stops following: the rows stay as they were while the run goes on.
      await page.getByTestId('logs-scroll').evaluate((el) => (el.scrollTop = 0));
      await page.locator('[data-testid="logs"][data-following="false"]').waitFor();
      const held = (await rowTexts()).length;
      await page.getByTestId('logs-jump').waitFor({ timeout: 10000 });
      assert.equal((await rowTexts()).length, held, 'no lines are added while not following');

      // Follow again: every line so far, then the rest as it comes, until the run ends.
      await page.getByTestId('logs-follow').click();
      await page.locator('[data-testid="logs"][data-following="true"]').waitFor();
      const { code } = await live.done;
      assert.equal(code, 0, 'runmon run exit status');
      await waitRows(kBurst + kTrickle, 'the whole live run');
      const want = [...Array.from({ length: kBurst }, (_, i) => `burst ${i}`), ...Array.from({ length: kTrickle }, (_, i) => `tick ${i}`)];
      assert.deepEqual(await rowTexts(), want);
      assert.deepEqual(await rowNumbers(), want.map((_, i) => i));
      await s.screenshot(page, 'logs-live.png');
      // Start: the oldest lines, at the top, not following.
      await page.getByTestId('logs-to-start').click();
      await page.locator('[data-testid="logs"][data-following="false"][data-busy="false"]').waitFor();
      assert.equal(await page.getByTestId('logs-scroll').evaluate((el) => el.scrollTop), 0);
      assert.equal((await rowNumbers())[0], 0);
      assert.equal(await page.getByTestId('logs-start').isVisible(), true);

      // Two runs in one workspace: the Logs tab shows one, picked by its select (and kept in the URL).
      await page.goto(`${server.origin}/#/runs/${encodeURIComponent(hostileDir)},${encodeURIComponent(liveDir)}?tab=logs`);
      await waitRows(kShown.length, 'the first run of two');
      await page.getByTestId('logs-run').selectOption(liveDir);
      await waitRows(kBurst + kTrickle, 'the second run of two');
      assert.equal((await rowTexts())[0], 'burst 0');
      assert.match(page.url(), new RegExp(`\\?tab=logs&run=${liveDir}$`));
      assert.deepEqual(page.pageErrors, []);
    }),
  );

  it(
    'server exits 0 on SIGTERM',
    s.guard(() => s.stopServers()),
  );
});
