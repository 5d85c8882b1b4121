// Opening a file that is not a sound arena: every case is an ArenaCacheError
// with its own code and nothing is changed; { reset: true } recovers an
// arena (the file starts with the magic) and refuses any other file.
import assert from 'node:assert/strict';
import { closeSync, openSync, readFileSync, readSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import test from 'node:test';
import { headerFieldIndex } from '../lib/arena/common/layout.js';
import { nativeAvailable } from '../lib/native/addon.js';
import { SharedCache } from '../lib/index.js';
import { arenaPath, forgetCleanClose } from './helpers/arena-files.js';
import { MiB } from './helpers/units.js';

const skip = !nativeAvailable && 'native addon unavailable';
const RESET_HINT = 'open it with { reset: true } to replace it with a new arena';
const NOT_ARENA_ADVICE = 'open() never overwrites another kind of file: remove it or choose another path';

function makeArena(t) {
  const path = arenaPath(t);
  const cache = SharedCache.open(path, { memoryBytes: MiB });
  cache.set('k', 'v');
  cache.close();
  return path;
}

function writeAt(path, offset, bytes) {
  const fd = openSync(path, 'r+');
  writeSync(fd, bytes, 0, bytes.length, offset);
  closeSync(fd);
}

const cases = [
  {
    name: 'a file of another kind',
    damage: (path) => writeFileSync(path, Buffer.alloc(64 * 1024, 'not an arena, just text. '), { mode: 0o600 }),
    code: 'ERR_ARENA_NOT_ARENA',
    message: (path) => `arena file ${path} is not a SharedCache arena (it starts with 0x20746f6e, not the magic 0x434e5241); ${NOT_ARENA_ADVICE}`,
  },
  {
    name: 'a file too small for the magic',
    damage: (path) => writeFileSync(path, 'ok\n', { mode: 0o600 }),
    code: 'ERR_ARENA_NOT_ARENA',
    message: (path) => `arena file ${path} is not a SharedCache arena (its 3 bytes do not hold the magic 0x434e5241); ${NOT_ARENA_ADVICE}`,
  },
  {
    name: 'a small file of another kind (shorter than a header, without the magic)',
    damage: (path) => writeFileSync(path, Buffer.alloc(1000, 'text '), { mode: 0o600 }),
    code: 'ERR_ARENA_NOT_ARENA',
    message: (path) => `arena file ${path} is not a SharedCache arena (it starts with 0x74786574, not the magic 0x434e5241); ${NOT_ARENA_ADVICE}`,
  },
  {
    name: 'a file cut right after its magic',
    damage: (path) => truncateSync(path, 8),
    code: 'ERR_ARENA_TRUNCATED',
    message: (path) => `arena file ${path} is 8 bytes, too small for an arena header; ${RESET_HINT}`,
  },
  {
    name: 'a file cut inside its header',
    damage: (path) => truncateSync(path, 1000),
    code: 'ERR_ARENA_TRUNCATED',
    message: (path) => `arena file ${path} is 1000 bytes, too small for an arena header; ${RESET_HINT}`,
  },
  {
    name: 'a file cut short of its arena',
    damage: (path) => truncateSync(path, MiB / 2),
    code: 'ERR_ARENA_TRUNCATED',
    message: (path) => `arena file ${path}: arena is truncated: its header describes ${MiB} bytes but the buffer has ${MiB / 2}; ${RESET_HINT}`,
  },
  {
    // Version 2 is the layout before the codec structure region.
    name: 'the previous layout version',
    damage: (path) => writeAt(path, 4, Buffer.from([2, 0, 0, 0])),
    code: 'ERR_ARENA_VERSION',
    message: (path) => `arena file ${path}: arena layout version 2 is not supported; this arenacache reads versions 3 to 6; ${RESET_HINT}`,
  },
  {
    name: 'a damaged header field',
    damage: (path) => {
      const field = Buffer.alloc(8);
      field.writeDoubleLE(12345);
      writeAt(path, headerFieldIndex('shardCount') * 8, field);
    },
    code: 'ERR_ARENA_CORRUPT',
    message: (path) => `arena file ${path}: arena header checksum does not match: the header was overwritten or damaged; ${RESET_HINT}`,
  },
];

for (const { name, damage, code, message } of cases) {
  const arena = code !== 'ERR_ARENA_NOT_ARENA';
  test(`${name}: ${code}, the file untouched, and reset ${arena ? 'recovers' : 'is refused'}`, { skip }, (t) => {
    const path = makeArena(t);
    damage(path);
    const before = readFileSync(path);
    assert.throws(() => SharedCache.open(path), { name: 'ArenaCacheError', code, message: message(path) });
    assert.ok(readFileSync(path).equals(before), 'a failed open changes nothing');
    if (!arena) {
      assert.throws(() => SharedCache.open(path, { memoryBytes: MiB, reset: true }), { name: 'ArenaCacheError', code, message: message(path) });
      assert.ok(readFileSync(path).equals(before), 'a reset does not replace a file that is not an arena');
      return;
    }
    const cache = SharedCache.open(path, { memoryBytes: MiB, reset: true });
    assert.equal(cache.get('k'), undefined);
    cache.set('k', 'new');
    assert.equal(cache.get('k'), 'new');
    cache.close();
  });
}

for (const checksums of [true, false]) {
  const title = checksums
    ? 'a file whose dictionary was damaged opens, and the damaged shard is rebuilt from its checksummed records: nothing is lost'
    : 'a file without record checksums whose dictionary was damaged opens, and the damaged shard is reset';
  test(title, { skip }, (t) => {
    const path = arenaPath(t);
    const cache = SharedCache.open(path, { memoryBytes: 4 * MiB, shards: 4, checksums });
    for (let i = 0; i < 400; i++) cache.set(`key:${i}`, `value ${i}`);
    const shardData = cache.stats();
    cache.close();
    assert.equal(shardData.entries, 400);
    // Scribble over the dictionary of shard 0: slots now point at garbage.
    const fd = openSync(path, 'r+');
    const header = Buffer.alloc(4096);
    readSync(fd, header, 0, 4096, 0);
    const tablesOffset = header.readDoubleLE(headerFieldIndex('tablesOffset') * 8);
    writeSync(fd, Buffer.alloc(256, 0x5a), 0, 256, tablesOffset);
    closeSync(fd);
    forgetCleanClose(path);
    const reopened = SharedCache.open(path);
    const stats = reopened.stats();
    assert.equal(stats.shardRepairs, 1, 'exactly the damaged shard was repaired');
    if (checksums) {
      assert.equal(stats.entries, 400);
      assert.equal(stats.lostEntries, 0);
      for (let i = 0; i < 400; i++) assert.equal(reopened.get(`key:${i}`), `value ${i}`);
    } else {
      assert.ok(stats.entries >= 250 && stats.entries < 400, `the other shards kept their entries (${stats.entries})`);
    }
    assert.deepEqual(reopened.verify(), { ok: true, problems: [] });
    reopened.close();
  });
}
