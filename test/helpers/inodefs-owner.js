// A process that opens an InodeFS store (argv[2]) and keeps it open: it
// writes /owner, prints "open", and on a line "close" on stdin closes the
// store, prints "closed" and stays alive. With ARENACACHE_NATIVE=off it owns
// the store without the addon (no owner lock, only the owner record).
import { createInterface } from 'node:readline';
import { InodeFS } from '../../lib/meta/index.js';

const ifs = await InodeFS.open(process.argv[2]);
await ifs.writeFile('/owner', String(process.pid));
console.log('open');
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line !== 'close') return;
  ifs.close();
  console.log('closed');
});
setInterval(() => {}, 60_000);
