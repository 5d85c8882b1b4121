import { SharedCache } from '/work/main/lib/index.js';
import { LRUCache } from 'lru-cache';
const N = +process.env.N || 1000, near = +process.env.NEAR || 10000;
const kind = process.env.KIND || 'buf';
const val = (i) => kind === 'buf' ? Buffer.alloc(64, i) : kind === 'str' ? 'x'.repeat(4096) + i : { id: i, name: 'name' + i, email: `u${i}@example.com`, roles: ['admin', 'user'], active: true, score: i * 1.5 };
const keys = Array.from({ length: N }, (_, i) => 'key:' + i);
const order = Array.from({ length: 1 << 16 }, () => keys[(Math.random() * N) | 0]);
const a = new SharedCache({ memoryBytes: 64 << 20, nearCache: 0 });
const b = SharedCache.attach(a.handle, { nearCache: near });
const l = new LRUCache({ max: N });
for (let i = 0; i < N; i++) { a.set(keys[i], val(i)); l.set(keys[i], val(i)); }
function run(name, c) {
  let x = 0; const t = performance.now(); let n = 0;
  while (performance.now() - t < 500) { for (let i = 0; i < order.length; i++) { if (c.get(order[i]) !== undefined) x++; } n += order.length; }
  const rate = n / (performance.now() - t) * 1000; console.log(name, (rate / 1e6).toFixed(2) + 'M/s'); return rate;
}
for (let r = 0; r < 2; r++) { const ra = run('arena', a), rb = run('near', b), rl = run('lru', l); console.log('near/lru', (rb / rl).toFixed(2), 'arena/lru', (ra / rl).toFixed(2)); }
console.log(b.stats().nearHits, b.stats().hits);
