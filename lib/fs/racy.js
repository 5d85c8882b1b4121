// The racily clean rule (git's name for it): CacheFS tells file versions
// apart by their stats (inode, size, mtime, ctime; stat-record.js sameVersion()),
// but a file system stamps times from a clock coarser than the writes they
// describe, so a file rewritten at the same size within one tick of that
// clock keeps the same stats. A version whose stamps are that recent when it
// is read is "racy": a later change may not show in its stats, and a read
// that overlapped an in-place write may hold a mix of two versions that no
// stat before and after the read can tell from a whole one (both stats show
// the stamp the write took when it began). So a racy version is
//
//   - never cached from a disk read: the read is served and forgotten
//     (counted in stats().racyReads), and the next read goes to the disk
//     again, until the stamps are old enough;
//   - never trusted on revalidation: cached data whose version was racy
//     when it was cached (CacheFS's own write-through writes and flushes,
//     which know their bytes whole) is served within validateMs, as any
//     cached data is, but once its record needs checking against the disk
//     the data is read again, even if the stats still match.
//
// Once every stamp is older than the read by more than the granularity, any
// later change gets a later stamp: a version cached then is safe to trust
// for as long as its stats match.
//
// Which granularity. statfs's file system type does not tell it (ext4 stamps
// nanoseconds with 256-byte inodes and whole seconds with 128-byte ones),
// nor does the kernel (before 6.13, ext4, xfs, btrfs and tmpfs stamp from the
// jiffy clock: 10 ms at HZ=100, 4 ms at HZ=250; later kernels do so too until
// a stamp has been looked at). The stamps themselves do: a file system that
// stamps whole seconds (ext2, ext3, ext4 with 128-byte inodes, HFS+, SFTP
// mounts) or two seconds (FAT) never gives a ctime a fraction of a second,
// and ctime is set by the file system's clock on every change, never by a
// user (utimes sets ctime to now). So a version whose ctime is a multiple of
// 10 ms is judged by COARSE_GRANULARITY_MS (FAT's 2 s, the coarsest local
// file system; exFAT's 10 ms stamps fall here too, safely), and any other by
// FINE_GRANULARITY_MS (a jiffy at HZ=100, exFAT, or the ~15.6 ms tick of a
// Windows server behind SMB). A stamp of a fine file system that happens to
// be a multiple of 10 ms is only judged more carefully. Both are raised to
// options.timestampGranularityMs, for file systems stamped by another
// machine's clock (NFS, SMB, FUSE), whose skew the rule cannot see.
//
// The clocks. The file system stamps from the kernel's coarse real-time
// clock, which lags the clock Date.now() reads by up to a tick; Date.now()
// truncates to the millisecond; and a write takes its stamp before it copies
// its bytes. CLOCK_MARGIN_MS covers these. A stamp after the read (a clock
// stepped back, a server ahead of this machine) is racy: the rule cannot
// judge it.
//
// Left out, as git leaves them out: a write that stays in the middle of its
// copy for longer than the window (stalled by the writer's own page faults
// or by dirty-page throttling); a change through a shared mapping (stamped
// when its page is first written after writeback, not on every store); and
// a clock stepped back after a version was cached, so that a later write
// gets its old stamps again. The cost: a file changed less than the window
// ago (50 ms on fine file systems, about 2 s on coarse ones) is read from the
// disk on every read, as node:fs reads it.

/** The granularity assumed for a version whose ctime is not a multiple of 10 ms. */
export const FINE_GRANULARITY_MS = 20;

/** The granularity assumed for a version whose ctime is a multiple of 10 ms (whole seconds, FAT's 2 s, exFAT's 10 ms). */
export const COARSE_GRANULARITY_MS = 2000;

/** The stamping clock's lag behind Date.now() (a tick), Date.now()'s truncation, and a write's stamp taken before its copy. */
export const CLOCK_MARGIN_MS = 30;

/**
 * Whether the version `record` describes was racy at `at` (a Date.now()
 * taken no later than the read began): its mtime or ctime is not older than
 * `at` by more than its file system's timestamp granularity, at least
 * `minGranularityMs`.
 * @param {{ mtimeMs: number, ctimeMs: number }} record
 * @param {number} at
 * @param {number} minGranularityMs
 */
export function isRacy(record, at, minGranularityMs) {
  const { mtimeMs, ctimeMs } = record;
  const granularity = Math.max(ctimeMs % 10 === 0 ? COARSE_GRANULARITY_MS : FINE_GRANULARITY_MS, minGranularityMs);
  // Written so that a stamp that is not a number (never from a stat) counts as racy.
  return !(at - Math.max(mtimeMs, ctimeMs) > granularity + CLOCK_MARGIN_MS);
}
