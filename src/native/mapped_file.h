// MappedFile: a file mapped into memory as a SharedArrayBuffer, so that every
// process that maps the same file (and every worker thread it hands the
// buffer to) shares one arena.
//
// The steps are separate so that lib/arena/common/file.js can order them around the
// file lock: open (never following a symlink), inspect, lock (an OFD lock,
// released by the kernel when the process dies), size (allocating the blocks,
// so a full tmpfs fails here with ENOSPC rather than with SIGBUS on first
// touch), map (one backing store per mapping), and finally release or flush.
//
// A mapping owns its file descriptor: the descriptor (and with it the OFD
// lock that tells later openers the file is in use) lives exactly as long as
// the mapping does.
#pragma once

#include <napi.h>

namespace arenacache {

class MappedFile {
 public:
  static void Init(Napi::Env env, Napi::Object exports);

 private:
  // fileOpen(path, createMode) -> [fd, created]: opens read-write without
  // following a final symlink; with createMode > 0, creates the file with
  // that mode if it does not exist.
  static Napi::Value Open(const Napi::CallbackInfo& info);
  // fileOpenReadOnly(path) -> fd: opens read-only (O_RDONLY), without
  // following a final symlink and without blocking on a FIFO.
  static Napi::Value OpenReadOnly(const Napi::CallbackInfo& info);
  // fileStat(fd) -> { size, uid, euid, mode, regular, dev, ino, memoryBacked }
  // (memoryBacked: on tmpfs or ramfs)
  static Napi::Value Stat(const Napi::CallbackInfo& info);
  // fileLock(fd, kind, wait) -> boolean: kind 0 unlocks, 1 shared, 2
  // exclusive (an OFD lock of bytes 0 to 2^40, the arena however large, not
  // the liveness bytes past it; converting is atomic). false when it would
  // block and `wait` is false.
  static Napi::Value Lock(const Napi::CallbackInfo& info);
  // fileLockHolder(fd) -> number: the lock other open file descriptions
  // hold on the arena's range: 0 none (no process has the arena open), 1
  // shared (processes use it), 2 exclusive (an opener is creating,
  // resetting or recovering it). Takes no lock.
  static Napi::Value LockHolder(const Napi::CallbackInfo& info);
  // fileResize(fd, size): sets the length and allocates every block.
  static Napi::Value Resize(const Napi::CallbackInfo& info);
  // fileMap(fd, size, populate) -> SharedArrayBuffer; populate 0 leaves pages
  // to fault in on use, 1 prefaults them readable, 2 writable. On success the
  // mapping owns fd; on failure the caller still does.
  static Napi::Value Map(const Napi::CallbackInfo& info);
  // fileMapReadOnly(fd, size) -> SharedArrayBuffer: as fileMap, but mapped
  // PROT_READ (shared, so it sees other processes' writes): a store through
  // it faults. For a descriptor from fileOpenReadOnly.
  static Napi::Value MapReadOnly(const Napi::CallbackInfo& info);
  // fileClose(fd)
  static Napi::Value Close(const Napi::CallbackInfo& info);
  // mappingRetain(view) -> boolean: this thread becomes one more user of the
  // mapping `view` starts at; false if it is not a mapping (an in-memory
  // arena). fileMap counts its caller as the first user.
  static Napi::Value Retain(const Napi::CallbackInfo& info);
  // mappingRelease(view) -> number: this thread is one user fewer; at zero
  // the file is unmapped (the address range is replaced by zeroed private
  // memory, so views still held read zeros instead of faulting) and its
  // descriptor and lock are closed. Returns the users left, or -1 if this
  // thread holds no use of such a mapping. A thread that exits (or is
  // terminated) gives back the uses it still holds.
  static Napi::Value Release(const Napi::CallbackInfo& info);
  // mappingReleaseClean(view, offset, mark) -> [left, marked]:
  // mappingRelease(), except that the last user of the mapping, if no other
  // open file description holds the arena's lock (the file's last user in
  // any process), first stores the 32-bit `mark` at byte `offset` (a
  // multiple of 4): on disk after writing the mapping back (msync and
  // fdatasync), and then the mark's page. `marked` says whether it did.
  static Napi::Value ReleaseClean(const Napi::CallbackInfo& info);
  // mappingFlush(view) -> Promise: msync(MS_SYNC) and fdatasync on a worker
  // thread; rejects with the errno error.
  static Napi::Value Flush(const Napi::CallbackInfo& info);
  // livenessHold(view, id) -> boolean: this thread takes the liveness lock
  // of claim `id` (1 to 2^30) of the arena file mapped at `view`: a write
  // lock on one byte past the arena, through an open file description of
  // the thread's own, kept until the thread ends (or livenessRelease). The
  // kernel drops it when the process dies, so any process, in any PID
  // namespace, can tell whether the claim's thread lives (livenessAlive).
  // false when another thread holds it.
  static Napi::Value LivenessHold(const Napi::CallbackInfo& info);
  // livenessRelease(view, id) -> boolean: gives one hold back (false: none
  // held); the lock is dropped at the last.
  static Napi::Value LivenessRelease(const Napi::CallbackInfo& info);
  // livenessAlive(view, id) -> boolean: whether a thread holds its write
  // lock (a read lock is anyone's who may read the file, never an owner's).
  static Napi::Value LivenessAlive(const Napi::CallbackInfo& info);
  // mappingLockHolder(view) -> number: fileLockHolder() of the file mapped
  // at `view` (its mapping's own descriptor holds none for an inspection).
  static Napi::Value MappingLockHolder(const Napi::CallbackInfo& info);
};

}  // namespace arenacache
