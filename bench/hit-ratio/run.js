// Replays a trace against a cache: every request is a get, and a miss is
// followed by a set (the read-through pattern). Returns the hit ratio.

const VALUE = Buffer.alloc(8, 1);

export function replay(trace, keyNames, cache) {
  let hits = 0;
  for (let i = 0; i < trace.length; i++) {
    const key = keyNames[trace[i]];
    if (cache.get(key) !== undefined) hits++;
    else cache.set(key, VALUE);
  }
  return hits / trace.length;
}
