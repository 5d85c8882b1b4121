// verify: recompute the SHA-256 of stored files (all at once on the native
// pool, each stored location hashed once however many snapshots share it)
// and compare; or compare a worktree with a snapshot. Reports say exactly
// which paths differ (and why), are missing, or are extra.
import { FLAG_SHORT, JOB_HASH } from '../native/file-jobs.js';
import { failureOf, hashOf, JobList, scanTree } from './engine.js';
import { META_NAME } from './repository-layout.js';
import { locate, statKey } from './manifest.js';

/** Compares the hashed bytes of job `i` with file entry `entry`: null when they match, else why not. */
function compare(results, i, entry) {
  const failure = failureOf(results, i);
  if (failure !== null) return failure.code === 'ENOENT' ? { missing: true } : { reason: failure.code };
  if ((results.flags[i] & FLAG_SHORT) !== 0 || results.sizes[i] !== entry[3]) {
    return { reason: 'size', expected: entry[3], actual: results.sizes[i] };
  }
  if (hashOf(results, i) !== entry[6]) return { reason: 'content' };
  return null;
}

/**
 * One snapshot's stored bytes against its manifest: `differ` holds
 * { path, reason, expected?, actual? } (reason 'size', 'content' or an error
 * code); `descriptor` and `manifest` are 'ok' or why they cannot be read.
 * @typedef {{ id: string, ok: boolean, files: number, bytes: number, descriptor: string, manifest: string,
 *   differ: { path: string, reason: string, expected?: number, actual?: number }[], missing: string[], extra: string[] }} SnapshotReport
 */

/**
 * @typedef {{ threads: number, onProgress?: import('./engine.js').OnProgress | null }} VerifyOptions
 */

/**
 * Verifies the stored bytes of the snapshots `ids`: one report per snapshot.
 * @overload
 * @param {import('./repository.js').Repository} repository
 * @param {string[]} ids
 * @param {VerifyOptions & { all: false }} options
 * @returns {Promise<SnapshotReport[]>}
 */
/**
 * With `all`, also lists repository files no snapshot uses (`extra`).
 * @overload
 * @param {import('./repository.js').Repository} repository
 * @param {string[]} ids
 * @param {VerifyOptions & { all: true }} options
 * @returns {Promise<{ ok: boolean, snapshots: SnapshotReport[], extra: string[] }>}
 */
/** Verifies the stored bytes of the snapshots `ids`. With `all`, also lists repository files no snapshot uses. */
export async function verifyStore(repository, ids, { threads, onProgress, all }) {
  const { layout } = repository;
  const jobs = new JobList();
  const jobOfLocation = new Map();
  const checks = [];
  const reports = [];
  const referenced = new Set();
  let complete = true;
  for (const id of ids) {
    const report = { id, ok: true, files: 0, bytes: 0, descriptor: 'ok', manifest: 'ok', differ: [], missing: [], extra: [] };
    reports.push(report);
    let manifest;
    try {
      repository.descriptor(id);
    } catch (error) {
      report.ok = false;
      report.descriptor = error.message;
    }
    try {
      manifest = repository.manifest(id);
    } catch (error) {
      report.ok = false;
      report.manifest = error.message;
      complete = false;
      continue;
    }
    for (const entry of manifest.entries) {
      if (entry[1] !== 'f') continue;
      const stored = locate(layout, entry);
      referenced.add(stored.file);
      const location = `${stored.file}\0${stored.offset}\0${stored.length}`;
      let job = jobOfLocation.get(location);
      if (job === undefined) {
        job = jobs.push(JOB_HASH, stored.file, '', { offset: stored.offset, length: stored.length });
        jobOfLocation.set(location, job);
      }
      checks.push([report, entry, job]);
    }
  }
  const results = await jobs.run({ threads, hash: true }, onProgress, 'verify');
  for (const [report, entry, job] of checks) {
    report.files++;
    report.bytes += entry[3];
    const problem = compare(results, job, entry);
    if (problem === null) continue;
    report.ok = false;
    if (problem.missing) report.missing.push(entry[0]);
    else report.differ.push({ path: entry[0], ...problem });
  }
  if (!all) return reports;
  // Files in objects/ and packs/ that no snapshot uses: left by an
  // interrupted operation, or put there by hand; gc removes them.
  const extra = complete ? layout.unusedStoredFiles(referenced) : [];
  return { ok: reports.every((report) => report.ok) && extra.length === 0, snapshots: reports, extra };
}

/**
 * Compares the worktree at `root` with `manifest`. With `rehash` every
 * file's content is hashed; without it, a file whose identity still equals
 * the key the snapshot recorded is taken as unchanged (how restore decides
 * whether there is anything to lose).
 * @param {string} root
 * @param {string | null} id the snapshot (null: none, an empty manifest)
 * @param {{ entries: any[] }} manifest
 * @param {{ rehash: boolean, threads: number, onProgress?: import('./engine.js').OnProgress | null }} options
 */
export async function diffWorktree(root, id, manifest, { rehash, threads, onProgress }) {
  const scan = await scanTree(id === null ? 'cannot read the worktree' : `cannot compare the worktree with snapshot ${id}`, root, [META_NAME]);
  const current = new Map();
  for (let i = 0; i < scan.paths.length; i++) current.set(scan.paths[i], i);
  const report = { id, worktree: root, ok: true, files: 0, bytes: 0, differ: [], missing: [], extra: [] };
  const jobs = new JobList();
  const hashed = [];
  const typeName = ['', 'file', 'directory', 'symlink', 'special file'];
  const wanted = { d: 2, f: 1, l: 3 };
  for (const entry of manifest.entries) {
    const [where, type] = entry;
    const i = current.get(where);
    current.delete(where);
    if (i === undefined) {
      report.missing.push(where);
      continue;
    }
    if (scan.types[i] !== wanted[type]) {
      report.differ.push({ path: where, reason: 'type', expected: typeName[wanted[type]], actual: typeName[scan.types[i]] });
      continue;
    }
    if (type === 'l') {
      if (scan.targets[i] !== entry[2]) report.differ.push({ path: where, reason: 'target', expected: entry[2], actual: scan.targets[i] });
      continue;
    }
    const mode = scan.modes[i] & 0o7777;
    if (mode !== entry[2]) report.differ.push({ path: where, reason: 'mode', expected: entry[2], actual: mode });
    if (type === 'd') continue;
    report.files++;
    report.bytes += entry[3];
    const size = scan.sizes[i];
    if (size !== entry[3]) {
      report.differ.push({ path: where, reason: 'size', expected: entry[3], actual: size });
      continue;
    }
    const key = statKey(scan.devs[i], scan.inos[i], size, scan.mtimeSec[i], scan.mtimeNsec[i], scan.ctimeSec[i], scan.ctimeNsec[i]);
    if (!rehash && entry[9] !== null && entry[9] === key) continue;
    hashed.push([entry, jobs.push(JOB_HASH, where)]);
  }
  // Special files are never snapshotted (descriptor.skipped lists them), so they are not extra either.
  for (const [where, i] of current) if (scan.types[i] !== 4) report.extra.push(where);
  const results = await jobs.run({ threads, hash: true, sourceRoot: root }, onProgress, 'verify');
  for (const [entry, job] of hashed) {
    const problem = compare(results, job, entry);
    if (problem === null) continue;
    if (problem.missing) report.missing.push(entry[0]);
    else report.differ.push({ path: entry[0], ...problem });
  }
  report.differ.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  report.ok = report.differ.length === 0 && report.missing.length === 0 && report.extra.length === 0;
  return report;
}
