// Reference policies the real-trace mode compares against, simulated here
// on dense key ids (no cache library involved), from their published
// descriptions:
//
//   exact LRU   a Map in recency order: a hit moves the key to the end, a
//               miss evicts the first key when full.
//   S3-FIFO     Yang et al., "FIFO queues are all you need for cache
//               eviction" (SOSP 2023): a small FIFO (10% of the entries)
//               that new keys enter, a main FIFO (the rest) and a ghost
//               FIFO of keys evicted from the small one (as many as the
//               main one holds). Each cached key has a frequency, raised by
//               a hit up to 3. Leaving the small FIFO, a key read at least
//               once moves to the main one, else its id enters the ghost.
//               Leaving the main FIFO, a key with a frequency above 0 is
//               put back with it lowered by one, else evicted. A miss on a
//               key in the ghost inserts it into the main FIFO.

/** Hit ratio of an exact LRU of `capacity` keys on `trace`. */
export function lruHitRatio(trace, capacity) {
  const cached = new Map();
  let hits = 0;
  for (let i = 0; i < trace.length; i++) {
    const key = trace[i];
    if (cached.has(key)) {
      hits++;
      cached.delete(key);
    } else if (cached.size >= capacity) {
      cached.delete(cached.keys().next().value);
    }
    cached.set(key, true);
  }
  return hits / trace.length;
}

/** A FIFO of key ids in a ring buffer, with its members' positions for membership. */
class Fifo {
  constructor(capacity) {
    this.ring = new Uint32Array(Math.max(1, capacity));
    this.head = 0;
    this.size = 0;
  }

  push(key) {
    this.ring[(this.head + this.size) % this.ring.length] = key;
    this.size++;
  }

  shift() {
    const key = this.ring[this.head];
    this.head = (this.head + 1) % this.ring.length;
    this.size--;
    return key;
  }
}

/**
 * Hit ratio of S3-FIFO (see the top) with room for `capacity` keys, the
 * small FIFO's share `smallShare` of them (at least 1). As in the paper,
 * the two FIFOs share the room: a miss in a full cache evicts from the
 * small FIFO while it holds its share or more, else from the main one.
 */
export function s3fifoHitRatio(trace, capacity, smallShare = 0.1) {
  const smallCapacity = Math.max(1, Math.round(capacity * smallShare));
  const ghostCapacity = Math.max(1, capacity - smallCapacity);
  const small = new Fifo(capacity + 1);
  const main = new Fifo(capacity + 1);
  const ghost = new Fifo(ghostCapacity + 1);
  /** Frequency (0..3) of each cached key. */
  const frequency = new Map();
  /** Ghost members, counted (a key can be in the ghost FIFO more than once). */
  const ghosts = new Map();
  const remember = (key) => {
    if (ghost.size >= ghostCapacity) {
      const old = ghost.shift();
      const count = ghosts.get(old) - 1;
      if (count === 0) ghosts.delete(old);
      else ghosts.set(old, count);
    }
    ghost.push(key);
    ghosts.set(key, (ghosts.get(key) ?? 0) + 1);
  };
  const evictSmall = () => {
    const key = small.shift();
    if (frequency.get(key) > 0) {
      // Read while probationary: into the main FIFO (the room stays taken).
      frequency.set(key, 0);
      main.push(key);
    } else {
      frequency.delete(key);
      remember(key);
    }
  };
  const evictMain = () => {
    for (;;) {
      const key = main.shift();
      const seen = frequency.get(key);
      if (seen === 0) {
        frequency.delete(key);
        return;
      }
      frequency.set(key, seen - 1);
      main.push(key);
    }
  };
  let hits = 0;
  for (let i = 0; i < trace.length; i++) {
    const key = trace[i];
    const seen = frequency.get(key);
    if (seen !== undefined) {
      hits++;
      if (seen < 3) frequency.set(key, seen + 1);
      continue;
    }
    while (small.size + main.size >= capacity) {
      if (small.size >= smallCapacity || main.size === 0) evictSmall();
      else evictMain();
    }
    frequency.set(key, 0);
    if (ghosts.has(key)) main.push(key);
    else small.push(key);
  }
  return hits / trace.length;
}
