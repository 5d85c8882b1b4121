// node bench/instructions.js — machine instructions per 64 B get and set,
// SharedCache (nearCache 0 and the default) against the floor
// (bench/lib/floor-cache.js), counted by valgrind (cachegrind).
//
// On a shared machine, timings of two versions of the set path swing by
// 10-20% between identical runs, more than most single changes to it are
// worth. An instruction count does not depend on the load: it is the same
// from run to run within about 2%, so it tells whether a change of the hot
// path did less work, which bench:floor then confirms or not in time (cache
// misses, which it does not count, are most of a 64 B operation's time).
//
// Each contender runs in its own process under valgrind, twice: the same
// warm-up, then OPS and 3 * OPS operations; the difference divided by
// 2 * OPS is the count per operation (start-up, warm-up and compilation
// cancel out). Needs valgrind; each process takes about 20 s.
//
// Environment: BENCH_ENTRIES (20000), BENCH_OPS (100000), BENCH_WARMUP
// (600000 operations), BENCH_OPS_KIND (set,get).

import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { positiveInt } from './lib/env.js';

const self = fileURLToPath(import.meta.url);
const entries = positiveInt('BENCH_ENTRIES', 20_000);
const ops = positiveInt('BENCH_OPS', 100_000);
const warmup = positiveInt('BENCH_WARMUP', 600_000);
const kinds = (process.env.BENCH_OPS_KIND ?? 'set,get').split(',');
for (const kind of kinds) if (kind !== 'set' && kind !== 'get') throw new RangeError(`BENCH_OPS_KIND must list set and/or get (got "${process.env.BENCH_OPS_KIND}")`);
const contenders = ['floor', 'nearCache 0', 'near default'];

if (process.argv[2] === '--run') {
  await runOne(process.argv[3], process.argv[4], Number(process.argv[5]));
} else {
  main();
}

/** In the valgrind child: a warm-up, then `count` operations of `kind` on `contender`. */
async function runOne(contender, kind, count) {
  const { SharedCache } = await import('../lib/index.js');
  const { FloorCache } = await import('./lib/floor-cache.js');
  const { arenaBytesFor, makeKeys, makePayload, shuffledOrder } = await import('./lib/keys.js');
  const keys = makeKeys(entries);
  const order = shuffledOrder(entries);
  const value = makePayload(64);
  const memoryBytes = arenaBytesFor(entries, 64);
  const cache =
    contender === 'floor'
      ? new FloorCache({ memoryBytes, entries })
      : new SharedCache({ memoryBytes, max: entries, ...(contender === 'nearCache 0' ? { nearCache: 0 } : {}) });
  for (const key of keys) cache.set(key, value);
  let found = 0;
  const run = (n) => {
    for (let i = 0, j = 0; i < n; i++) {
      if (kind === 'get') {
        if (cache.get(keys[order[j]]) !== undefined) found++;
      } else {
        cache.set(keys[order[j]], value);
      }
      if (++j === entries) j = 0;
    }
  };
  run(warmup);
  run(count);
  if (kind === 'get' && found === 0) throw new Error('bench: a lookup found nothing');
}

/** Instructions valgrind counted for one child run. */
function instructions(contender, kind, count) {
  const result = spawnSync(
    'valgrind',
    ['--tool=cachegrind', '--cache-sim=no', '--cachegrind-out-file=/dev/null', process.execPath, '--no-concurrent-recompilation', self, '--run', contender, kind, String(count)],
    { encoding: 'utf8' },
  );
  const match = /I\s+refs:\s+([\d,]+)/.exec(result.stderr);
  if (result.status !== 0 || match === null) throw new Error(`valgrind run failed (${contender} ${kind}):\n${result.stderr.slice(-2000)}`);
  return Number(match[1].replaceAll(',', ''));
}

function main() {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
  } catch {
    console.error('bench:instructions needs valgrind (apt-get install valgrind)');
    process.exit(1);
  }
  console.log(`instructions per operation (valgrind), 64 B Buffer values, ${entries} string keys, random order, warm`);
  for (const kind of kinds) {
    const counts = {};
    for (const contender of contenders) {
      counts[contender] = (instructions(contender, kind, 3 * ops) - instructions(contender, kind, ops)) / (2 * ops);
    }
    const row = contenders.map((c) => `${c} ${counts[c].toFixed(0)}${c === 'floor' ? '' : ` (${(counts[c] / counts.floor).toFixed(2)}x)`}`);
    console.log(`${kind}: ${row.join(', ')}`);
  }
}
