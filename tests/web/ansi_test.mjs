// The Logs tab's reading of a console line (web/src/ansi.ts): SGR colours and weights as spans by leet's
// rules, every other escape sequence dropped, control characters and bidirectional overrides made visible.
// ansi.ts is transpiled with the TypeScript compiler the dashboard's build installed (argv[2]: its
// node_modules) and imported as a module; no browser needed.
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
const { parseAnsi, visibleText } = await import('data:text/javascript;base64,' + Buffer.from(js).toString('base64'));

const plain = { bold: false, dim: false, palette: null, color: null };
const spans = (line) => parseAnsi(line).map((s) => [s.text, ...(s.bold ? ['bold'] : []), ...(s.dim ? ['dim'] : []), s.palette ?? s.color ?? '']);

test('SGR colours and weights become spans', () => {
  assert.deepEqual(spans('\x1b[31mred\x1b[0m plain'), [['red', 1], [' plain', '']]);
  assert.deepEqual(spans('\x1b[1;92mok\x1b[22m thin\x1b[39m'), [['ok', 'bold', 10], [' thin', 10]]);
  assert.deepEqual(spans('\x1b[38;5;208ma\x1b[38;5;9mb\x1b[38;5;244mc'), [['a', '#ff8700'], ['b', 9], ['c', '#808080']]);
  assert.deepEqual(spans('\x1b[38;2;1;2;255mrgb\x1b[m'), [['rgb', '#0102ff']]);
  assert.deepEqual(spans('\x1b[2mdim\x1b[1mbold'), [['dim', 'dim', ''], ['bold', 'bold', '']]);
  // Backgrounds are read past, with their arguments, and change nothing.
  assert.deepEqual(spans('\x1b[48;5;1;41mx\x1b[48;2;1;2;3;33my'), [['x', ''], ['y', 3]]);
  // Spans of one style are joined; an empty line has none.
  assert.deepEqual(spans('a\x1b[0mb\x1b[39mc'), [['abc', '']]);
  assert.deepEqual(parseAnsi(''), []);
  assert.deepEqual(parseAnsi('x')[0], { text: 'x', ...plain });
});

test('every other escape sequence is dropped', () => {
  assert.deepEqual(spans('\x1b]0;title\x07after'), [['after', '']]);
  assert.deepEqual(spans('\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\'), [['link', '']]);
  assert.deepEqual(spans('\x1b[2J\x1b[H\x1b[10;20Hhere\x1b[K\x1b[?25l'), [['here', '']]);
  assert.deepEqual(spans('a\x1b7b\x1b=c\x1bPdcs\x1b\\d'), [['abcd', '']]);
  assert.deepEqual(spans('\x1b]0;never ends'), []);
  assert.deepEqual(spans('end\x1b'), [['end', '']]);
  // A broken CSI goes up to what broke it, which is read on.
  assert.deepEqual(spans('\x1b[12\x1b[31mx'), [['x', 1]]);
});

test('control characters and overrides are shown, not obeyed', () => {
  assert.equal(visibleText('a\x00b\x07c\x08d\x7fe\x9bf\tg'), 'a\u2400b\u2407c\u2408d\u2421e\ufffdf\tg');
  assert.equal(visibleText('rlo\u202eevil \u2066iso\u2069'), 'rlo\ufffdevil \ufffdiso\ufffd');
  assert.deepEqual(spans('\x1b[31mbell\x07\x1b[0m'), [['bell\u2407', 1]]);
  assert.equal(visibleText('<script>é 😀</script>'), '<script>é 😀</script>');
});
