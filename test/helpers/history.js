// Linearizability histories: operations on one register per key, each with
// logical start/end times from a shared clock (Atomics.add on shared memory
// gives a total order consistent with real time), recorded by worker
// threads (test/fixtures/history-worker.js) or processes
// (test/fixtures/history-process.js) and checked by checkHistory().
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { checkValue, makeValue, valueOrigin } from './checked-value.js';

const historyProcess = new URL('../fixtures/history-process.js', import.meta.url);

/**
 * Forks test/fixtures/history-process.js once for each of `settings` (its
 * argv JSON: see there) and resolves with their histories, in order; a
 * process that exits before it reports rejects.
 */
export async function processHistories(settings) {
  const children = settings.map((each) =>
    fork(historyProcess, [JSON.stringify(each)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'advanced' }),
  );
  return Promise.all(
    children.map(async (child) => {
      const [history] = await Promise.race([
        once(child, 'message'),
        once(child, 'exit').then(([code]) => {
          throw new Error(`a history process exited with ${code} before reporting`);
        }),
      ]);
      return history;
    }),
  );
}

/** How a checked value is stored: as the Buffer, as a string, or in an object (what the near cache keeps). */
const FORMS = {
  buffer: { store: (bytes) => bytes, load: (value) => value },
  string: { store: (bytes) => bytes.toString('latin1'), load: (value) => Buffer.from(value, 'latin1') },
  object: { store: (bytes) => ({ bytes: bytes.toString('latin1') }), load: (value) => Buffer.from(value.bytes, 'latin1') },
};

/**
 * Runs `ops` ([type, key, length] each) on `cache` as writer `writer`, after
 * waiting for all `parties` at the barrier word gate[0]; returns the history.
 * Values are stored in `form` (a key of FORMS).
 * @param {Int32Array} time word 0 is the shared clock
 * @param {Int32Array} gate word 0 counts arrivals
 */
export function recordHistory(cache, ops, writer, time, gate, parties, form = 'buffer') {
  const { store, load } = FORMS[form];
  // Start together, so the operations really overlap.
  Atomics.add(gate, 0, 1);
  while (Atomics.load(gate, 0) < parties) Atomics.wait(gate, 1, 0, 1);
  const history = [];
  let sequence = 0;
  for (const [type, key, length] of ops) {
    const entry = { type, key, writer, sequence: 0, start: 0, end: 0, result: null };
    if (type === 'set') {
      entry.sequence = ++sequence;
      const value = store(makeValue(key, writer, entry.sequence, length));
      entry.start = Atomics.add(time, 0, 1);
      cache.set(key, value);
      entry.end = Atomics.add(time, 0, 1);
    } else if (type === 'delete') {
      entry.start = Atomics.add(time, 0, 1);
      entry.result = cache.delete(key);
      entry.end = Atomics.add(time, 0, 1);
    } else {
      entry.start = Atomics.add(time, 0, 1);
      const stored = cache.get(key);
      entry.end = Atomics.add(time, 0, 1);
      if (stored === undefined) entry.result = null;
      else {
        const value = load(stored);
        const check = checkValue(key, value);
        entry.result = check === 'ok' ? valueOrigin(value) : check;
      }
    }
    history.push(entry);
  }
  return history;
}

/**
 * Checks a history of set/delete/get on registers (one per key) for
 * linearizability violations that a cache without eviction must never show:
 * a read of a value already overwritten before the read began, a read of a
 * value not yet written, a miss although a write definitely preceded it, or
 * two ordered reads that see writes in the opposite order.
 */
export function checkHistory(history) {

  const problems = [];
  const byKey = new Map();
  for (const op of history) {
    if (!byKey.has(op.key)) byKey.set(op.key, []);
    byKey.get(op.key).push(op);
  }
  for (const [key, ops] of byKey) {
    const writes = ops.filter((op) => op.type === 'set');
    const deletes = ops.filter((op) => op.type === 'delete');
    const mutations = ops.filter((op) => op.type !== 'get');
    const writeOf = new Map(writes.map((op) => [`${op.writer}:${op.sequence}`, op]));
    const reads = ops.filter((op) => op.type === 'get');
    for (const read of reads) {
      if (read.result === 'torn' || read.result === 'foreign') {
        problems.push(`${key}: a ${read.result} value was read`);
        continue;
      }
      if (read.result === null) {
        const definite = writes.find(
          (w) => w.end < read.start && !deletes.some((d) => d.end > w.start && d.start < read.end),
        );
        if (definite) problems.push(`${key}: miss at [${read.start}, ${read.end}] after write at [${definite.start}, ${definite.end}]`);
        continue;
      }
      const source = writeOf.get(`${read.result.writer}:${read.result.sequence}`);
      if (!source) {
        problems.push(`${key}: read a value nobody wrote`);
        continue;
      }
      if (source.start > read.end) problems.push(`${key}: read a value before it was written`);
      const overwritten = mutations.find((m) => m !== source && m.start > source.end && m.end < read.start);
      if (overwritten) problems.push(`${key}: read at ${read.start} saw a value overwritten at ${overwritten.end}`);
      read.source = source;
    }
    const valued = reads.filter((read) => read.source);
    for (const first of valued) {
      for (const second of valued) {
        if (first.end < second.start && second.source.end < first.source.start) {
          problems.push(`${key}: a later read saw an older write`);
        }
      }
    }
  }
  return problems;
}
