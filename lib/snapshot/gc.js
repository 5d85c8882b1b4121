// gc: plan, then run. A snapshot is kept when it is pinned (and the pin has
// not expired), named by an unfinished intent, the head of a worktree or an
// ancestor of one, among the newest `keepLast`, or younger than
// `keepWithin`; every other snapshot is deleted, then every object and pack
// that no kept snapshot uses.
import { existsSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { stagingPaths, writeJson } from './repository-layout.js';
import { locate } from './manifest.js';

/** The creation time (ms) written into an id: 20261122T101530123Z-... */
function idTime(id) {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})Z/.exec(id);
  return Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6], +m[7]);
}

/** A worktree is gone only when its directory and a restore's sibling directories are all gone. */
function worktreeGone(record) {
  const { staging, old } = stagingPaths(record.path);
  return !existsSync(record.path) && !existsSync(staging) && !existsSync(old);
}

export function planGc(repository, { keepLast, keepWithin, now = Date.now() }) {
  const ids = repository.ids();
  const known = new Set(ids);
  const reasons = new Map();
  const keep = (id, reason) => {
    if (!known.has(id)) return;
    if (!reasons.has(id)) reasons.set(id, []);
    reasons.get(id).push(reason);
  };
  for (const [id, pin] of repository.pins()) {
    if (pin.until === null || Date.parse(pin.until) > now) keep(id, pin.until === null ? 'pinned' : `pinned until ${pin.until}`);
  }
  for (const { record } of repository.intents()) if (record.id) keep(record.id, `unfinished ${record.op}`);
  const staleWorktrees = [];
  for (const record of repository.worktreeRecords()) {
    if (worktreeGone(record)) {
      staleWorktrees.push(record.name);
      continue;
    }
    let reason = `head of worktree ${record.name}`;
    for (let id = record.head; id !== null && id !== undefined && known.has(id); ) {
      keep(id, reason);
      reason = `ancestor of worktree ${record.name}'s head`;
      id = repository.tryDescriptor(id)?.parent ?? null;
    }
  }
  ids.slice(Math.max(0, ids.length - keepLast)).forEach((id) => keep(id, `one of the newest ${keepLast}`));
  for (const id of ids) if (now - idTime(id) < keepWithin) keep(id, `younger than ${keepWithin} ms`);
  const doomed = ids.filter((id) => !reasons.has(id));

  // Sweep only what no kept snapshot can use; a kept snapshot whose
  // manifest cannot be read could use anything, so nothing is swept then.
  const used = new Set();
  let sweep = true;
  let sweepBlockedBy = null;
  for (const id of reasons.keys()) {
    let manifest;
    try {
      manifest = repository.manifest(id);
    } catch (error) {
      sweep = false;
      sweepBlockedBy = `${id}: ${error.message}`;
      break;
    }
    for (const entry of manifest.entries) if (entry[1] === 'f') used.add(locate(repository.layout, entry).file);
  }
  const files = [];
  let bytes = 0;
  if (sweep) {
    for (const file of repository.layout.unusedStoredFiles(used)) {
      files.push(file);
      bytes += statSync(path.join(repository.layout.repository, file)).size;
    }
  }
  return {
    delete: doomed,
    keep: [...reasons].map(([id, why]) => ({ id, reasons: why })),
    files,
    bytes,
    staleWorktrees,
    sweep,
    sweepBlockedBy,
  };
}

export function runGc(repository, plan, durable) {
  const { layout } = repository;
  const intent = layout.intent('gc');
  writeJson(intent, { op: 'gc', delete: plan.delete, pid: process.pid }, durable);
  // The descriptor goes first: a snapshot is gone the moment it is unlisted.
  for (const id of plan.delete) {
    rmSync(layout.descriptor(id), { force: true });
    repository.descriptorCache.delete(id);
    rmSync(layout.manifest(id), { force: true });
    rmSync(layout.pin(id), { force: true });
  }
  for (const name of plan.staleWorktrees) rmSync(layout.worktree(name), { force: true });
  for (const file of plan.files) rmSync(path.join(layout.repository, file), { force: true });
  rmSync(intent, { force: true });
}
