// The repository of a workspace: its config, and the records kept in it
// (descriptors, manifests, pins, worktrees, intents), each read and checked
// in one place.
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync } from 'node:fs';
import { ArenaCacheError, codes } from '../errors.js';
import { DIRECTORIES, FORMAT, Layout, readJson, writeJson } from './repository-layout.js';
import { checkManifest, payloadChecksum } from './manifest.js';
import { isShortId, isSnapshotId, shortId } from './names.js';

export const DESCRIPTOR_FORMAT = 'arenacache-snapshot/1';
export const DEFAULT_RETENTION = Object.freeze({ keepLast: 5, keepWithin: 7 * 24 * 3600 * 1000 });

/** JSON with object keys sorted at every level: the bytes a checksum is taken over. */
export function canonicalJson(value) {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

export function descriptorChecksum(descriptor) {
  const { descriptorChecksum: _, ...rest } = descriptor;
  return createHash('sha256').update(canonicalJson(rest)).digest('hex');
}

export class Repository {
  constructor(repository) {
    this.layout = new Layout(repository);
    const config = readJson(this.layout.config);
    if (config === undefined) {
      throw new ArenaCacheError(codes.ERR_WORKSPACE_NOT_FOUND, `no workspace repository at ${repository} (config.json is missing)`);
    }
    if (config.format !== FORMAT) {
      throw new ArenaCacheError(codes.ERR_WORKSPACE_FORMAT, `${this.layout.config} has format ${JSON.stringify(config.format)}, expected ${FORMAT}`);
    }
    this.config = config;
    this.descriptorCache = new Map();
  }

  static create(repository, retention, durable) {
    mkdirSync(repository, { recursive: true });
    const layout = new Layout(repository);
    for (const name of DIRECTORIES) mkdirSync(layout.dir(name), { recursive: true });
    writeJson(layout.config, { format: FORMAT, id: randomBytes(8).toString('hex'), created: new Date().toISOString(), retention }, durable);
    return new Repository(repository);
  }

  get retention() {
    return { ...DEFAULT_RETENTION, ...this.config.retention };
  }

  /** Every committed snapshot id, oldest first (ids sort by time). */
  ids() {
    return readdirSync(this.layout.dir('snapshots'))
      .filter((name) => name.endsWith('.json') && isSnapshotId(name.slice(0, -5)))
      .map((name) => name.slice(0, -5))
      .sort();
  }

  /** The descriptor of `id`, its checksum checked; ERR_SNAPSHOT_NOT_FOUND or ERR_SNAPSHOT_CORRUPT otherwise. */
  descriptor(id) {
    const cached = this.descriptorCache.get(id);
    if (cached !== undefined) return cached;
    let descriptor;
    try {
      descriptor = readJson(this.layout.descriptor(id));
    } catch (error) {
      throw new ArenaCacheError(codes.ERR_SNAPSHOT_CORRUPT, `snapshot ${id}: descriptor is not valid JSON (${error.message})`, { cause: error });
    }
    if (descriptor === undefined) throw new ArenaCacheError(codes.ERR_SNAPSHOT_NOT_FOUND, `no snapshot ${id}`);
    if (descriptor?.format !== DESCRIPTOR_FORMAT || descriptor.id !== id) {
      throw new ArenaCacheError(codes.ERR_SNAPSHOT_CORRUPT, `snapshot ${id}: descriptor is not an ${DESCRIPTOR_FORMAT} record of this id`);
    }
    if (descriptor.descriptorChecksum !== descriptorChecksum(descriptor)) {
      throw new ArenaCacheError(codes.ERR_SNAPSHOT_CORRUPT, `snapshot ${id}: descriptor checksum does not match its contents`);
    }
    this.descriptorCache.set(id, descriptor);
    return descriptor;
  }

  /** The manifest of `id`, well formed and matching the descriptor's payload checksum. */
  manifest(id) {
    const descriptor = this.descriptor(id);
    let manifest;
    try {
      manifest = readJson(this.layout.manifest(id));
    } catch (error) {
      throw new ArenaCacheError(codes.ERR_SNAPSHOT_CORRUPT, `snapshot ${id}: manifest is not valid JSON (${error.message})`, { cause: error });
    }
    if (manifest === undefined) throw new ArenaCacheError(codes.ERR_SNAPSHOT_CORRUPT, `snapshot ${id}: manifest is missing`);
    checkManifest(id, manifest);
    if (payloadChecksum(manifest) !== descriptor.payloadChecksum) {
      throw new ArenaCacheError(codes.ERR_SNAPSHOT_CORRUPT, `snapshot ${id}: manifest does not match the descriptor's payload checksum`);
    }
    return manifest;
  }

  /**
   * The id a user's reference names: a whole id, the last six hex digits of
   * one, "head" (the worktree's head), or a tag (its newest snapshot).
   */
  resolve(reference, head) {
    if (reference === 'head' || reference === 'HEAD') {
      if (head === null) throw new ArenaCacheError(codes.ERR_SNAPSHOT_NOT_FOUND, 'the worktree has no head yet (no snapshot taken or restored here)');
      return head;
    }
    const ids = this.ids();
    if (isSnapshotId(reference)) {
      if (!ids.includes(reference)) throw new ArenaCacheError(codes.ERR_SNAPSHOT_NOT_FOUND, `no snapshot ${reference}`);
      return reference;
    }
    if (isShortId(reference)) {
      const matches = ids.filter((id) => shortId(id) === reference);
      if (matches.length > 1) throw new ArenaCacheError(codes.ERR_SNAPSHOT_AMBIGUOUS, `short id ${reference} matches ${matches.length} snapshots: ${matches.join(', ')}`);
      if (matches.length === 1) return matches[0];
    }
    const tagged = ids.filter((id) => this.tryDescriptor(id)?.tags.includes(reference));
    if (tagged.length > 0) return tagged[tagged.length - 1];
    throw new ArenaCacheError(codes.ERR_SNAPSHOT_NOT_FOUND, `no snapshot has the id, short id or tag ${JSON.stringify(reference)}`);
  }

  /** The descriptor, or null when it is missing or corrupt (for listings, which report those separately). */
  tryDescriptor(id) {
    try {
      return this.descriptor(id);
    } catch (error) {
      if (error.code === codes.ERR_SNAPSHOT_CORRUPT || error.code === codes.ERR_SNAPSHOT_NOT_FOUND) return null;
      throw error;
    }
  }

  worktreeRecords() {
    return readdirSync(this.layout.dir('worktrees'))
      .filter((name) => name.endsWith('.json'))
      .map((name) => readJson(this.layout.worktree(name.slice(0, -5))))
      .filter(Boolean);
  }

  worktreeRecord(name) {
    return readJson(this.layout.worktree(name));
  }

  writeWorktree(record, durable) {
    writeJson(this.layout.worktree(record.name), record, durable);
  }

  /** id -> { until: ISO string or null } */
  pins() {
    const pins = new Map();
    for (const name of readdirSync(this.layout.dir('pins'))) {
      const id = name.slice(0, -5);
      if (!name.endsWith('.json') || !isSnapshotId(id)) continue;
      const pin = readJson(this.layout.pin(id));
      if (pin !== undefined) pins.set(id, pin);
    }
    return pins;
  }

  intents() {
    return readdirSync(this.layout.dir('intents'))
      .filter((name) => name.endsWith('.json'))
      .map((name) => ({ name: name.slice(0, -5), record: readJson(this.layout.intent(name.slice(0, -5))) }))
      .filter((intent) => intent.record !== undefined);
  }
}
