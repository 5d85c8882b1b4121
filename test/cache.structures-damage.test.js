// A damaged structure region (a stray write, pages lost in a machine crash)
// makes the objects that need its structures misses, never objects of
// another shape; the rest of the cache keeps working, and new objects are
// stored and read again.
import assert from 'node:assert/strict';
import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import test from 'node:test';
import { readHeader } from '../lib/arena/common/layout.js';
import { StructureRegion } from '../lib/arena/entries/structures.js';
import { nativeAvailable } from '../lib/native/addon.js';
import { SharedCache } from '../lib/index.js';
import { bindCodec, msgpackCodec } from '../lib/cache/codec.js';
import { arenaPath } from './helpers/arena-files.js';
import { readShapes, writeShapes } from './helpers/shapes.js';
import { MiB } from './helpers/units.js';

const skip = !nativeAvailable && 'native addon unavailable';

function flipByte(path, offset) {
  const fd = openSync(path, 'r+');
  const byte = Buffer.alloc(1);
  readSync(fd, byte, 0, 1, offset);
  byte[0] ^= 0x10;
  writeSync(fd, byte, 0, 1, offset);
  closeSync(fd);
}

function writeWord(path, offset, value) {
  const fd = openSync(path, 'r+');
  const word = Buffer.alloc(4);
  word.writeUInt32LE(value);
  writeSync(fd, word, 0, 4, offset);
  closeSync(fd);
}

/** A file-backed cache with objects of 100 shapes in it, closed; where its structure region is. */
function storedFile(t) {
  const path = arenaPath(t);
  const cache = SharedCache.open(path, { memoryBytes: 4 * MiB });
  writeShapes(cache, 'old', 0, 100);
  cache.set('text', 'a string needs no structures');
  const { structuresOffset } = readHeader(cache.handle.buffer);
  cache.close();
  return { path, structuresOffset };
}

const damages = [
  ['a key name in the first record', (offset) => offset + 64 + 24 + 6],
  ['the head', (offset) => offset],
  ['the first record\'s length', (offset) => offset + 64],
];

for (const [name, where] of damages) {
  test(`a file whose structure region has damage to ${name}: objects are misses, never other shapes; the cache works on`, { skip }, (t) => {
    const { path, structuresOffset } = storedFile(t);
    flipByte(path, where(structuresOffset));
    const cache = SharedCache.open(path);
    t.after(() => cache.close());
    assert.deepEqual(readShapes(cache, 'old', 0, 100), { ok: 0, missing: 100, wrong: 0 });
    assert.equal(cache.get('text'), 'a string needs no structures');
    // The region was emptied when the file was opened: it is sound and fills again.
    assert.deepEqual(cache.verify(), { ok: true, problems: [] });
    writeShapes(cache, 'new', 0, 100);
    assert.deepEqual(readShapes(SharedCache.attach(cache.handle), 'new', 0, 100), { ok: 100, missing: 0, wrong: 0 });
    // The old objects stay misses although their record ids name structures again.
    assert.deepEqual(readShapes(cache, 'old', 0, 100), { ok: 0, missing: 100, wrong: 0 });
  });
}

test('a file that lost its newest structure records: objects that need them are misses, also once new shapes take their ids', { skip }, (t) => {
  const path = arenaPath(t);
  const cache = SharedCache.open(path, { memoryBytes: 4 * MiB });
  writeShapes(cache, 'kept', 0, 50);
  const { structuresOffset, structuresBytes } = readHeader(cache.handle.buffer);
  const region = new StructureRegion(cache.handle.buffer, { structuresOffset, structuresBytes });
  region.refresh();
  const keptHead = region.head;
  writeShapes(cache, 'lost', 0, 50);
  cache.close();
  // As if the records after `keptHead` never reached the disk.
  writeWord(path, structuresOffset, keptHead);
  const reopened = SharedCache.open(path);
  t.after(() => reopened.close());
  assert.deepEqual(readShapes(reopened, 'kept', 0, 50), { ok: 50, missing: 0, wrong: 0 });
  assert.deepEqual(readShapes(reopened, 'lost', 0, 50), { ok: 0, missing: 50, wrong: 0 });
  writeShapes(reopened, 'taker', 0, 50);
  assert.deepEqual(readShapes(reopened, 'taker', 0, 50), { ok: 50, missing: 0, wrong: 0 });
  assert.deepEqual(readShapes(reopened, 'lost', 0, 50), { ok: 0, missing: 50, wrong: 0 });
});

test('damage while instances are attached: a new instance misses the objects that need the region, old ones keep what they read, verify() reports it', () => {
  const cache = new SharedCache({ memoryBytes: 4 * MiB });
  writeShapes(cache, 'before', 0, 100);
  const { structuresOffset } = readHeader(cache.handle.buffer);
  new Uint8Array(cache.handle.buffer)[structuresOffset + 64 + 24 + 6] ^= 0x10;
  const late = SharedCache.attach(cache.handle);
  assert.deepEqual(readShapes(late, 'before', 0, 100), { ok: 0, missing: 100, wrong: 0 });
  assert.deepEqual(readShapes(cache, 'before', 0, 100), { ok: 100, missing: 0, wrong: 0 });
  const { ok, problems } = late.verify();
  assert.equal(ok, false);
  assert.deepEqual(problems, ['codec structures: record at 64 fails its checksum']);
  // New objects from the late instance carry their own definitions: everyone reads them.
  writeShapes(late, 'after', 0, 100);
  assert.deepEqual(readShapes(cache, 'after', 0, 100), { ok: 100, missing: 0, wrong: 0 });
  assert.deepEqual(readShapes(late, 'after', 0, 100), { ok: 100, missing: 0, wrong: 0 });
});

test('a stored value too short to carry the structure prefix is a miss, not an error', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  const codec = bindCodec(msgpackCodec, cache.handle.buffer, readHeader(cache.handle.buffer));
  assert.equal(codec.decode(Buffer.from([0, 0, 1])), undefined);
  assert.deepEqual(codec.decode(codec.encode({ whole: true })), { whole: true });
});
