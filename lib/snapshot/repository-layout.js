// Where a workspace keeps its repository, and the small-file writes that
// make every record in it appear whole or not at all.
//
// A worktree is the user's directory. Its metadata entry `.arenacache` is
// either the repository itself (a directory) or a pointer file naming one
// elsewhere (forks, or init with options.repository). Snapshots never
// include that entry.
//
// <repository>/
//   config.json                 format, id, retention
//   lock                        held (OFD lock) by the process changing things
//   snapshots/<id>.json         descriptors: a snapshot exists iff its descriptor does
//   manifests/<id>.json         the entries of a snapshot
//   objects/<hh>/<sha256>       large files, by content (reflinked where possible)
//   packs/<id>.pack             small files of one snapshot, back to back
//   pins/<id>.json              pins (mutable, so outside the checksummed descriptor)
//   worktrees/<name>.json       every worktree's path and head
//   intents/<op>-<stamp>.json   unfinished operations, finished or undone by the next open
//   tmp/                        files being made
import { closeSync, fsyncSync, openSync, readdirSync, readFileSync, renameSync, writeSync } from 'node:fs';
import path from 'node:path';

export const META_NAME = '.arenacache';
export const FORMAT = 'arenacache-workspace/1';
export const DIRECTORIES = ['snapshots', 'manifests', 'objects', 'packs', 'pins', 'worktrees', 'intents', 'tmp'];

export class Layout {
  constructor(repository) {
    this.repository = repository;
    // Joined by hand below: object() and pack() run once per file of a
    // manifest, where path.join's normalising costs more than the rest.
    this.objects = path.join(repository, 'objects');
    this.packs = path.join(repository, 'packs');
  }

  get config() {
    return path.join(this.repository, 'config.json');
  }

  get lock() {
    return path.join(this.repository, 'lock');
  }

  dir(name) {
    return path.join(this.repository, name);
  }

  descriptor(id) {
    return path.join(this.repository, 'snapshots', `${id}.json`);
  }

  manifest(id) {
    return path.join(this.repository, 'manifests', `${id}.json`);
  }

  object(hash) {
    return `${this.objects}${path.sep}${hash.slice(0, 2)}${path.sep}${hash}`;
  }

  pack(packId) {
    return `${this.packs}${path.sep}${packId}.pack`;
  }

  /**
   * The stored files (packs and objects) not in `used` (absolute paths, as
   * object() and pack() make them): relative to the repository, sorted.
   */
  unusedStoredFiles(used) {
    const files = readdirSync(this.packs).map((name) => `${this.packs}${path.sep}${name}`);
    for (const prefix of readdirSync(this.objects)) {
      for (const name of readdirSync(path.join(this.objects, prefix))) files.push(`${this.objects}${path.sep}${prefix}${path.sep}${name}`);
    }
    return files
      .filter((file) => !used.has(file))
      .map((file) => path.relative(this.repository, file))
      .sort();
  }

  pin(id) {
    return path.join(this.repository, 'pins', `${id}.json`);
  }

  worktree(name) {
    return path.join(this.repository, 'worktrees', `${name}.json`);
  }

  intent(name) {
    return path.join(this.repository, 'intents', `${name}.json`);
  }

  tmp(name) {
    return path.join(this.repository, 'tmp', name);
  }
}

/** Whether `child` is `parent` or lies below it (lexically; both absolute). */
export function isWithin(parent, child) {
  const relative = path.relative(parent, child);
  return relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}

/** The sibling directories a restore of `worktree` builds in and swaps through (same filesystem). */
export function stagingPaths(worktree) {
  const parent = path.dirname(worktree);
  const base = path.basename(worktree);
  return { staging: path.join(parent, `.${base}.arenacache-restore`), old: path.join(parent, `.${base}.arenacache-old`) };
}

/**
 * Writes `value` as JSON to `file` through a temporary name and a rename, so a
 * reader sees the old record or the new one. With `durable`, the data is
 * fsynced before the rename and the directory after it. Large records
 * (manifests) pass `indent` 0.
 */
export function writeJson(file, value, durable, indent = 1) {
  const temporary = `${file}.${process.pid}.tmp`;
  const fd = openSync(temporary, 'w', 0o644);
  const text = `${JSON.stringify(value, null, indent)}\n`;
  try {
    writeSync(fd, text);
    if (durable) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, file);
  if (durable) syncDirectory(path.dirname(file));
  return text;
}

export function syncDirectory(dir) {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The parsed JSON in `file`, or undefined when it does not exist. Other errors throw. */
export function readJson(file) {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  }
  return JSON.parse(text);
}
