// An InodeFS store holds file contents and metadata: its files (the lmdb
// file and its lock file) are created 0o600 whatever the umask (or exactly
// options.mode), a mode that lets others write is refused and one that
// lets them read warns, as for arena files. An existing store others can
// write to, or another user's, is refused, and neither file is followed
// through a symbolic link an attacker may have put at its path.
import assert from 'node:assert/strict';
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import test from 'node:test';
import { InodeFS } from '../lib/inode-fs/index.js';
import { checkSameFiles, prepareStoreFiles } from '../lib/inode-fs/store-files.js';
import { tempDir } from './helpers/fs-tree.js';
import { warningsOf } from './helpers/warnings.js';

const isRoot = process.geteuid?.() === 0;

/** The permission bits of `file`, not following a link. */
const modeOf = (file) => lstatSync(file).mode & 0o777;

/** Opens and closes the store at `file`. */
async function openClose(file, options) {
  (await InodeFS.open(file, options)).close();
}

test('a new store and its lock file are created 0o600, whatever the umask', async (t) => {
  const dir = tempDir(t, 'store-mode');
  const previous = process.umask();
  t.after(() => process.umask(previous));
  // 0: lmdb's own 0o664 would stay group-writable; 0o277 clears the owner's write bit.
  for (const umask of [0, 0o022, 0o277]) {
    process.umask(umask);
    const file = `${dir}/fs-${umask.toString(8)}.lmdb`;
    const ifs = await InodeFS.open(file);
    await ifs.writeFile('/secret', 'contents');
    assert.equal(modeOf(file), 0o600, `store with umask 0o${umask.toString(8)}`);
    assert.equal(modeOf(`${file}-lock`), 0o600, `lock file with umask 0o${umask.toString(8)}`);
    ifs.close();
  }
  process.umask(previous);
  const ifs = await InodeFS.open(`${dir}/fs-0.lmdb`);
  t.after(() => ifs.close());
  assert.equal(await ifs.readFile('/secret', 'utf8'), 'contents', 'a store created so opens again');
});

test('options.mode sets both files\' mode exactly; one that lets others read warns once, at creation', async (t) => {
  const dir = tempDir(t, 'store-mode');
  const previous = process.umask(0o077);
  t.after(() => process.umask(previous));
  const file = `${dir}/fs.lmdb`;
  const created = await warningsOf(t, 'ARENACACHE_INODEFS_READABLE', () => openClose(file, { mode: 0o640 }));
  assert.equal(modeOf(file), 0o640, 'the umask does not apply');
  assert.equal(modeOf(`${file}-lock`), 0o640);
  assert.equal(created.length, 1);
  assert.equal(created[0].name, 'Warning');
  assert.equal(
    created[0].message,
    `InodeFS store ${file} was created with mode 0o640, which lets users other than its owner read the files and metadata it holds; use mode 0o600 unless they must`,
  );
  const reopened = await warningsOf(t, 'ARENACACHE_INODEFS_READABLE', () => openClose(file, { mode: 0o640 }));
  assert.equal(reopened.length, 0, 'an existing store is not created again');
  // An existing store keeps its mode: options.mode is for new files.
  await openClose(file);
  assert.equal(modeOf(file), 0o640);
  const quiet = await warningsOf(t, 'ARENACACHE_INODEFS_READABLE', () => openClose(`${dir}/private.lmdb`, { mode: 0o700 }));
  assert.equal(quiet.length, 0, 'no warning when only the owner can read');
});

test('a mode others could write with is a RangeError naming the option, and creates nothing', async (t) => {
  const file = `${tempDir(t, 'store-mode')}/fs.lmdb`;
  for (const mode of [0o620, 0o602, 0o660, 0o666, 0o777]) {
    await assert.rejects(InodeFS.open(file, { mode }), {
      name: 'RangeError',
      message: `options.mode must not let group or others write to the store files, which open() would then refuse (got 0o${mode.toString(8)}); use 0o600`,
    });
  }
  await assert.rejects(InodeFS.open(file, { mode: 0o400 }), { name: 'RangeError', message: 'options.mode must let the owner read and write (0o600 or wider) (got 0o400)' });
  await assert.rejects(InodeFS.open(file, { mode: 0o1600 }), { name: 'RangeError', message: 'options.mode must be a file mode from 0 to 0o777, such as 0o600 (got 896)' });
  await assert.rejects(InodeFS.open(file, { mode: '600' }), { name: 'TypeError', message: 'options.mode must be a number (got "600")' });
  assert.equal(existsSync(file), false);
  assert.equal(existsSync(`${file}-lock`), false);
});

test('a symbolic link at the store path or its lock file is refused, and nothing is created or written through it', async (t) => {
  const dir = tempDir(t, 'store-link');
  const elsewhere = tempDir(t, 'store-elsewhere');
  // Planted before the store is first opened: the store would land where the link leads.
  const file = `${dir}/fs.lmdb`;
  symlinkSync(`${elsewhere}/stolen.lmdb`, file);
  await assert.rejects(InodeFS.open(file), {
    name: 'ArenaCacheError',
    code: 'ERR_INODEFS_STORE',
    message: `${file} cannot be opened as an InodeFS store: it is a symbolic link; store files are opened without following links`,
  });
  assert.equal(existsSync(`${elsewhere}/stolen.lmdb`), false);
  assert.equal(existsSync(`${file}-lock`), false, 'nothing is created when the store is refused');

  // A link to a real store is refused too: the link is never followed.
  const real = `${elsewhere}/real.lmdb`;
  await openClose(real);
  const linked = `${dir}/linked.lmdb`;
  symlinkSync(real, linked);
  await assert.rejects(InodeFS.open(linked), { code: 'ERR_INODEFS_STORE', message: `${linked} cannot be opened as an InodeFS store: it is a symbolic link; store files are opened without following links` });

  // The lock file planted as a link to a file of the victim's: lmdb would size and write it.
  const victim = `${elsewhere}/precious.txt`;
  writeFileSync(victim, 'precious');
  const store = `${dir}/store.lmdb`;
  symlinkSync(victim, `${store}-lock`);
  await assert.rejects(InodeFS.open(store), {
    code: 'ERR_INODEFS_STORE',
    message: `${store} cannot be opened as an InodeFS store: its lock file ${store}-lock is a symbolic link; store files are opened without following links`,
  });
  assert.equal(readFileSync(victim, 'utf8'), 'precious');
  assert.equal(existsSync(store), false);

  mkdirSync(`${dir}/directory.lmdb`);
  await assert.rejects(InodeFS.open(`${dir}/directory.lmdb`), {
    code: 'ERR_INODEFS_STORE',
    message: `${dir}/directory.lmdb cannot be opened as an InodeFS store: it is not a regular file`,
  });
});

test('an existing store others can write to, or another user\'s, is refused', async (t) => {
  const file = `${tempDir(t, 'store-perm')}/fs.lmdb`;
  const ifs = await InodeFS.open(file);
  await ifs.writeFile('/f', 'kept');
  ifs.close();
  for (const mode of [0o666, 0o620, 0o602]) {
    chmodSync(file, mode);
    await assert.rejects(InodeFS.open(file), {
      name: 'ArenaCacheError',
      code: 'ERR_INODEFS_PERMISSIONS',
      message: `InodeFS store file ${file} has mode 0${mode.toString(8)}, which lets other users write to it; chmod it to 600`,
    });
  }
  chmodSync(file, 0o600);
  chmodSync(`${file}-lock`, 0o666);
  await assert.rejects(InodeFS.open(file), {
    code: 'ERR_INODEFS_PERMISSIONS',
    message: `InodeFS store file ${file}-lock has mode 0666, which lets other users write to it; chmod it to 600`,
  });
  chmodSync(`${file}-lock`, 0o644);
  if (isRoot) {
    chownSync(file, 12345, 12345);
    await assert.rejects(InodeFS.open(file), {
      code: 'ERR_INODEFS_PERMISSIONS',
      message: `InodeFS store file ${file} belongs to user 12345, not to this process's user 0; another user could change what this process reads`,
    });
    chownSync(file, 0, 0);
  }
  // Readable by others is accepted (it warns only at creation), and the store is as it was.
  const again = await InodeFS.open(file);
  t.after(() => again.close());
  assert.equal(await again.readFile('/f', 'utf8'), 'kept');
  assert.equal(statSync(file).mode & 0o777, 0o600);
});

test('a store file replaced while lmdb opens it is refused; one that cannot be examined or created says why', async (t) => {
  const dir = tempDir(t, 'store-swap');
  const file = `${dir}/fs.lmdb`;
  // What InodeFS.open does around lmdb's open (by path), with the lock file swapped in between.
  const { identities, created } = prepareStoreFiles(file, 0o600);
  assert.equal(created, true);
  checkSameFiles(file, identities);
  writeFileSync(`${dir}/other`, '');
  renameSync(`${dir}/other`, `${file}-lock`);
  assert.throws(() => checkSameFiles(file, identities), {
    code: 'ERR_INODEFS_STORE',
    message: `${file} cannot be opened as an InodeFS store: its lock file ${file}-lock was replaced while it was being opened; open it again`,
  });
  rmSync(file);
  assert.throws(() => checkSameFiles(file, identities), { message: `${file} cannot be opened as an InodeFS store: it was replaced while it was being opened; open it again` });

  const underFile = `${dir}/other-file/fs.lmdb`;
  writeFileSync(`${dir}/other-file`, '');
  await assert.rejects(InodeFS.open(underFile), {
    code: 'ERR_INODEFS_STORE',
    message: `${underFile} cannot be opened as an InodeFS store: it cannot be examined (ENOTDIR: not a directory, lstat '${underFile}')`,
  });
  const missingDir = `${dir}/missing/fs.lmdb`;
  await assert.rejects(InodeFS.open(missingDir), {
    code: 'ERR_INODEFS_STORE',
    message: `${missingDir} cannot be opened as an InodeFS store: it cannot be created (ENOENT: no such file or directory, open '${missingDir}')`,
  });
});
