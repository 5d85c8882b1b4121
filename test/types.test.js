// The TypeScript declarations (types/*.d.ts) and the JSDoc in lib/ are
// checked by the TypeScript compiler itself:
// - test/types/*.ts use every export under `strict` and must compile; their
//   `// @ts-expect-error` lines must fail (tsc reports one that does not);
// - `tsc --checkJs` over lib/ (tsconfig.json) must report nothing.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const skip = existsSync(tsc) ? false : 'typescript is not installed (npm ci installs it)';

function compile(project) {
  const result = spawnSync(process.execPath, [tsc, '-p', project], { cwd: root, encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

test('test/types/*.ts compile under strict, and every @ts-expect-error is needed', { skip }, () => {
  const { status, output } = compile('test/types');
  assert.equal(status, 0, output);
});

test('tsc --checkJs over lib/ reports no error', { skip }, () => {
  const { status, output } = compile('.');
  assert.equal(status, 0, output);
});

test('a misuse the type tests rely on is really an error', { skip }, () => {
  // If the compiler ignored the declarations (say a broken "types" path),
  // every @ts-expect-error would be unused and fail above; this checks the
  // other direction directly: a wrong value type is reported.
  const probe = path.join(root, 'test', 'types', 'tsconfig.json');
  assert.ok(existsSync(probe));
  const result = spawnSync(
    process.execPath,
    [tsc, '--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--types', 'node', path.join(root, 'test', 'types', 'must-fail', 'wrong-value.ts')],
    { cwd: root, encoding: 'utf8' },
  );
  assert.notEqual(result.status, 0);
  assert.match(`${result.stdout}`, /wrong-value\.ts\(\d+,\d+\): error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'/);
});
