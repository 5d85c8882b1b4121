// Taking a snapshot: scan the worktree, reuse the parent's hash and stored
// bytes for every file whose identity (dev, ino, size, mtime, ctime) is
// unchanged, store the rest (small files into one pack, large ones cloned
// into objects by content), then commit the manifest and, last, the
// descriptor. An intent record comes first, so a snapshot cut short is
// never listed and the next open removes what it left.
import { createHash } from 'node:crypto';
import { copyFileSync, linkSync, lstatSync, lutimesSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { renameNoReplace } from '../native/dir-exchange.js';
import { FLAG_UNSTABLE, JOB_CLONE, JOB_HASH, JOB_PACK } from '../native/file-jobs.js';
import { syncFilesystem } from '../native/fs-sync.js';
import { checkNames, chooseEngine, EngineTally, failureOf, hashOf, ioError, JobList, scanTree } from './engine.js';
import { META_NAME, syncDirectory, writeJson } from './repository-layout.js';
import { MANIFEST_FORMAT, payloadChecksum, statKey } from './manifest.js';
import { newSnapshotId } from './names.js';
import { DESCRIPTOR_FORMAT, descriptorChecksum } from './repository.js';

const SPECIAL_KINDS = [
  [0o010000, 'fifo'],
  [0o140000, 'socket'],
  [0o020000, 'character device'],
  [0o060000, 'block device'],
];

function kindOf(mode) {
  const type = mode & 0o170000;
  return SPECIAL_KINDS.find(([bits]) => bits === type)?.[1] ?? 'special file';
}

/**
 * The worktree filesystem's own clock: the ctime the metadata entry gets
 * when its times are set to themselves (a change of attributes, so the
 * directory holding it, the worktree root, is not touched). A file whose
 * ctime is not before it may change again within the same clock tick
 * without its identity changing, so its key is not trusted next time.
 */
function filesystemNow(entry) {
  const { atime, mtime } = lstatSync(entry);
  lutimesSync(entry, atime, mtime);
  return lstatSync(entry, { bigint: true }).ctimeNs;
}

const nanoseconds = (sec, nsec) => BigInt(sec) * 1_000_000_000n + BigInt(nsec);

export async function takeSnapshot(workspace, options) {
  const { repository, worktree } = workspace;
  const { layout } = repository;
  const { engine, threads, packBelow, durable, onProgress, message, tags } = options;
  const id = newSnapshotId();
  const intent = `snapshot-${id}`;
  const packTemp = layout.tmp(`${id}.pack`);
  const made = [];
  let committed = false;
  // The descriptor is the commit point: written last, and durably.
  const commit = (descriptor) => {
    descriptor.descriptorChecksum = descriptorChecksum(descriptor);
    writeJson(layout.descriptor(id), descriptor, durable);
    committed = true;
    workspace.setHead(id, durable);
  };
  writeJson(layout.intent(intent), { op: 'snapshot', id, worktree: worktree.name, pid: process.pid, time: new Date().toISOString() }, durable);
  try {
    const rootStats = statSync(workspace.path, { bigint: true });
    const root = [Number(rootStats.mode & 0o7777n), Number(rootStats.mtimeNs / 1_000_000_000n), Number(rootStats.mtimeNs % 1_000_000_000n)];
    const scan = await scanTree('snapshot failed', workspace.path, [META_NAME]);
    checkNames(scan.paths, 'snapshot');
    const parent = worktree.head;
    const treeDigest = createHash('sha256').update(`${scan.digest}\0${root.join(',')}`).digest('hex');
    const header = { format: DESCRIPTOR_FORMAT, id, parent, worktree: worktree.name, time: new Date().toISOString(), message, tags };
    const parentDescriptor = parent === null ? null : repository.descriptor(parent);
    if (
      /^[0-9a-f]{64}$/.test(scan.digest) &&
      scan.vanished.length === 0 &&
      parentDescriptor?.treeDigest === treeDigest &&
      parentDescriptor.keysTrusted === true &&
      manifestIntact(layout.manifest(parent), parentDescriptor.manifestChecksum)
    ) {
      // Not one entry's identity changed since the parent's scan, and the
      // parent trusted every file's identity: its manifest is this one.
      if (engine === 'reflink') chooseEngine(engine, workspace.path, layout.dir('tmp'));
      made.push(layout.manifest(id));
      shareManifest(layout.manifest(parent), layout.manifest(id));
      if (durable) syncDirectory(layout.dir('manifests'));
      const { files, directories, symlinks, bytes, skipped, payloadChecksum: checksum, engine: parentEngine } = parentDescriptor;
      const counts = { reflink: 0, copy_file_range: 0, copy: 0, pack: 0, reused: files };
      const engineSummary = { requested: engine, used: 'none', reflinkSupported: parentEngine.reflinkSupported, degraded: false, counts, fallbacks: [] };
      const descriptor = { ...header, engine: engineSummary, files, directories, symlinks, bytes, storedBytes: 0, skipped, unstable: [] };
      Object.assign(descriptor, { payloadChecksum: checksum, manifestChecksum: parentDescriptor.manifestChecksum, treeDigest, keysTrusted: true });
      commit(descriptor);
      return descriptor;
    }
    // The clock of the worktree's filesystem (the repository may be on
    // another), read before any file is: a file changed at or after it
    // could change again within the same tick unseen.
    const clock = filesystemNow(path.join(workspace.path, META_NAME));
    const reusable = new Map();
    if (parent !== null) {
      const parentManifest = repository.manifest(parent);
      for (const entry of parentManifest.entries) if (entry[1] === 'f' && entry[9] !== null) reusable.set(entry[0], entry);
    }
    const choice = chooseEngine(engine, workspace.path, layout.dir('tmp'));
    const tally = new EngineTally(choice);
    const jobs = new JobList();
    const entries = [];
    /** @type {[import('./manifest.js').FileEntry, number][]} [entry, its job] */
    const pending = [];
    const skipped = [];
    let bytes = 0;
    for (let i = 0; i < scan.paths.length; i++) {
      const where = scan.paths[i];
      const mode = scan.modes[i] & 0o7777;
      const mtimeSec = scan.mtimeSec[i];
      const mtimeNsec = scan.mtimeNsec[i];
      switch (scan.types[i]) {
        case 2:
          entries.push([where, 'd', mode, mtimeSec, mtimeNsec]);
          continue;
        case 3:
          entries.push([where, 'l', scan.targets[i], mtimeSec, mtimeNsec]);
          continue;
        case 1:
          break;
        default:
          skipped.push({ path: where, reason: kindOf(scan.modes[i]) });
          continue;
      }
      const size = scan.sizes[i];
      const previous = reusable.get(where);
      if (previous !== undefined && previous[9] === statKey(scan.devs[i], scan.inos[i], size, mtimeSec, mtimeNsec, scan.ctimeSec[i], scan.ctimeNsec[i])) {
        entries.push([where, 'f', mode, size, mtimeSec, mtimeNsec, previous[6], previous[7], previous[8], previous[9]]);
        tally.counts.reused++;
        bytes += size;
        continue;
      }
      /** @type {import('./manifest.js').FileEntry} */
      const entry = [where, 'f', mode, size, mtimeSec, mtimeNsec, null, null, null, null];
      entries.push(entry);
      // Relative to the worktree, opened beneath it (sourceRoot below).
      const job =
        size < packBelow && engine !== 'reflink'
          ? jobs.push(JOB_PACK, where)
          : jobs.push(JOB_CLONE, where, layout.tmp(`${id}.${jobs.length}`), { mode: 0o444, time: [mtimeSec, mtimeNsec] });
      pending.push([entry, job]);
    }
    const hasPack = jobs.ops.includes(JOB_PACK);
    if (hasPack) made.push(packTemp);
    const results = await jobs.run(
      { ...choice.runOptions, threads, hash: true, packPath: hasPack ? packTemp : '', packOffset: 0, retries: 2, sourceRoot: workspace.path },
      onProgress,
      'snapshot',
    );
    // A clone made by reflink or copy_file_range is hashed by reading the
    // source again; if the source changed meanwhile, the hash may not be of
    // the cloned bytes, so those clones are hashed themselves before they
    // are filed under a hash.
    const rehash = new JobList();
    const rehashOf = new Map();
    for (const [, i] of pending) {
      if (jobs.ops[i] === JOB_CLONE && failureOf(results, i) === null && (results.flags[i] & FLAG_UNSTABLE) !== 0) {
        rehashOf.set(i, rehash.push(JOB_HASH, jobs.dsts[i]));
      }
    }
    const rehashed = await rehash.run({ threads, hash: true });
    const failures = [];
    const vanished = new Set();
    const unstable = [];
    let storedBytes = 0;
    for (const [entry, i] of pending) {
      const failure = failureOf(results, i);
      if (failure !== null) {
        // Removed since the scan: the snapshot is of the tree without it.
        if (failure.code === 'ENOENT' && results.errorOnDst[i] === 0) vanished.add(entry);
        else failures.push({ path: entry[0], ...failure });
        continue;
      }
      const stable = (results.flags[i] & FLAG_UNSTABLE) === 0;
      if (!stable) unstable.push(entry[0]);
      const changedNow = nanoseconds(results.ctimeSec[i], results.ctimeNsec[i]) >= clock;
      entry[3] = results.sizes[i];
      entry[4] = results.mtimeSec[i];
      entry[5] = results.mtimeNsec[i];
      entry[6] = hashOf(results, i);
      if (rehashOf.has(i)) {
        const j = rehashOf.get(i);
        entry[3] = rehashed.sizes[j];
        entry[6] = hashOf(rehashed, j);
      }
      entry[8] = tally.add(results, i, entry[0]);
      entry[9] = stable && !changedNow
        ? statKey(results.devs[i], results.inos[i], entry[3], entry[4], entry[5], results.ctimeSec[i], results.ctimeNsec[i])
        : null;
      bytes += entry[3];
      storedBytes += entry[3];
      if (jobs.ops[i] === JOB_PACK) {
        entry[7] = [id, results.offsets[i]];
      } else {
        entry[7] = 'o';
        storeObject(layout, jobs.dsts[i], entry[6]);
      }
    }
    if (failures.length > 0) throw ioError('snapshot failed', failures, 'could not be read or stored');
    for (const entry of vanished) skipped.push({ path: entry[0], reason: 'removed during the snapshot' });
    for (const where of scan.vanished) skipped.push({ path: where, reason: 'directory removed or moved during the snapshot' });
    const kept = vanished.size === 0 ? entries : entries.filter((entry) => !vanished.has(entry));
    if (hasPack) {
      renameSync(packTemp, layout.pack(id));
      made.push(layout.pack(id));
    }
    made.push(layout.manifest(id));
    const manifest = { format: MANIFEST_FORMAT, root, entries: kept };
    const manifestText = writeJson(layout.manifest(id), manifest, false, 0);
    if (durable) await syncFilesystem(layout.repository);
    const descriptor = {
      ...header,
      engine: tally.summary(),
      files: kept.filter((entry) => entry[1] === 'f').length,
      directories: kept.filter((entry) => entry[1] === 'd').length,
      symlinks: kept.filter((entry) => entry[1] === 'l').length,
      bytes,
      storedBytes,
      skipped,
      unstable,
      payloadChecksum: payloadChecksum(manifest),
      // Of the manifest file's bytes: a later unchanged snapshot shares the file after checking it.
      manifestChecksum: createHash('sha256').update(manifestText).digest('hex'),
      treeDigest,
      // Whether the next snapshot may take this manifest whole when the tree's digest is unchanged.
      keysTrusted: vanished.size === 0 && scan.vanished.length === 0 && kept.every((entry) => entry[1] !== 'f' || entry[9] !== null),
    };
    commit(descriptor);
    return descriptor;
  } finally {
    if (!committed) for (const file of made) rmSync(file, { force: true });
    for (const name of leftovers(layout, id)) rmSync(name, { force: true });
    rmSync(layout.intent(intent), { force: true });
  }
}

/** Whether the manifest file still hashes to what its snapshot recorded (a cheap check instead of parsing it). */
function manifestIntact(file, checksum) {
  if (typeof checksum !== 'string') return false;
  try {
    return createHash('sha256').update(readFileSync(file)).digest('hex') === checksum;
  } catch {
    return false;
  }
}

/** The parent's manifest under the new id: a hard link, or a copy where the file has all the links it may have. */
function shareManifest(from, to) {
  try {
    linkSync(from, to);
  } catch (error) {
    if (error.code !== 'EMLINK') throw error;
    copyFileSync(from, to);
  }
}

/** Moves a cloned file into objects/ under its hash; an object already there is the same bytes, so the clone is dropped. */
function storeObject(layout, temporary, hash) {
  const target = layout.object(hash);
  mkdirSync(path.dirname(target), { recursive: true });
  if (!renameNoReplace(temporary, target)) unlinkSync(temporary);
}

/** Temporary files of snapshot `id` (clones not yet moved into objects/, the pack being written). */
export function leftovers(layout, id) {
  const prefix = `${id}.`;
  return readdirSync(layout.dir('tmp')).filter((name) => name.startsWith(prefix)).map((name) => layout.tmp(name));
}
