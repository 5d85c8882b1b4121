// Linearizability histories of the atomic operations, as history.js records
// and checks those of set/delete/get: each operation with logical start and
// end times from a shared clock (Atomics.add on shared memory gives a total
// order consistent with real time). Three kinds of key, each checked for what
// a linearizable object of its kind must show:
//
//   - counters (`ctr:*`): incr by 1 and get. The increments of a key return
//     1..n, each once (no lost or doubled update); one that ended before
//     another began returned less; a get returns a count whose increment
//     began before the get ended and whose next one had not ended before the
//     get began; ordered gets never go back.
//   - claims (`claim:*`): add(key, writer) and get. At most one add of a
//     key returns true; a get that began after it ended sees its writer, and
//     one that ended before it began sees nothing.
//   - registers (`reg:*`, set to 'init' first): info() then
//     compareAndSet(version, token). Successful swaps form one chain from
//     'init', each swapping out the token the one before it wrote (two that
//     swapped out the same token would be a lost update), in an order real
//     time allows; a swap that failed had its token swapped out by one that
//     began before the failure ended.

/** Runs `ops` ([type, key] each) on `cache` as `writer` after the barrier; returns the history. */
export function recordAtomicHistory(cache, ops, writer, time, gate, parties) {
  Atomics.add(gate, 0, 1);
  while (Atomics.load(gate, 0) < parties) Atomics.wait(gate, 1, 0, 1);
  const history = [];
  let sequence = 0;
  for (const [type, key] of ops) {
    const entry = { type, key, writer, start: 0, end: 0, result: null };
    if (type === 'incr') {
      entry.start = Atomics.add(time, 0, 1);
      entry.result = cache.incr(key);
      entry.end = Atomics.add(time, 0, 1);
    } else if (type === 'add') {
      entry.start = Atomics.add(time, 0, 1);
      entry.result = cache.add(key, writer);
      entry.end = Atomics.add(time, 0, 1);
    } else if (type === 'cas') {
      const info = cache.info(key);
      entry.read = info.value;
      entry.token = `${writer}:${++sequence}`;
      entry.start = Atomics.add(time, 0, 1);
      entry.result = cache.compareAndSet(key, info.version, entry.token);
      entry.end = Atomics.add(time, 0, 1);
    } else {
      entry.start = Atomics.add(time, 0, 1);
      entry.result = cache.get(key) ?? null;
      entry.end = Atomics.add(time, 0, 1);
    }
    history.push(entry);
  }
  return history;
}

function byKey(history) {
  const keys = new Map();
  for (const op of history) {
    if (!keys.has(op.key)) keys.set(op.key, []);
    keys.get(op.key).push(op);
  }
  return keys;
}

function checkCounter(key, ops, problems) {
  const increments = ops.filter((op) => op.type === 'incr').sort((a, b) => a.result - b.result);
  const byValue = new Map();
  for (const op of increments) {
    if (byValue.has(op.result)) problems.push(`${key}: two increments returned ${op.result}`);
    byValue.set(op.result, op);
  }
  increments.forEach((op, i) => {
    if (op.result !== i + 1) problems.push(`${key}: increment ${i + 1} of ${increments.length} returned ${op.result}`);
  });
  for (const a of increments) for (const b of increments) if (a.end < b.start && a.result > b.result) problems.push(`${key}: an increment that returned ${a.result} ended before one that returned ${b.result} began`);
  const reads = ops.filter((op) => op.type === 'get');
  for (const read of reads) {
    const count = read.result ?? 0;
    const own = byValue.get(count);
    if (count > 0 && (own === undefined || own.start > read.end)) problems.push(`${key}: a get at [${read.start}, ${read.end}] saw ${count} before that increment began`);
    const next = byValue.get(count + 1);
    if (next !== undefined && next.end < read.start) problems.push(`${key}: a get at [${read.start}, ${read.end}] saw ${count} after increment ${count + 1} ended`);
  }
  for (const a of reads) for (const b of reads) if (a.end < b.start && (a.result ?? 0) > (b.result ?? 0)) problems.push(`${key}: a get saw ${a.result}, a later one ${b.result}`);
}

function checkClaim(key, ops, problems) {
  const winners = ops.filter((op) => op.type === 'add' && op.result === true);
  if (winners.length > 1) problems.push(`${key}: ${winners.length} adds returned true`);
  const winner = winners[0];
  for (const read of ops.filter((op) => op.type === 'get')) {
    if (winner === undefined) {
      if (read.result !== null) problems.push(`${key}: a get saw ${read.result} and no add won`);
    } else if (read.start > winner.end && read.result !== winner.writer) {
      problems.push(`${key}: a get after the winning add saw ${read.result}, not ${winner.writer}`);
    } else if (read.end < winner.start && read.result !== null) {
      problems.push(`${key}: a get before the winning add saw ${read.result}`);
    } else if (read.result !== null && read.result !== winner.writer) {
      problems.push(`${key}: a get saw ${read.result}, which no winning add wrote`);
    }
  }
}

function checkRegister(key, ops, problems) {
  const swaps = ops.filter((op) => op.type === 'cas');
  const won = swaps.filter((op) => op.result === true);
  const wonByRead = new Map();
  for (const op of won) {
    if (wonByRead.has(op.read)) problems.push(`${key}: two swaps replaced ${op.read} (a lost update)`);
    wonByRead.set(op.read, op);
  }
  // The chain from 'init': each next swap replaced the token the one before wrote.
  let current = 'init';
  let previous = null;
  let length = 0;
  while (wonByRead.has(current)) {
    const op = wonByRead.get(current);
    if (previous !== null && op.end < previous.start) problems.push(`${key}: the swap that replaced ${current} ended before the swap that wrote it began`);
    previous = op;
    current = op.token;
    length++;
    if (length > won.length) break;
  }
  if (length !== won.length) problems.push(`${key}: ${won.length} swaps won, but only ${length} form a chain from 'init'`);
  for (const op of swaps) {
    if (op.result === true) continue;
    const winner = wonByRead.get(op.read);
    if (winner === undefined || winner.start > op.end) problems.push(`${key}: a swap of ${op.read} failed at [${op.start}, ${op.end}] though nothing had replaced it`);
  }
}

/** The problems of a history of the three kinds of key (see the top); empty when none. */
export function checkAtomicHistory(history) {
  const problems = [];
  for (const [key, ops] of byKey(history)) {
    if (key.startsWith('ctr:')) checkCounter(key, ops, problems);
    else if (key.startsWith('claim:')) checkClaim(key, ops, problems);
    else checkRegister(key, ops, problems);
  }
  return problems;
}
