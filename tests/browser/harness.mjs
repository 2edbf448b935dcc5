// Shared pieces of the browser tests: the runmon binary (fixture runs, `runmon serve`, `runmon dump`),
// raw HTTP requests, the system's Chromium driven by playwright-core, screenshots, and the clean-up that
// runs even when a test fails (servers stopped, background runs killed, temp dirs removed).
//
// Environment (set by tests/browser/CMakeLists.txt):
//   RUNMON_BINARY              the runmon executable (required)
//   RUNMON_CHROMIUM            the Chromium executable (default /usr/bin/chromium)
//   RUNMON_BROWSER_DEPS        a directory holding node_modules/playwright-core (default: this directory)
//   RUNMON_BROWSER_ARTIFACTS   where screenshots go (default <tmp>/runmon-browser-artifacts)
//   RUNMON_CHROMIUM_NO_SANDBOX 1: run Chromium without its sandbox also when not root
//
// Node 18 compatible: no import.meta.dirname, no newer fs APIs.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

export const kServeLine = /^runmon serve: (http:\/\/\S+) in (.*)$/m;

export function runmonBinary() {
  const bin = process.env.RUNMON_BINARY;
  if (!bin) throw new Error('RUNMON_BINARY is not set: point it at the runmon executable (ctest sets it)');
  if (!fs.existsSync(bin)) throw new Error(`RUNMON_BINARY=${bin} does not exist`);
  return bin;
}

export function chromiumPath() {
  return process.env.RUNMON_CHROMIUM || '/usr/bin/chromium';
}

export function artifactsDir() {
  const dir = process.env.RUNMON_BROWSER_ARTIFACTS || path.join(os.tmpdir(), 'runmon-browser-artifacts');
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

function loadPlaywright() {
  const base = process.env.RUNMON_BROWSER_DEPS || here;
  const require = createRequire(path.join(base, 'package.json'));
  try {
    return require('playwright-core');
  } catch (e) {
    throw new Error(`playwright-core not found under ${base}/node_modules (run npm ci there, or let ctest's browser.npm_ci do it): ${e.message}`);
  }
}

// Polls `fn` until it returns a truthy value; gives that value, or throws after `timeoutMs` with the
// last value or error in the message.
export async function pollUntil(fn, { timeoutMs = 10000, intervalMs = 50, what = 'condition' } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      const detail = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${detail})`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

// One HTTP request with the path sent byte for byte (fetch would normalize "..", "%2e%2e" away before
// sending, so traversal probes need this) and any Host header.
export function rawRequest(origin, rawPath, { method = 'GET', headers = {}, body = null, timeoutMs = 5000 } = {}) {
  const u = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: u.hostname, port: u.port, path: rawPath, method, headers, agent: false, timeout: timeoutMs },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`request ${method} ${rawPath} timed out`)));
    req.on('error', reject);
    if (body !== null) req.write(body);
    req.end();
  });
}

// A minimal CSV reader for `runmon dump --format csv`: a header row of keys, then one row per sample;
// an empty cell is null.
export function parseCsv(text) {
  const lines = text.split('\n').filter((l) => l.length > 0);
  if (lines.length === 0) return { keys: [], rows: [] };
  const keys = lines[0].split(',');
  const rows = lines.slice(1).map((line) => {
    const cells = line.split(',');
    const row = {};
    keys.forEach((k, i) => {
      const c = cells[i];
      row[k] = c === undefined || c === '' ? null : Number(c);
    });
    return row;
  });
  return { keys, rows };
}

class Server {
  constructor(proc, label) {
    this.proc = proc;
    this.label = label;
    this.stdout = '';
    this.stderr = '';
    this.exitInfo = null;
    this.exited = new Promise((resolve) => {
      proc.on('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        resolve(this.exitInfo);
      });
    });
    proc.stdout.setEncoding('utf8');
    proc.stderr.setEncoding('utf8');
    proc.stdout.on('data', (d) => (this.stdout += d));
    proc.stderr.on('data', (d) => (this.stderr += d));
  }

  // Resolves once the URL line is printed and the server answers a request.
  async ready(timeoutMs = 15000) {
    const m = await pollUntil(
      () => {
        if (this.exitInfo) throw new Error(`${this.label} exited early (${JSON.stringify(this.exitInfo)}): ${this.stderr}`);
        return kServeLine.exec(this.stdout);
      },
      { timeoutMs, what: `${this.label} to print its URL (stdout so far: ${JSON.stringify(this.stdout)})` },
    );
    this.url = m[1];
    const u = new URL(this.url);
    this.origin = u.origin;
    this.port = Number(u.port);
    this.token = u.searchParams.get('token');
    await pollUntil(() => rawRequest(this.origin, '/api/runs').then((r) => r.status > 0), {
      timeoutMs,
      what: `${this.label} to answer on ${this.origin}`,
    });
    return this;
  }

  // SIGTERM, then the exit status (SIGKILL after 10 s, and that counts as a failure).
  async stop() {
    if (!this.exitInfo) {
      this.proc.kill('SIGTERM');
      const timer = setTimeout(() => this.proc.kill('SIGKILL'), 10000);
      await this.exited;
      clearTimeout(timer);
    }
    return this.exitInfo;
  }
}

export class Session {
  constructor(name) {
    this.name = name;
    this.tmpDirs = [];
    this.children = new Set();
    this.servers = [];
    this.browser = null;
    this.pages = new Set();
    this.bin = runmonBinary();
    // This file's screenshots of an earlier run go: the directory shows the last run only.
    for (const f of fs.readdirSync(artifactsDir())) {
      if (f.endsWith('.png') && (f === `${name}.png` || f.startsWith(`${name}-`))) fs.rmSync(path.join(artifactsDir(), f), { force: true });
    }
    // Last resort if the process dies without running the hooks: no orphaned servers or runs.
    this.onExit = () => {
      for (const c of this.children) {
        if (c.exitCode === null && c.signalCode === null) {
          try {
            c.kill('SIGKILL');
          } catch {
            // already gone
          }
        }
      }
    };
    process.on('exit', this.onExit);
  }

  async tempDir(tag) {
    const d = await fsp.mkdtemp(path.join(os.tmpdir(), `runmon-browser-${this.name}-${tag}-`));
    this.tmpDirs.push(d);
    return d;
  }

  spawn(args, opts = {}) {
    const child = spawn(this.bin, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
    this.children.add(child);
    child.on('exit', () => this.children.delete(child));
    return child;
  }

  // Runs `runmon ARGS` to the end: {code, signal, stdout, stderr}.
  exec(args, { timeoutMs = 30000 } = {}) {
    const child = this.spawn(args);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`runmon ${args.join(' ')} did not finish within ${timeoutMs} ms; stderr: ${stderr}`));
      }, timeoutMs);
      child.on('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        resolve({ code, signal, stdout, stderr });
      });
    });
  }

  // `runmon run` options for a fixture run.
  static runArgs(logdir, { id, name, interval = '0.1', command }) {
    const args = ['run', '--dir', logdir, '--interval', String(interval), '--id', id];
    if (name !== undefined) args.push('--name', name);
    return [...args, '--', ...command];
  }

  // Records a fixture run to its end; gives the run's directory (absolute path).
  async record(logdir, { id, name, interval = '0.1', command, expectCode = 0 }) {
    const r = await this.exec(Session.runArgs(logdir, { id, name, interval, command }));
    if (r.code !== expectCode) {
      throw new Error(`runmon run (${id}) exited ${r.code} (signal ${r.signal}), expected ${expectCode}; stderr: ${r.stderr}`);
    }
    return this.runDir(logdir, id);
  }

  // A run started in the background: {child, done} where done resolves to the exit code.
  recordInBackground(logdir, spec) {
    const child = this.spawn(Session.runArgs(logdir, spec));
    let stderr = '';
    child.stdout.resume();
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d) => (stderr += d));
    const done = new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
    return { child, done };
  }

  runDir(logdir, id) {
    const name = fs.readdirSync(logdir).find((d) => d.startsWith('run-') && d.endsWith(`-${id}`));
    if (!name) throw new Error(`no run directory for id ${id} in ${logdir}: ${fs.readdirSync(logdir).join(', ')}`);
    return path.join(logdir, name);
  }

  // The run's metrics as parsed CSV (runmon dump --format csv).
  async dumpCsv(runDir) {
    const r = await this.exec(['dump', '--format', 'csv', runDir]);
    if (r.code !== 0) throw new Error(`runmon dump ${runDir} exited ${r.code}: ${r.stderr}`);
    return parseCsv(r.stdout);
  }

  // Starts `runmon serve ARGS` (add --port 0 yourself) and waits until it answers.
  async serve(args, label = 'runmon serve') {
    const server = new Server(this.spawn(['serve', ...args]), label);
    this.servers.push(server);
    return server.ready();
  }

  async launchBrowser(extraArgs = []) {
    const { chromium } = loadPlaywright();
    // Chromium's sandbox does not run as root (containers, CI): --no-sandbox there only (Playwright's
    // chromiumSandbox: false), or where RUNMON_CHROMIUM_NO_SANDBOX=1 says the sandbox cannot start.
    const root = typeof process.getuid === 'function' && process.getuid() === 0;
    const sandbox = !root && process.env.RUNMON_CHROMIUM_NO_SANDBOX !== '1';
    const browser = await chromium.launch({
      executablePath: chromiumPath(),
      headless: true,
      chromiumSandbox: sandbox,
      args: extraArgs,
      timeout: 60000,
    });
    if (!this.browser) this.browser = browser;
    this.extraBrowsers = this.extraBrowsers ?? [];
    if (browser !== this.browser) this.extraBrowsers.push(browser);
    return browser;
  }

  // A page in a fresh context that records uncaught errors, console errors and dialogs (dismissed).
  async newPage(browser = this.browser, contextOptions = {}) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...contextOptions });
    const page = await context.newPage();
    page.setDefaultTimeout(15000);
    page.pageErrors = [];
    page.consoleErrors = [];
    page.dialogs = [];
    page.on('pageerror', (e) => page.pageErrors.push(String(e)));
    page.on('console', (m) => {
      if (m.type() === 'error') page.consoleErrors.push(m.text());
    });
    page.on('dialog', (d) => {
      page.dialogs.push(`${d.type()}: ${d.message()}`);
      d.dismiss().catch(() => {});
    });
    this.pages.add(page);
    this.current = page;
    return page;
  }

  async screenshot(page, file) {
    const p = path.join(artifactsDir(), file);
    await page.screenshot({ path: p, fullPage: true });
    return p;
  }

  // Wraps a test body: on failure, a screenshot of the current page is kept beside the others.
  guard(fn) {
    return async (t) => {
      try {
        await fn(t);
      } catch (e) {
        const page = this.current;
        if (page && !page.isClosed()) {
          const safe = String(t?.name ?? 'test').replace(/[^A-Za-z0-9_.-]+/g, '_').slice(0, 80);
          await this.screenshot(page, `${this.name}-FAILED-${safe}.png`).catch(() => {});
        }
        throw e;
      }
    };
  }

  // Closes every page and browser (their idle keep-alive connections would hold a stopping server for up
  // to its 5 s read timeout).
  async closeBrowsers() {
    for (const page of this.pages) await page.context().close().catch(() => {});
    this.pages.clear();
    this.current = null;
    for (const b of [this.browser, ...(this.extraBrowsers ?? [])]) if (b) await b.close().catch(() => {});
    this.browser = null;
    this.extraBrowsers = [];
  }

  // Stops the servers (browsers first) and checks that each exits 0 on SIGTERM.
  async stopServers() {
    await this.closeBrowsers();
    for (const server of this.servers) {
      const { code, signal } = await server.stop();
      assert.equal(signal, null, `${server.label} was killed by ${signal}`);
      assert.equal(code, 0, `${server.label} exit status; stderr: ${server.stderr}`);
    }
  }

  async cleanup() {
    await this.closeBrowsers();
    for (const s of this.servers) await s.stop().catch(() => {});
    for (const c of [...this.children]) {
      if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    }
    for (const d of this.tmpDirs) await fsp.rm(d, { recursive: true, force: true }).catch(() => {});
    process.off('exit', this.onExit);
  }
}

// The plotted state of a chart or panel, as the dashboard's test hook holds it (undefined values become
// null on the way out).
export async function plotted(page, id) {
  return page.evaluate((cid) => {
    const c = window.__runmonCharts.get(cid);
    return c ? JSON.parse(JSON.stringify(c)) : null;
  }, id);
}

// Waits until the chart `id` was plotted with at least one value and more than `minUpdates` updates.
export async function waitPlotted(page, id, { minUpdates = 0, minPoints = 1, timeoutMs = 15000 } = {}) {
  await page.waitForFunction(
    ([cid, u, n]) => {
      const c = window.__runmonCharts.get(cid);
      if (!c || c.updates <= u || c.x.length < n) return false;
      return c.series.some((s) => s.values.some((v) => v !== null && v !== undefined));
    },
    [id, minUpdates, minPoints],
    { timeout: timeoutMs },
  );
  return plotted(page, id);
}

// [x, value] pairs of one plotted series where it has a value.
export function plottedPoints(chart, key) {
  const s = chart.series.find((x) => x.key === key);
  if (!s) throw new Error(`no series ${key} in chart "${chart.title}" (series: ${chart.series.map((x) => x.key).join(', ')})`);
  const out = [];
  chart.x.forEach((x, i) => {
    const v = s.values[i];
    if (v !== null && v !== undefined) out.push([x, v]);
  });
  return out;
}

// [_runtime, value] pairs of one key in a run's CSV dump.
export function csvPoints(csv, key) {
  if (!csv.keys.includes(key)) throw new Error(`no column ${key} in the dump (columns: ${csv.keys.join(', ')})`);
  return csv.rows.filter((r) => r[key] !== null).map((r) => [r._runtime, r[key]]);
}

export function close(a, b, { abs = 1e-6, rel = 1e-5 } = {}) {
  return Math.abs(a - b) <= Math.max(abs, rel * Math.max(Math.abs(a), Math.abs(b)));
}
