// options.mode of SharedCache.open() and BlockStore.open(): every mode a
// new file may be created with can be opened again, what open() would
// refuse is refused at creation, a mode that lets other users read the
// cache warns, and the umask does not change the mode.
import assert from 'node:assert/strict';
import { chmodSync, statSync } from 'node:fs';
import test from 'node:test';
import { nativeAvailable } from '../lib/native/addon.js';
import { BlockStore, SharedCache } from '../lib/index.js';
import { arenaPath } from './helpers/arena-files.js';
import { MiB } from './helpers/units.js';
import { warningsOf } from './helpers/warnings.js';

const skip = !nativeAvailable && 'native addon unavailable';
const OPENERS = [
  ['SharedCache', SharedCache],
  ['BlockStore', BlockStore],
];

for (const [name, Store] of OPENERS) {
  test(`${name}.open: every mode a new file is created with can be opened again, or is refused at creation`, { skip }, (t) => {
    const accepted = [];
    // Warnings are asserted here by their calls (and end up in no output).
    const warn = t.mock.method(process, 'emitWarning', () => {});
    // Every mode that lets the owner read and write (the rest are refused for that).
    for (let mode = 0o600; mode <= 0o777; mode++) {
      const path = arenaPath(t, `mode-${mode.toString(8)}`);
      let first;
      try {
        first = Store.open(path, { memoryBytes: MiB, mode });
      } catch (error) {
        assert.equal(error.name, 'RangeError', `0o${mode.toString(8)}: ${error.message}`);
        assert.ok(mode & 0o022, `0o${mode.toString(8)} is refused only when group or others may write`);
        assert.throws(() => statSync(path), { code: 'ENOENT' }, 'a refused mode creates no file');
        continue;
      }
      accepted.push(mode);
      assert.equal(statSync(path).mode & 0o777, mode);
      const warned = warn.mock.callCount();
      assert.equal(warned, accepted.filter((m) => m & 0o044).length, `0o${mode.toString(8)} warns only when group or others may read`);
      // While the first is open (attaching), and after every user closed it.
      Store.open(path).close();
      first.close();
      Store.open(path).close();
      assert.equal(warn.mock.callCount(), warned, 'reopening an existing file does not warn');
    }
    assert.equal(accepted.length, 32, 'owner rw(x), with any read and execute bits for group and others');
  });

  test(`${name}.open refuses a mode that lets group or others write, naming the option`, { skip }, (t) => {
    const path = arenaPath(t);
    for (const mode of [0o620, 0o602, 0o660, 0o666, 0o777]) {
      assert.throws(() => Store.open(path, { memoryBytes: MiB, mode }), {
        name: 'RangeError',
        message: `options.mode must not let group or others write to the arena file, which open() would then refuse (got 0o${mode.toString(8)}); use 0o600`,
      });
    }
    assert.throws(() => statSync(path), { code: 'ENOENT' });
  });
}

test('a mode that lets group or others read warns once, when the file is created', { skip }, async (t) => {
  const path = arenaPath(t);
  const created = await warningsOf(t, 'ARENACACHE_ARENA_READABLE', () => SharedCache.open(path, { memoryBytes: MiB, mode: 0o644 }).close());
  assert.equal(created.length, 1);
  assert.equal(created[0].name, 'Warning');
  assert.equal(
    created[0].message,
    `arena file ${path} was created with mode 0o644, which lets users other than its owner read what it caches; use mode 0o600 unless they must`,
  );
  const reopened = await warningsOf(t, 'ARENACACHE_ARENA_READABLE', () => SharedCache.open(path, { mode: 0o644 }).close());
  assert.equal(reopened.length, 0, 'an existing file is not created again');

  const blocks = arenaPath(t, 'blocks');
  const store = await warningsOf(t, 'ARENACACHE_ARENA_READABLE', () => BlockStore.open(blocks, { memoryBytes: MiB, mode: 0o640 }).close());
  assert.equal(store.length, 1);
  assert.match(store[0].message, /was created with mode 0o640, /);

  const owner = await warningsOf(t, 'ARENACACHE_ARENA_READABLE', () => {
    SharedCache.open(arenaPath(t, 'private'), { memoryBytes: MiB }).close();
    SharedCache.open(arenaPath(t, 'private-x'), { memoryBytes: MiB, mode: 0o711 }).close();
  });
  assert.equal(owner.length, 0, 'no warning when only the owner can read');
});

test('the file gets exactly options.mode whatever the umask', { skip }, (t) => {
  t.mock.method(process, 'emitWarning', () => {}); // 0o640's, asserted above
  const previous = process.umask(0o277);
  t.after(() => process.umask(previous));
  const path = arenaPath(t);
  SharedCache.open(path, { memoryBytes: MiB }).close();
  assert.equal(statSync(path).mode & 0o777, 0o600, 'a umask that clears the owner\'s write bit does not apply');
  process.umask(0o077);
  const grouped = arenaPath(t, 'group');
  SharedCache.open(grouped, { memoryBytes: MiB, mode: 0o640 }).close();
  assert.equal(statSync(grouped).mode & 0o777, 0o640, 'a umask that clears the group read bit does not apply');
});

test('an existing file keeps its mode: options.mode applies only to a new file', { skip }, (t) => {
  const path = arenaPath(t);
  SharedCache.open(path, { memoryBytes: MiB }).close();
  chmodSync(path, 0o640);
  SharedCache.open(path, { mode: 0o600 }).close();
  assert.equal(statSync(path).mode & 0o777, 0o640);
  SharedCache.open(path, { memoryBytes: MiB, reset: true, mode: 0o600 }).close();
  assert.equal(statSync(path).mode & 0o777, 0o640, 'a reset keeps the file, and its mode');
});
