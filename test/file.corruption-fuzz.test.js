// A seeded corruption fuzz of closed arena files: one template file (1 MiB,
// entries of every kind, live and dead records, codec structures, ghosts),
// then files with 1-8 flipped bits across every region (header, thread
// stats, flights, shard meta, dictionaries, ghost tables, write counts,
// structures, data). For each: the opener refuses it (a damaged header) or
// recovers it, and then
//   - verify() is clean after restart recovery;
//   - every value served is whole and its key's own (values carry their own
//     checksum, objects are derived from their key);
//   - the next 1,000 sets lose nothing, repair nothing and evict nothing,
//     and another restart keeps every entry: damage is repaired at the first
//     open, never left latent to cost entries later;
//   - nothing crashes or hangs.
// Runs in a child process (test/fixtures/corruption-fuzz-child.js) so that a
// hang or a crash is reported with the file that caused it.
//
// Replay: SEED=<seed> (printed on failure) runs the same files; add
// FUZZ_FILE=<n> to run only file n. STRESS=1 runs 5,000 files.
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import test from 'node:test';
import { nativeAvailable } from '../lib/native/addon.js';
import { arenaPath } from './helpers/arena-files.js';
import { STRESS, testSeed } from './helpers/seeded-random.js';

const childFile = new URL('./fixtures/corruption-fuzz-child.js', import.meta.url);
const FILES = STRESS ? 5000 : 500;
/** A file that takes longer than this is a hang (a file takes about 50 ms). */
const STALL_MS = 30_000;
const skip = !nativeAvailable && 'native addon unavailable';

function describeFlips(flips) {
  return flips.map(({ region, at, bit }) => `${region} byte ${at} bit ${bit}`).join(', ');
}

/** Runs the child to its end; resolves with its report, or with what went wrong and where. */
function runFuzz(settings) {
  return new Promise((resolve) => {
    const child = fork(childFile, [JSON.stringify(settings)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let current = null;
    let template = null;
    let outcome = null;
    let timer = null;
    const watch = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        outcome = { hang: true, current };
        child.kill('SIGKILL');
      }, STALL_MS);
    };
    watch();
    child.on('message', (message) => {
      watch();
      if (message.template) template = message.template;
      else if (message.failure) outcome = { failure: message.failure, current: message };
      else if (message.report) outcome = { report: message.report };
      else current = message;
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ template, ...(outcome ?? { crash: signal ?? `exit code ${code}`, current }) });
    });
  });
}

test(`a seeded corruption fuzz: ${FILES} closed files with 1-8 flipped bits in every region serve nothing wrong and lose nothing after their first open`, { skip }, async (t) => {
  const seed = testSeed();
  const only = process.env.FUZZ_FILE === undefined ? null : Number(process.env.FUZZ_FILE);
  const result = await runFuzz({ seed, files: FILES, only, path: arenaPath(t, 'fuzz') });
  const replay = (file) => `seed ${seed}, file ${file} (replay: SEED=${seed} FUZZ_FILE=${file} node --test ${new URL(import.meta.url).pathname})`;
  if (result.hang) assert.fail(`hung on ${replay(result.current?.file)}: ${describeFlips(result.current?.flips ?? [])}`);
  if (result.crash) assert.fail(`the child died (${result.crash}) on ${replay(result.current?.file)}: ${describeFlips(result.current?.flips ?? [])}`);
  if (result.failure) assert.fail(`${replay(result.current.file)}: ${describeFlips(result.current.flips)}\n${result.failure}`);
  const { report } = result;
  const byRegion = Object.entries(report.flipsByRegion)
    .map(([region, count]) => `${region} ${count}`)
    .join(', ');
  console.log(
    `# seed ${seed}: ${report.files} files, ${report.flips} flipped bits (${byRegion}); ${report.refused} refused at open, ` +
      `${report.repairedAtOpen} repaired at open, ${report.served} template values served (of ${result.template.keys} per file), all whole and their own; ` +
      `${report.seconds.toFixed(1)} s`,
  );
  assert.equal(report.files, only === null ? FILES : 1);
  if (only === null) {
    // Every region was hit (each is picked as often; the header's parts count as one).
    const regions = new Set(Object.keys(report.flipsByRegion).map((name) => name.split(':')[0]));
    assert.equal(regions.size, 9, `regions flipped: ${byRegion}`);
  }
});
