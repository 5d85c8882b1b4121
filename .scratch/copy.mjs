import { ValuePool } from '/work/main/lib/arena/value-pool.js';
const FB = Buffer[Symbol.species];
const len = +process.env.LEN || 64;
const words = new Int32Array((len + 3) >> 2); const bytes = new Uint8Array(words.buffer);
for (let i = 0; i < len; i++) bytes[i] = i;
const pool = new ValuePool();
const variants = {
  pool: () => pool.copy(words, bytes, 0, len),
  heapSet: () => { const o = new FB(len); o.set(bytes); return o; },
  heapLoop: () => { const o = new FB(len); for (let i = 0; i < len; i++) o[i] = bytes[i]; return o; },
  allocUnsafe: () => { const o = Buffer.allocUnsafe(len); o.set(bytes); return o; },
  bufferFrom: () => Buffer.from(bytes),
  u8view: (() => { const ab = new ArrayBuffer(65536); let off = 0; return () => { off = (off + 64) & 65535; return new Uint8Array(ab, off, len); }; })(),
  fbview: (() => { const ab = new ArrayBuffer(65536); let off = 0; return () => { off = (off + 64) & 65535; return new FB(ab, off, len); }; })(),
  setproto: (() => { const ab = new ArrayBuffer(65536); let off = 0; return () => { off = (off + 64) & 65535; return Object.setPrototypeOf(new Uint8Array(ab, off, len), Buffer.prototype); }; })(),
};
let sink = 0;
for (let round = 0; round < 3; round++) for (const [name, f] of Object.entries(variants)) {
  const t = performance.now(); let n = 0;
  while (performance.now() - t < 200) { for (let i = 0; i < 10000; i++) sink += f().length; n += 10000; }
  if (round === 2) console.log(name, (n / (performance.now() - t) / 1e3).toFixed(1) + 'M/s');
}
