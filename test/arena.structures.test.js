// The codec structure region on its own: append-only records that every
// instance on the buffer reads in the same order; an appender that stops
// between reserving and publishing (a terminated worker, a killed process)
// or publishes late leaves nothing half-written behind; a damaged region is
// refused, never read as other structures.
import assert from 'node:assert/strict';
import test from 'node:test';
import { readHeader } from '../lib/arena/common/layout.js';
import { APPENDED, DAMAGED, FULL, MAX_STRUCTURES, recordChecksum, STALE, STRUCTURES_HEADER_BYTES, StructureRegion, structureProblems } from '../lib/arena/entries/structures.js';
import { SharedCache } from '../lib/index.js';
import { MiB } from './helpers/units.js';

/** Two views of the structure region of a new 1 MiB arena (16 KiB region), as two threads would have. */
function regions(memoryBytes = MiB) {
  const { buffer } = new SharedCache({ memoryBytes }).handle;
  const header = readHeader(buffer);
  return { buffer, header, a: new StructureRegion(buffer, header), b: new StructureRegion(buffer, header) };
}

const words = ({ buffer, header }) => new Int32Array(buffer, header.structuresOffset, STRUCTURES_HEADER_BYTES / 4);

test('structures appended by one instance are read by another in the same order, with the same hashes', () => {
  const { a, b } = regions();
  assert.equal(a.append([['id', 'name'], ['x']]), APPENDED);
  assert.equal(b.append([['é', '日本']]), STALE, 'b has not read a\'s record: the ids it would give are taken');
  assert.equal(b.refresh(), true);
  assert.equal(b.append([['é', '日本']]), APPENDED);
  assert.equal(a.refresh(), true);
  assert.deepEqual(a.structures, [['id', 'name'], ['x'], ['é', '日本']]);
  assert.deepEqual(b.structures, a.structures);
  assert.deepEqual(b.hashes, a.hashes);
  assert.equal(new Set(a.hashes).size, 4, 'each prefix of the list has its own hash');
  const fresh = new StructureRegion(a.u8.buffer, readHeader(a.u8.buffer));
  assert.equal(fresh.refresh(), true);
  assert.deepEqual(fresh.hashes, a.hashes);
});

test('an appender that stopped after reserving (a record written in part or not at all) is never read, and others append past it', () => {
  const setup = regions();
  const { a, b } = setup;
  assert.equal(a.append([['first']]), APPENDED);
  // What a worker terminated between reserve and publish leaves: `used`
  // moved on, part of a record written, `head` unchanged.
  const w = words(setup);
  const used = Atomics.add(w, 1, 64);
  a.u8.fill(0xab, STRUCTURES_HEADER_BYTES + used, STRUCTURES_HEADER_BYTES + used + 40);
  assert.equal(b.refresh(), true);
  assert.deepEqual(b.structures, [['first']]);
  assert.equal(b.append([['second']]), APPENDED);
  assert.equal(a.append([['third']]), STALE);
  assert.equal(a.refresh(), true);
  assert.deepEqual(a.structures, [['first'], ['second']]);
  assert.deepEqual(structureProblems(setup.buffer, setup.header), []);
});

test('an appender that publishes after another did loses (STALE): its record is never read, and it appends again after refreshing', () => {
  const { a, b } = regions();
  const late = a.write([['late']]);
  assert.equal(typeof late, 'object');
  assert.equal(b.append([['early']]), APPENDED);
  assert.equal(a.publish(late), STALE);
  assert.deepEqual(a.structures, [], 'nothing taken from the lost record');
  assert.equal(a.refresh(), true);
  assert.equal(a.append([['late']]), APPENDED);
  assert.equal(b.refresh(), true);
  assert.deepEqual(b.structures, [['early'], ['late']]);
});

test('appends that do not fit are FULL and leave the region as it was', () => {
  const { a, b } = regions();
  const big = Array.from({ length: 100 }, (_, i) => `key-${'k'.repeat(100)}-${i}`);
  let appended = 0;
  for (;;) {
    const outcome = a.append([big]);
    if (outcome === FULL) break;
    assert.equal(outcome, APPENDED);
    appended++;
  }
  assert.ok(appended > 0 && a.full);
  assert.equal(a.canShare(['small']), false, 'a full region offers nothing more');
  assert.equal(b.refresh(), true);
  assert.equal(b.count, appended);
  assert.equal(b.append([['small']]), APPENDED, 'another instance may still fit a small one');
  assert.ok(MAX_STRUCTURES >= 8160);
});

test('canShare refuses what looks like a map rather than a record, and structures too large to share', () => {
  const { a } = regions();
  assert.equal(a.canShare(['id', 'name']), true);
  assert.equal(a.canShare([]), false);
  assert.equal(a.canShare(['0', '1', 'x']), false, 'array-index keys: an object used as a map');
  assert.equal(a.canShare(['17']), false);
  assert.equal(a.canShare(['07', 'x']), true, 'not a canonical index');
  assert.equal(a.canShare(['k'.repeat(3000)]), false);
});

/** Changes the record at `at` with `change(u8, u32, w)` and gives it a valid checksum again: damage that only the other checks can find. */
function forge(region, at, change) {
  change(region.u8, region.u32, at >>> 2);
  region.u32[(at >>> 2) + 4] = recordChecksum(region.u8, at, region.u32[at >>> 2]);
}

// Each case damages the region after two records, at 64 (2 structures) and
// at 104 (1 structure), and names the problem a new reader reports.
const damages = [
  ['a key name', (r) => (r.u8[64 + 24 + 4] ^= 1), 'record at 64 fails its checksum'],
  ['the record length', (r) => (r.u8[64] ^= 8), 'record at 64 fails its checksum'],
  ['the checksum', (r) => (r.u8[64 + 16] ^= 0x80), 'record at 64 fails its checksum'],
  ['the first structure index', (r) => (r.u8[104 + 8] ^= 1), 'record at 104 starts at structure 0, expected 1'],
  ['the predecessor (out of place)', (r) => (r.u8[104 + 4] ^= 8), 'record at 72 has a length of 0'],
  ['the predecessor (not before it)', (r) => (r.u32[104 / 4 + 1] = 104), 'record at 104 names record 104 as its predecessor'],
  ['the head (unaligned)', (r) => (r.u32[0] = 12), 'record offset 12 is out of place'],
  ['the head (past the end)', (r) => (r.u32[0] = r.bytes), `record offset ${16 * 1024} is out of place`],
  ['a forged length overlapping the next record', (r) => forge(r, 64, (u8, u32, w) => (u32[w] = 48)), 'record at 104 overlaps the record before it'],
  ['a forged count of 0', (r) => forge(r, 64, (u8, u32, w) => (u32[w + 3] = 0)), 'record at 64 holds 0 structures in 15 bytes'],
  ['a forged key length past the payload', (r) => forge(r, 64, (u8) => (u8[64 + 24 + 2] = 200)), 'record at 64 has a malformed structure'],
  ['a forged payload with bytes left over', (r) => forge(r, 64, (u8, u32, w) => (u32[w + 5] = 16)), 'record at 64 has bytes after its structures (1)'],
  ['a forged payload longer than its record', (r) => forge(r, 64, (u8, u32, w) => (u32[w + 5] = 17)), 'record at 64 holds 1 structures in 17 bytes'],
];

for (const [name, damage, problem] of damages) {
  test(`damage to ${name} makes a new reader refuse the region (${problem}); a reader that read it before keeps what it read`, () => {
    const setup = regions();
    const { a, buffer, header } = setup;
    assert.equal(a.append([['alpha', 'beta']]), APPENDED);
    assert.equal(a.append([['gamma']]), APPENDED);
    assert.equal(a.head, 104);
    damage(a);
    const fresh = new StructureRegion(buffer, header);
    assert.equal(fresh.refresh(), false);
    assert.equal(fresh.damaged, problem);
    assert.deepEqual(fresh.structures, [], 'nothing taken from a damaged chain');
    assert.equal(fresh.append([['delta']]), DAMAGED);
    assert.equal(fresh.canShare(['delta']), false);
    assert.deepEqual(structureProblems(buffer, header), [`codec structures: ${problem}`]);
    assert.deepEqual(a.structures, [['alpha', 'beta'], ['gamma']]);
  });
}

test('a head moved back before the newest record an instance read is damage to that instance', () => {
  const setup = regions();
  const { a, b } = setup;
  assert.equal(a.append([['one']]), APPENDED);
  const first = a.head;
  assert.equal(a.append([['two']]), APPENDED);
  assert.equal(b.refresh(), true);
  Atomics.store(words(setup), 0, first);
  assert.equal(a.refresh(), false);
  assert.equal(a.damaged, `record at ${first} precedes the newest record read (${b.head})`);
  assert.deepEqual(a.structures, [['one'], ['two']]);
});

test('a damaged `used` word stops appends instead of writing over published records', () => {
  const setup = regions();
  const { a, b } = setup;
  assert.equal(a.append([['one']]), APPENDED);
  Atomics.store(words(setup), 1, 0);
  assert.equal(b.refresh(), true);
  assert.equal(b.append([['two']]), DAMAGED);
  assert.equal(b.damaged, `the space in use (0 bytes) does not reach past the newest record (which ends at ${a.headEnd})`);
  assert.deepEqual(structureProblems(setup.buffer, setup.header), [
    `codec structures: the space in use (0 bytes) does not agree with the records (which end at ${a.headEnd} of ${a.bytes})`,
  ]);
  assert.equal(new StructureRegion(setup.buffer, setup.header).refresh(), true, 'the records themselves are still sound');
});

test('the region takes 1/64 of memoryBytes, between 16 and 256 KiB', () => {
  const size = (memoryBytes) => readHeader(new SharedCache({ memoryBytes }).handle.buffer).structuresBytes;
  assert.equal(size(MiB), 16 * 1024);
  assert.equal(size(4 * MiB), 64 * 1024);
  assert.equal(size(16 * MiB), 256 * 1024);
  assert.equal(size(64 * MiB), 256 * 1024);
});
