// Running CacheFS operations in both forms node:fs offers.
//
// Each CacheFS operation is written once, as a generator that yields the
// storage operations it needs (['stat', target], ...); runSync() performs
// them with a backing's synchronous operations and runAsync() with its
// asynchronous ones, so readFile() and readFileSync() share every line of
// their caching logic (see backing.js for the operations).

/** Runs an operation's generator with the synchronous operations `ops`. */
export function runSync(flow, ops) {
  let step = flow.next();
  while (!step.done) {
    const [name, ...args] = step.value;
    let result;
    try {
      result = ops[name](...args);
    } catch (error) {
      step = flow.throw(error);
      continue;
    }
    step = flow.next(result);
  }
  return step.value;
}

/** Runs an operation's generator with the asynchronous operations `ops`. */
export async function runAsync(flow, ops) {
  let step = flow.next();
  while (!step.done) {
    const [name, ...args] = step.value;
    let result;
    try {
      result = await ops[name](...args);
    } catch (error) {
      step = flow.throw(error);
      continue;
    }
    step = flow.next(result);
  }
  return step.value;
}
