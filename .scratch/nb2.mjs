import { SharedCache } from '/work/main/lib/index.js';
import { LRUCache } from 'lru-cache';
const N = 1000;
const kind = process.env.KIND || 'str';
const val = (i) => kind === 'buf' ? Buffer.alloc(64, i) : kind === 'str' ? 'x'.repeat(4096) + i : { id: i };
const keys = Array.from({ length: N }, (_, i) => 'key:' + i);
const order = Array.from({ length: 1 << 16 }, () => keys[(Math.random() * N) | 0]);
const a = new SharedCache({ memoryBytes: 64 << 20, nearCache: 10000 });
const l = new LRUCache({ max: N });
const m = new Map();
for (let i = 0; i < N; i++) { a.set(keys[i], val(i)); l.set(keys[i], val(i)); m.set(keys[i], val(i)); }
for (let i = 0; i < N; i++) { a.get(keys[i]); a.get(keys[i]); }
function run(c) {
  let x = 0; const t = performance.now(); let n = 0;
  while (performance.now() - t < 300) { for (let i = 0; i < order.length; i++) { if (c.get(order[i]) !== undefined) x++; } n += order.length; }
  return n / (performance.now() - t) * 1000;
}
const res = { near: [], lru: [], map: [] };
for (let r = 0; r < 5; r++) { res.near.push(run(a)); res.lru.push(run(l)); res.map.push(run(m)); }
const med = (xs) => xs.sort((p, q) => p - q)[2];
console.log(kind, 'near', (med(res.near) / 1e6).toFixed(2), 'lru', (med(res.lru) / 1e6).toFixed(2), 'map', (med(res.map)/1e6).toFixed(2), 'near/lru', (med(res.near) / med(res.lru)).toFixed(2));
