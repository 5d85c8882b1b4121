// A child process that writes to an InodeFS store as fast as it can until
// it is killed: files whose last 32 bytes are the SHA-256 of the rest,
// renames, removals, directories, and persistent snapshots made and deleted.
// argv: <store path> <seed>
import { createHash } from 'node:crypto';
import { InodeFS } from '../../lib/meta/index.js';
import { seededRandom } from './random.js';

const [file, seed] = process.argv.slice(2);
const random = seededRandom(Number(seed));
const ifs = await InodeFS.open(file, { inlineBytes: 512, chunkBytes: 4096 });

function body() {
  const payload = Buffer.alloc(random() < 0.5 ? 4 + random.int(400) : 4096 + random.int(20_000), random.int(256));
  payload.writeUInt32LE(random.int(2 ** 32), 0);
  return Buffer.concat([payload, createHash('sha256').update(payload).digest()]);
}

const dirs = ['/', '/d0', '/d1', '/d0/e'];
const name = () => `${random.pick(dirs)}/f${random.int(8)}`.replace('//', '/');
process.stdout.write('ready\n');
for (let step = 0; ; step++) {
  const op = random.int(100);
  try {
    if (op < 50) await ifs.writeFile(name(), body());
    else if (op < 60) await ifs.rename(name(), name());
    else if (op < 68) await ifs.rm(name(), { force: true });
    else if (op < 76) await ifs.mkdir(random.pick(dirs.slice(1)), { recursive: true });
    else if (op < 80) await ifs.rm(random.pick(dirs.slice(1)), { recursive: true, force: true });
    else if (op < 88) {
      const handle = await ifs.open(name(), 'w');
      await handle.write(body());
      await handle.close();
    } else if (op < 94) {
      ifs.createSnapshot(`s${process.pid}-${step}`, { persist: true });
    } else {
      const snapshots = ifs.listSnapshots();
      if (snapshots.length > 0) await ifs.deleteSnapshot(random.pick(snapshots).name);
    }
  } catch (error) {
    // A parent directory removed a moment ago, a name that is a directory: expected, keep going.
    if (!['ENOENT', 'EISDIR', 'ENOTDIR', 'EEXIST', 'ENOTEMPTY', 'EINVAL'].includes(error.code)) throw error;
  }
}
