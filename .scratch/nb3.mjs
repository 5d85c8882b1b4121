import { SharedCache } from '/work/main/lib/index.js';
const N = 1000;
const keys = Array.from({ length: N }, (_, i) => 'key:' + i);
const order = Array.from({ length: 1 << 16 }, () => keys[(Math.random() * N) | 0]);
const a = new SharedCache({ memoryBytes: 64 << 20, nearCache: 10000 });
for (let i = 0; i < N; i++) a.set(keys[i], Buffer.alloc(64, i));
for (let i = 0; i < N; i++) { a.get(keys[i]); a.get(keys[i]); }
function runA() {
  let x = 0; const t = performance.now(); let n = 0;
  while (performance.now() - t < 300) { for (let i = 0; i < order.length; i++) { if (a.get(order[i]) !== undefined) x++; } n += order.length; }
  return n / (performance.now() - t) * 1000;
}
for (let r = 0; r < 4; r++) console.log((runA() / 1e6).toFixed(2));
