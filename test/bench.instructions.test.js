// npm run bench:instructions: the run each valgrind child makes works for
// every contender at tiny sizes (the valgrind runs themselves take minutes
// and are not run here), and a bad setting is an error naming its variable.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import test from 'node:test';
import { assertBenchRejects } from './helpers/bench-run.js';

const script = fileURLToPath(new URL('../bench/instructions.js', import.meta.url));

test('the instruction benchmark runs each contender\'s get and set loop (tiny sizes, without valgrind)', () => {
  for (const contender of ['floor', 'nearCache 0', 'near default']) {
    for (const kind of ['set', 'get']) {
      execFileSync(process.execPath, [script, '--run', contender, kind, '500'], { env: { ...process.env, BENCH_ENTRIES: '200', BENCH_WARMUP: '300' }, stdio: 'pipe' });
    }
  }
});

test('the instruction benchmark rejects bad settings with a message naming the variable', () => {
  assertBenchRejects('instructions.js', [
    ['BENCH_OPS_KIND', 'put', 'BENCH_OPS_KIND must list set and/or get (got "put")'],
    ['BENCH_OPS', '0', 'BENCH_OPS must be a positive integer (got "0")'],
  ]);
});
