// What the sole opener of a cache arena file may trust of what the
// processes before it left, and the record of how each open went
// (stats().lastOpen). Checking every record of every shard takes about
// 0.4 µs per entry (4 s for 10 million): a restart should not pay that for
// damage that cannot be there.
//
// Only two things damage an arena behind its locks' backs:
//   - a writer that dies inside a shard's lock leaves that shard half
//     written, and the lock held: those shards are rebuilt, whatever else;
//   - a machine crash (or a copy of the file taken while it was written)
//     leaves some of a file's pages as they were written and others as they
//     were before: any shard, locked or not, can be torn, and only a check
//     of every record finds it.
// A process that dies cannot tear pages: every byte it stored is in the
// kernel's page cache, shared by every process of the machine, whether the
// file is in memory or on disk. So the opener trusts the pages
//   'clean'  when the last process closed the file cleanly: it wrote the
//            mapping back, then the clean mark, then the mark's page (see
//            mappingReleaseClean), so a mark on disk vouches for every byte
//            before it, across reboots;
//   'crash'  when the file was last opened under this boot (the kernel's
//            boot id: the page cache has not been lost since) and is the
//            very file it was (device and inode: not a copy);
// and otherwise ('checked') checks every shard.
//
// The mark is cleared before the opener writes anything, and durably on
// disk: a machine crash after that finds no mark. The boot and file
// identity are written after the recovery is done: an opener killed
// mid-check leaves the earlier record, which does not vouch for this boot.

import { fdatasyncSync, readFileSync } from 'node:fs';
import {
  BOOT_ID_BYTES,
  CLEAN_MARK_WORD,
  H32_CLEAN_MARK,
  H32_LAST_OPEN,
  H32_LAST_OPEN_CHECKED,
  H32_LAST_OPEN_REPAIRED,
  H32_LAST_OPEN_LOST,
  H64_LAST_OPEN_AT,
  H64_LAST_OPEN_MS,
  H64_OPENED_DEV,
  H64_OPENED_INO,
  H8_OPENED_BOOT,
  HEADER_BYTES,
  RESTART_RECORD_VERSION,
} from '../common/layout.js';

/**
 * How long a sole opener that cannot trust the pages checks shards inside
 * open() before it leaves the rest to their first use (see leaveUnchecked
 * in shard-lock.js): half the 100 ms a service's event loop can spare, and
 * about 140,000 entries of checking (0.35 µs each).
 */
export const RESTART_CHECK_BUDGET_MS = 50;

/** How an open found the file, by the code stored in the header. */
const HOW = Object.freeze(['', 'created', 'clean', 'crash', 'checked']);
const BOOT_ID_PATH = '/proc/sys/kernel/random/boot_id';

/**
 * The kernel's boot id as 16 bytes, or null where it cannot be read (no
 * /proc): then no file is trusted by its boot.
 * @returns {Uint8Array | null}
 */
export function bootId() {
  try {
    const hex = readFileSync(BOOT_ID_PATH, 'latin1').trim().replaceAll('-', '');
    if (!/^[0-9a-f]{32}$/.test(hex)) return null;
    return Uint8Array.from(Buffer.from(hex, 'hex'));
  } catch {
    return null;
  }
}

function sameBytes(a, b) {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * What the file's pages can be trusted for, judged from the restart record
 * (see the header), and the clean mark cleared, durably for a file on disk.
 * @param {SharedArrayBuffer} buffer
 * @param {{ fd: number, dev: number, ino: number, memoryBacked: boolean }} file
 * @param {Uint8Array | null} boot this boot's id (bootId())
 * @param {number} layoutVersion the file's, as found
 * @returns {'clean' | 'crash' | 'checked'}
 */
export function judgeRestart(buffer, file, boot, layoutVersion) {
  const h32 = new Int32Array(buffer, 0, HEADER_BYTES / 4);
  const h64 = new Float64Array(buffer, 0, HEADER_BYTES / 8);
  // A file of an earlier version was last written by code that keeps no
  // record: whatever these words hold vouches for nothing.
  const recorded = layoutVersion >= RESTART_RECORD_VERSION;
  const marked = recorded && h32[H32_CLEAN_MARK] >>> 0 === CLEAN_MARK_WORD;
  clearCleanMark(buffer, file);
  const sameFile = h64[H64_OPENED_DEV] === file.dev && h64[H64_OPENED_INO] === file.ino;
  const bootBytes = new Uint8Array(buffer, H8_OPENED_BOOT, BOOT_ID_BYTES);
  const sameBoot = boot !== null && sameBytes(bootBytes, boot);
  // Until recordOpen() writes it again, the record vouches for no boot: an
  // opener killed mid-recovery (a shard half repaired, unlocked) leaves
  // its successor to check every shard. No write-back is needed: only a
  // machine crash could bring the old record back, and that changes the boot.
  bootBytes.fill(0);
  if (marked) return 'clean';
  return recorded && sameFile && sameBoot ? 'crash' : 'checked';
}

/**
 * Clears a clean mark, durably for a file on disk, before this opener
 * writes anything: for the sole opener (judgeRestart), and for an opener
 * that is not alone with the file (a process that waited while the last
 * one closed and marked it, then found others there too), since any
 * writer makes the mark untrue.
 * @param {SharedArrayBuffer} buffer
 * @param {{ fd: number, memoryBacked: boolean }} file
 */
export function clearCleanMark(buffer, file) {
  const h32 = new Int32Array(buffer, 0, HEADER_BYTES / 4);
  if (h32[H32_CLEAN_MARK] === 0) return;
  h32[H32_CLEAN_MARK] = 0;
  // Written through the mapping, which shares the page cache with the
  // descriptor: fdatasync writes the cleared mark back before any write of
  // this open can reach the disk.
  if (!file.memoryBacked) fdatasyncSync(file.fd);
}

/**
 * Records how this open went, once its recovery is done, with the boot and
 * file it happened under (see judgeRestart).
 * @param {SharedArrayBuffer} buffer
 * @param {{ how: 'created' | 'clean' | 'crash' | 'checked', repaired: number, lost: number, checked: number, at: number, ms: number }} report
 * @param {{ dev: number, ino: number } | null} file null for an arena in memory
 * @param {Uint8Array | null} boot
 */
export function recordOpen(buffer, report, file, boot) {
  const h32 = new Int32Array(buffer, 0, HEADER_BYTES / 4);
  const h64 = new Float64Array(buffer, 0, HEADER_BYTES / 8);
  h32[H32_LAST_OPEN] = HOW.indexOf(report.how);
  h32[H32_LAST_OPEN_REPAIRED] = report.repaired;
  h32[H32_LAST_OPEN_LOST] = Math.min(report.lost, 2 ** 31 - 1);
  h32[H32_LAST_OPEN_CHECKED] = report.checked;
  h64[H64_LAST_OPEN_AT] = report.at;
  h64[H64_LAST_OPEN_MS] = report.ms;
  if (file === null) return;
  h64[H64_OPENED_DEV] = file.dev;
  h64[H64_OPENED_INO] = file.ino;
  new Uint8Array(buffer, H8_OPENED_BOOT, BOOT_ID_BYTES).set(boot ?? new Uint8Array(BOOT_ID_BYTES));
}

/**
 * How the last open that created or recovered the arena went (see
 * stats().lastOpen), or null when none recorded it (an arena in memory, or
 * a file from before the record). `shardsPending`: the shards it left to
 * be checked that still are.
 * @param {SharedArrayBuffer} buffer
 * @param {number} shardsPending
 * @returns {{ how: string, at: number, ms: number, shardsChecked: number, shardsPending: number, shardsRepaired: number, entriesLost: number } | null}
 */
export function lastOpen(buffer, shardsPending) {
  const h32 = new Int32Array(buffer, 0, HEADER_BYTES / 4);
  const h64 = new Float64Array(buffer, 0, HEADER_BYTES / 8);
  const how = HOW[h32[H32_LAST_OPEN]];
  if (how === undefined || how === '') return null;
  return {
    how,
    at: h64[H64_LAST_OPEN_AT],
    ms: h64[H64_LAST_OPEN_MS],
    shardsChecked: h32[H32_LAST_OPEN_CHECKED],
    shardsPending,
    shardsRepaired: h32[H32_LAST_OPEN_REPAIRED],
    entriesLost: h32[H32_LAST_OPEN_LOST],
  };
}

const CLEAN_MARK = Object.freeze({ offset: H32_CLEAN_MARK * 4, word: CLEAN_MARK_WORD });

/**
 * The clean mark the file's last closer stores (see mappingReleaseClean),
 * or null for a file of an earlier layout version: processes of an older
 * arenacache may open it next, and they would neither clear the mark nor
 * keep it true (see RESTART_RECORD_VERSION).
 * @param {{ layoutVersion: number }} header
 */
export function cleanMarkFor(header) {
  return header.layoutVersion >= RESTART_RECORD_VERSION ? CLEAN_MARK : null;
}
