// The scenarios of the CacheFS benchmark: hits, real misses, writes,
// sequential and random reads, eviction and small files. Each has files to create and an operation list that one
// measured call runs through (so timer overhead does not count).

import { seededRandom } from '../../test/helpers/seeded-random.js';

export function makeData(size, seed) {
  const data = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i++) data[i] = (i * 31 + seed) & 0xff;
  return data;
}

function files(count, size, prefix = 'f') {
  return Array.from({ length: count }, (_, i) => ({ path: `${prefix}${i}.bin`, data: makeData(size, i) }));
}

function randomOrder(count, length, seed) {
  const random = seededRandom(seed);
  return Array.from({ length }, () => random.int(count));
}

/** name -> { files, ops: [{ op: 'read' | 'write', index }], maxFiles?, note } */
export const SCENARIOS = Object.freeze({
  ReadHit: { files: files(1, 1024), ops: Array.from({ length: 100 }, () => ({ op: 'read', index: 0 })), note: '1 file of 1 KB read again and again' },
  ReadMiss: {
    files: files(1000, 1024),
    ops: Array.from({ length: 1000 }, (_, i) => ({ op: 'read', index: i })),
    maxFiles: 100,
    note: '1000 files of 1 KB in a loop through a cache of 100 files: real misses',
  },
  WriteThrough: { files: files(1, 1024), ops: Array.from({ length: 100 }, () => ({ op: 'write', index: 0 })), note: '1 KB writes to one file' },
  SequentialReads: { files: files(100, 4096), ops: Array.from({ length: 100 }, (_, i) => ({ op: 'read', index: i })), note: '100 files of 4 KB in order' },
  RandomAccess: {
    files: files(100, 2048),
    ops: [...randomOrder(100, 100, 7), ...Array.from({ length: 100 }, (_, i) => (i * 17) % 100)].map((index) => ({ op: 'read', index })),
    note: '100 files of 2 KB, at random and with a stride of 17',
  },
  EvictionLRU: {
    files: files(200, 1024),
    ops: Array.from({ length: 200 }, (_, i) => ({ op: 'read', index: i })),
    maxFiles: 100,
    note: '200 files of 1 KB through a cache of 100 KiB (100 files)',
  },
  SmallFiles: { files: files(500, 256), ops: Array.from({ length: 500 }, (_, i) => ({ op: 'read', index: i })), note: '500 files of 256 B' },
});
