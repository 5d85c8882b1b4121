import { SharedCache } from '/work/main/lib/index.js';
import { LRUCache } from 'lru-cache';
const N = 20000;
const keys = Array.from({ length: N }, (_, i) => 'key:' + i);
const order = Array.from({ length: 1 << 16 }, () => keys[(Math.random() * N) | 0]);
const vals = Array.from({ length: 256 }, (_, i) => Buffer.alloc(64, i));
const a = new SharedCache({ memoryBytes: 64 << 20, nearCache: 0 });
const l = new LRUCache({ max: N });
for (let i = 0; i < N; i++) { a.set(keys[i], vals[i & 255]); l.set(keys[i], vals[i & 255]); }
function run(c) {
  const t = performance.now(); let n = 0;
  while (performance.now() - t < 300) { for (let i = 0; i < order.length; i++) c.set(order[i], vals[i & 255]); n += order.length; }
  return n / (performance.now() - t) * 1000;
}
const only = process.env.ONLY;
for (let r = 0; r < 3; r++) { const ra = run(a); const rl = only ? 1 : run(l); console.log('arena', (ra / 1e6).toFixed(2), 'lru', (rl / 1e6).toFixed(2), 'ratio', (ra / rl).toFixed(2)); }
