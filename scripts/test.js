// npm test: every test file under node:test, a few files at a time, each
// file with a time limit.
//
// Most files spend their time waiting on child processes, workers and
// timers, so on 2 cores three files at a time finish the suite in about
// half the time of one at a time. The time limit turns a hung file into a
// failure that names it, instead of a run that never ends.
//
// Environment: TEST_CONCURRENCY (files at a time, default 3),
// TEST_TIMEOUT_MS (per file, default 20 minutes; 0 for none), STRESS=1 (the
// long versions: no time limit unless TEST_TIMEOUT_MS is given). Arguments
// are passed on to node --test before the files, e.g.
// npm test -- --test-name-pattern=ttl
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** A whole number >= min from the environment, or the default. */
function setting(name, fallback, min) {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < min) {
    console.error(`${name} must be a whole number >= ${min} (got ${JSON.stringify(text)})`);
    process.exit(2);
  }
  return value;
}

const concurrency = setting('TEST_CONCURRENCY', 3, 1);
const timeoutMs = setting('TEST_TIMEOUT_MS', process.env.STRESS ? 0 : 20 * 60_000, 0);
const files = readdirSync(path.join(root, 'test'))
  .filter((name) => name.endsWith('.test.js'))
  .sort()
  .map((name) => path.join('test', name));
const args = ['--test', `--test-concurrency=${concurrency}`, ...(timeoutMs > 0 ? [`--test-timeout=${timeoutMs}`] : []), ...process.argv.slice(2), ...files];
const result = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
if (result.error) throw result.error;
process.exit(result.status ?? 1);
