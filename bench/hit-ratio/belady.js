// Belady's optimal offline policy (evict the key whose next use is farthest
// in the future): the ceiling any online policy could reach on a trace.

class MaxHeap {
  constructor() {
    this.keys = [];
    this.priorities = [];
  }

  push(key, priority) {
    const keys = this.keys;
    const priorities = this.priorities;
    let i = keys.length;
    keys.push(key);
    priorities.push(priority);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (priorities[parent] >= priority) break;
      keys[i] = keys[parent];
      priorities[i] = priorities[parent];
      i = parent;
    }
    keys[i] = key;
    priorities[i] = priority;
  }

  pop() {
    const keys = this.keys;
    const priorities = this.priorities;
    const top = keys[0];
    const topPriority = priorities[0];
    const lastKey = keys.pop();
    const lastPriority = priorities.pop();
    if (keys.length > 0) {
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= keys.length) break;
        const right = left + 1;
        const child = right < keys.length && priorities[right] > priorities[left] ? right : left;
        if (priorities[child] <= lastPriority) break;
        keys[i] = keys[child];
        priorities[i] = priorities[child];
        i = child;
      }
      keys[i] = lastKey;
      priorities[i] = lastPriority;
    }
    return { key: top, priority: topPriority };
  }

  get size() {
    return this.keys.length;
  }
}

/**
 * Hit ratio of Belady's policy with room for `capacity` keys. A missed key is
 * not admitted when it is needed no sooner than every cached key (the true
 * optimum; online policies must admit, so this is a strict ceiling).
 */
export function beladyHitRatio(trace, capacity) {
  const n = trace.length;
  const nextUse = new Float64Array(n);
  const lastSeen = new Map();
  for (let i = n - 1; i >= 0; i--) {
    const key = trace[i];
    nextUse[i] = lastSeen.get(key) ?? Infinity;
    lastSeen.set(key, i);
  }
  // The heap holds (key, its next use) for every cached key; entries whose
  // next use has passed are stale and skipped when popped.
  const cachedNext = new Map();
  const heap = new MaxHeap();
  let hits = 0;
  for (let i = 0; i < n; i++) {
    const key = trace[i];
    if (cachedNext.has(key)) {
      hits++;
    } else if (cachedNext.size >= capacity) {
      let victim;
      let victimNext;
      do ({ key: victim, priority: victimNext } = heap.pop());
      while (cachedNext.get(victim) !== victimNext);
      if (victimNext <= nextUse[i]) {
        // The new key is needed no sooner than anything cached: do not admit it.
        heap.push(victim, victimNext);
        continue;
      }
      cachedNext.delete(victim);
    }
    cachedNext.set(key, nextUse[i]);
    heap.push(key, nextUse[i]);
    if (heap.size > 4 * capacity + 1024) {
      // Drop stale heap entries now and then so the heap stays small.
      const fresh = new MaxHeap();
      for (const [k, next] of cachedNext) fresh.push(k, next);
      heap.keys = fresh.keys;
      heap.priorities = fresh.priorities;
    }
  }
  return hits / n;
}
