// Run with --expose-gc: snapshots dropped without release() are released
// when collected (their reader slots come back) and warned about.
import { once } from 'node:events';
import { InodeFS } from '../../lib/meta/index.js';

const ifs = await InodeFS.open(process.argv[2], { maxReaders: 4 });
const warned = once(process, 'warning');
async function leak() {
  for (let i = 0; i < 3; i++) {
    ifs.createSnapshot('leaked');
    await ifs.writeFile('/f', String(i)); // a new state, so each snapshot takes a slot
  }
}
await leak();
let warning;
for (let i = 0; i < 50 && warning === undefined; i++) {
  global.gc();
  await new Promise((resolve) => setTimeout(resolve, 10));
  warning = await Promise.race([warned, new Promise((resolve) => setTimeout(resolve, 10, undefined))]);
}
// With the slots back, more snapshots than maxReaders fit over time.
let slotsFreed = true;
try {
  for (let i = 0; i < 3; i++) {
    ifs.createSnapshot('after').release();
  }
} catch {
  slotsFreed = false;
}
await ifs.close();
console.log(JSON.stringify({ warning: warning && { code: warning[0].code, message: warning[0].message }, slotsFreed }));
