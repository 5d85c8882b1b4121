// CacheFS reads a file changed within its file system's timestamp
// granularity from the disk and does not cache it (the racily clean rule,
// lib/fs/racy.js). Tests that write fixtures and then count cache hits wait
// with untilCacheable() until the fixtures are old enough to be cached, as
// files of a real tree usually are.
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isRacy } from '../../lib/fs/racy.js';

function* entries(target) {
  yield target;
  if (statSync(target).isDirectory()) {
    for (const name of readdirSync(target)) yield* entries(path.join(target, name));
  }
}

/** Resolves once no file or directory at or below `paths` is too recently changed to be cached. */
export async function untilCacheable(...paths) {
  for (;;) {
    const now = Date.now();
    if (!paths.some((target) => [...entries(target)].some((entry) => isRacy(statSync(entry), now, 0)))) return;
    await sleep(10);
  }
}
