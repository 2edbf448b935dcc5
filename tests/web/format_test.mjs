// The dashboard's duration format (web/src/format.ts) follows the terminal UI's rule: under a minute to the
// tenth of a second, truncated like a clock. format.ts is transpiled with the TypeScript compiler the
// dashboard's build installed (argv[2]: its node_modules) and imported as a module; no browser needed.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import test from 'node:test';

const [nodeModules, source] = process.argv.slice(2);
const ts = createRequire(path.resolve(nodeModules, 'noop.js'))('typescript');
const js = ts.transpileModule(readFileSync(source, 'utf8'), {
  compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2020 },
}).outputText;
const { formatDuration } = await import('data:text/javascript;base64,' + Buffer.from(js).toString('base64'));

test('runtimes under a minute show tenths of a second', () => {
  assert.equal(formatDuration(3.7), '3.7s');
  assert.equal(formatDuration(3), '3s');
  assert.equal(formatDuration(45.25), '45.2s');
  assert.equal(formatDuration(59.96), '59.9s');
  assert.equal(formatDuration(0.04), '0s');
});

test('longer durations as before', () => {
  assert.equal(formatDuration(60), '1m 00s');
  assert.equal(formatDuration(59.9999999), '1m 00s');
  assert.equal(formatDuration(750), '12m 30s');
  assert.equal(formatDuration(11100), '3h 05m');
  assert.equal(formatDuration(-3.7), '-3.7s');
  assert.equal(formatDuration(null), '–');
});
