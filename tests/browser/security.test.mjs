// The server's defences as a browser and a client see them: path traversal, the token (cookie from
// ?token=, 401 without it), refusing a public address without a token, and the Host check that stops DNS
// rebinding.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { rawRequest, Session } from './harness.mjs';

const kToken = 'Rm9vYmFyQmF6UXV4MTIzNDU2Nzg5MGFi'; // 32 characters
const kWrongToken = 'Rm9vYmFyQmF6UXV4MTIzNDU2Nzg5MGFc'; // the same length, one character off
const kPasswd = /root:[^:\n]*:0:0:/;

const s = new Session('security');
let logdir;
let dirName;
let plain; // runmon serve without a token
let guarded; // runmon serve --token

describe('security', () => {
  before(async () => {
    logdir = await s.tempDir('logdir');
    dirName = (await s.record(logdir, { id: 'secrun01', name: 'secure-run', command: ['sh', '-c', 'sleep 0.2'] })).split('/').pop();
    plain = await s.serve(['--logdir', logdir, '--port', '0'], 'runmon serve (no token)');
    guarded = await s.serve(['--logdir', logdir, '--host', '127.0.0.1', '--port', '0', '--token', kToken], 'runmon serve --token');
    await s.launchBrowser();
  });

  after(() => s.cleanup());

  it(
    'never serves files outside its own (path traversal)',
    s.guard(async () => {
      // Sent byte for byte: fetch() would resolve the dot segments (also %2e%2e) before sending.
      const probes = [
        '/../../etc/passwd',
        '/%2e%2e/%2e%2e/etc/passwd',
        '/assets/..%2f..%2fetc%2fpasswd',
        '/api/runs/..%2F..%2Fetc',
        '/assets/../../../../etc/passwd',
        '/assets/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
        '/..%2f..%2f..%2f..%2fetc%2fpasswd',
        '/%2e%2e%2f%2e%2e%2fetc%2fpasswd',
        '/..%5c..%5cetc%5cpasswd',
        '/api/runs/..%2F..%2F..%2F..%2Fetc%2Fpasswd',
        '/api/runs/..',
        `/api/runs/${dirName}%2Ffiles`,
        `/api/chart?runs=..%2F..%2Fetc&chart=cpu`,
        `/api/chart.csv?runs=..%2F..%2F..%2Fetc%2Fpasswd&keys=cpu`,
      ];
      for (const p of probes) {
        const r = await rawRequest(plain.origin, p);
        assert.ok(r.status === 404 || r.status === 400, `${p}: status ${r.status}, want 404 or 400`);
        assert.doesNotMatch(r.body, kPasswd, `${p}: the answer holds /etc/passwd`);
        assert.ok(!r.body.includes('<!doctype html') && !r.body.includes('<!DOCTYPE html'), `${p}: answered with the dashboard's page`);
      }
      // fetch (which normalizes the path to /etc/passwd first) gets no file either.
      for (const p of ['/../../etc/passwd', '/%2e%2e/%2e%2e/etc/passwd']) {
        const r = await fetch(`${plain.origin}${p}`);
        const body = await r.text();
        assert.ok(r.status === 404 || r.status === 400, `fetch ${p}: status ${r.status}`);
        assert.doesNotMatch(body, kPasswd);
      }
      // The real thing still works.
      assert.equal((await rawRequest(plain.origin, '/')).status, 200);
      assert.equal((await rawRequest(plain.origin, `/api/runs/${dirName}`)).status, 200);
    }),
  );

  it(
    'asks for the token and accepts it once from ?token=',
    s.guard(async () => {
      assert.equal(guarded.token, kToken, 'the printed URL carries the token');
      // Without the token: 401 everywhere, the page included.
      const noToken = await rawRequest(guarded.origin, '/api/runs');
      assert.equal(noToken.status, 401);
      assert.doesNotMatch(noToken.body, /secure-run/);
      assert.equal((await fetch(`${guarded.origin}/api/runs`)).status, 401);
      assert.equal((await rawRequest(guarded.origin, '/')).status, 401);
      // A wrong token: as a bearer, as the cookie, and as ?token= (no cookie set then).
      assert.equal((await rawRequest(guarded.origin, '/api/runs', { headers: { Authorization: `Bearer ${kWrongToken}` } })).status, 401);
      assert.equal((await rawRequest(guarded.origin, '/api/runs', { headers: { Cookie: `runmon_token=${kWrongToken}` } })).status, 401);
      const wrongLink = await rawRequest(guarded.origin, `/?token=${kWrongToken}`);
      assert.equal(wrongLink.status, 401);
      assert.equal(wrongLink.headers['set-cookie'], undefined);
      // The right one.
      const bearer = await fetch(`${guarded.origin}/api/runs`, { headers: { Authorization: `Bearer ${kToken}` } });
      assert.equal(bearer.status, 200);
      assert.equal((await bearer.json()).total, 1);
      const link = await rawRequest(guarded.origin, `/?token=${kToken}`);
      assert.equal(link.status, 303);
      assert.equal(link.headers.location, '/');
      const cookie = String(link.headers['set-cookie']);
      assert.match(cookie, new RegExp(`runmon_token=${kToken}`));
      assert.match(cookie, /HttpOnly/i);
      assert.match(cookie, /SameSite=Strict/i);

      // The browser without the token: the server refuses the page itself and says what to do.
      const page = await s.newPage();
      const resp = await page.goto(`${guarded.origin}/`);
      assert.equal(resp.status(), 401);
      assert.match(await page.locator('body').innerText(), /token is required/);
      assert.equal(await page.locator('[data-testid="runs-table"]').count(), 0, 'no dashboard without the token');
      await s.screenshot(page, 'security-no-token.png');
      // A wrong ?token= link: refused, no cookie.
      assert.equal((await page.goto(`${guarded.origin}/?token=${kWrongToken}`)).status(), 401);
      assert.deepEqual(await page.context().cookies(), []);

      // The printed URL: a redirect that sets the cookie, then the runs table loads.
      await page.goto(guarded.url);
      assert.ok(page.url().startsWith(`${guarded.origin}/`), page.url());
      assert.doesNotMatch(page.url(), /token/, 'the token left the address bar');
      await page.locator('[data-testid="run-row"]').first().waitFor();
      assert.equal((await page.locator('[data-testid="run-row"] [data-testid="run-link"]').textContent()).trim(), 'secure-run');
      const cookies = await page.context().cookies();
      const c = cookies.find((x) => x.name === 'runmon_token');
      assert.ok(c, `cookie set: ${JSON.stringify(cookies)}`);
      assert.equal(c.value, kToken);
      assert.equal(c.httpOnly, true);
      assert.equal(c.sameSite, 'Strict');
      assert.equal(c.path, '/');
      assert.equal(await page.evaluate(() => document.cookie), '', 'the token cookie is not readable by scripts');
      await s.screenshot(page, 'security-token.png');
      // A reload keeps working from the cookie alone.
      await page.reload();
      await page.locator('[data-testid="run-row"]').first().waitFor();

      // The page is open and the token goes away (a restarted server, a cleared cookie): the dashboard
      // says so in its banner.
      await page.context().clearCookies();
      await page.getByTestId('runs-filter').fill('secure');
      await page.getByTestId('auth-error').waitFor({ timeout: 10000 });
      assert.match(await page.getByTestId('auth-error').innerText(), /needs a token/);
      await s.screenshot(page, 'security-auth-error.png');
      assert.deepEqual(page.pageErrors, []);
    }),
  );

  it(
    'refuses a public address without a token (exit 2)',
    s.guard(async () => {
      const r = await s.exec(['serve', '--logdir', logdir, '--host', '0.0.0.0', '--port', '0'], { timeoutMs: 10000 });
      assert.equal(r.code, 2, `exit status (stdout ${JSON.stringify(r.stdout)}, stderr ${JSON.stringify(r.stderr)})`);
      assert.match(r.stderr, /token/i, 'the message names the missing --token');
      assert.doesNotMatch(r.stdout, /runmon serve: http/, 'it must not have served');
      // A token too short to be a secret is refused too.
      const short = await s.exec(['serve', '--logdir', logdir, '--host', '0.0.0.0', '--port', '0', '--token', 'short'], { timeoutMs: 10000 });
      assert.equal(short.code, 2, `exit status with a short token (stderr ${JSON.stringify(short.stderr)})`);
      assert.match(short.stderr, /16/);
    }),
  );

  it(
    'refuses requests addressed to another host name without a token (DNS rebinding)',
    s.guard(async () => {
      const port = plain.port;
      for (const host of ['evil.example', `evil.example:${port}`, `127.0.0.1.nip.io:${port}`, `localhost.evil.example:${port}`]) {
        for (const p of ['/', '/api/runs', `/api/runs/${dirName}`]) {
          const r = await rawRequest(plain.origin, p, { headers: { Host: host } });
          assert.equal(r.status, 403, `Host: ${host} ${p}: status ${r.status}`);
          assert.doesNotMatch(r.body, /secure-run/);
        }
      }
      for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'localhost']) {
        assert.equal((await rawRequest(plain.origin, '/api/runs', { headers: { Host: host } })).status, 200, `Host: ${host}`);
      }
      // In a browser: a name that resolves to 127.0.0.1 (as a rebinding attacker's would).
      const rebinding = await s.launchBrowser(['--host-resolver-rules=MAP rebind.test 127.0.0.1']);
      const page = await s.newPage(rebinding);
      const resp = await page.goto(`http://rebind.test:${port}/`);
      assert.equal(resp.status(), 403);
      assert.equal(await page.locator('[data-testid="runs-table"]').count(), 0);
      const api = await page.evaluate(async () => {
        const r = await fetch('/api/runs');
        return { status: r.status, body: await r.text() };
      });
      assert.equal(api.status, 403);
      assert.doesNotMatch(api.body, /secure-run/);
      await s.screenshot(page, 'security-host.png');
    }),
  );

  it(
    'servers exit 0 on SIGTERM',
    s.guard(() => s.stopServers()),
  );
});
