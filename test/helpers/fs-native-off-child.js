// Run with ARENACACHE_NATIVE=off: CacheFS reads files through node:fs/promises.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { nativeAvailable } from '../../lib/native.js';
import { SharedCache } from '../../lib/index.js';
import { CacheFS } from '../../lib/fs/index.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'arenacache-native-off-'));
try {
  writeFileSync(path.join(root, 'f'), 'from disk');
  const cfs = new CacheFS({ root, cache: new SharedCache({ memoryBytes: 2 ** 20 }) });
  const text = await cfs.readFile('f', 'utf8');
  const again = await cfs.readFile('f', 'utf8');
  const missing = await cfs.readFile('none').catch((error) => error.code);
  const { readMisses, readHits } = cfs.stats();
  await cfs.close();
  console.log(JSON.stringify({ nativeAvailable, text, again, missing, readMisses, readHits }));
} finally {
  rmSync(root, { recursive: true, force: true });
}
