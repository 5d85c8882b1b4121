// cloneTree: the native clone engine on its own, `cp -a` for a directory
// tree: per file FICLONE, else copy_file_range, else read/write; modes,
// times, symbolic links (as links) and empty directories kept; special
// files skipped and reported.
import { existsSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { checkFunction, checkInteger, checkPath, withDefaults } from '../validate.js';
import { ArenaCacheError, codes, describe } from '../errors.js';
import { requireNative } from '../native/addon.js';
import { JOB_CLONE } from '../native/file-jobs.js';
import { isWithin } from './repository-layout.js';
import { buildTree, checkEngine, checkNames, chooseEngine, EngineTally, ENGINE_NAMES, failureOf, ioError, scanTree } from './engine.js';

const cloneDefaults = Object.freeze({ engine: 'auto', threads: 4, onProgress: null });

/**
 * Copies the tree at `source` to `target` (which must not exist). Resolves to
 * { files, directories, symlinks, bytes, skipped, engine, perFile } where
 * engine is the tally of engines used (see EngineTally) and perFile maps
 * each file's path to the engine that copied it.
 */
export async function cloneTree(source, target, options = {}) {
  checkPath(source, 'source');
  checkPath(target, 'target');
  const { engine, threads, onProgress } = withDefaults(options, cloneDefaults, 'options');
  checkEngine(engine, 'options.engine');
  checkInteger(threads, 'options.threads', 1, 64);
  if (onProgress !== null) checkFunction(onProgress, 'options.onProgress');
  requireNative('cloneTree()');
  const from = path.resolve(source);
  const to = path.resolve(target);
  if (existsSync(to)) throw new ArenaCacheError(codes.ERR_WORKSPACE_EXISTS, `cannot clone into ${to}: it exists`);
  if (isWithin(from, to)) {
    throw new RangeError(`target must not be inside source (got ${describe(target)} inside ${describe(source)})`);
  }
  const scan = await scanTree('cloneTree', from, []);
  checkNames(scan.paths, 'clone');
  mkdirSync(to, { mode: 0o700 });
  const choice = chooseEngine(engine, from, to);
  const entries = [];
  const skipped = [];
  for (let i = 0; i < scan.paths.length; i++) {
    const where = scan.paths[i];
    const mode = scan.modes[i] & 0o7777;
    const time = [scan.mtimeSec[i], scan.mtimeNsec[i]];
    const type = scan.types[i];
    if (type === 2) entries.push({ path: where, type: 'd', mode, time });
    else if (type === 3) entries.push({ path: where, type: 'l', target: scan.targets[i], time });
    else if (type === 1) entries.push({ path: where, type: 'f', job: (jobs, destination) => jobs.push(JOB_CLONE, where, destination, { mode, time }) });
    else skipped.push({ path: where, reason: 'special file' });
  }
  // The root directory takes the source's mode and time, as cp -a does.
  const root = statSync(from, { bigint: true });
  const top = { mode: Number(root.mode & 0o7777n), time: [Number(root.mtimeNs / 1_000_000_000n), Number(root.mtimeNs % 1_000_000_000n)] };
  const runOptions = { ...choice.runOptions, threads, hash: false, retries: 2, sourceRoot: from };
  const { results, jobOf } = await buildTree(to, entries, { top, runOptions, onProgress, phase: 'clone' });
  const tally = new EngineTally(choice);
  const perFile = {};
  const failures = [];
  let bytes = 0;
  for (const [entry, i] of jobOf) {
    const failure = failureOf(results, i);
    if (failure !== null) {
      failures.push({ path: entry.path, ...failure });
      continue;
    }
    perFile[entry.path] = ENGINE_NAMES[results.engines[i]];
    tally.add(results, i, entry.path);
    bytes += results.sizes[i];
  }
  if (failures.length > 0) throw ioError('cloneTree', failures);
  return {
    files: jobOf.size,
    directories: entries.filter((entry) => entry.type === 'd').length,
    symlinks: entries.filter((entry) => entry.type === 'l').length,
    bytes,
    skipped,
    engine: tally.summary(),
    perFile,
  };
}
