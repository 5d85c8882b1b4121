#include "mapped_file.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>

#include "arguments.h"
#include "errors.h"
#include "external_shared_buffer.h"
#include "truncation_guard.h"

namespace arenacache {

namespace {

struct Mapping {
  void* address;
  size_t length;
  int fd;
  int users;
  bool released;
  // Its last user is marking it clean (ReleaseMarkingClean), outside the
  // registry mutex: it takes no new users and is not populated meanwhile.
  bool closing = false;
};

// Every live mapping of this process by its address (shared by all threads:
// a buffer created in one worker is released or flushed from another).
// Never destroyed: the background populate thread (PopulateInBackground)
// may still use them while the process exits.
std::mutex& registryMutex = *new std::mutex();
std::unordered_map<uintptr_t, Mapping*>& registry = *new std::unordered_map<uintptr_t, Mapping*>();

// The users each thread (Node environment) holds, by mapping address: a
// worker that exits or is terminated without closing its caches gives them
// back when its environment is torn down. (This is the addon's only
// instance data.)
struct EnvHolds {
  std::unordered_map<uintptr_t, int> counts;
  // This thread's liveness locks (see livenessHold): a descriptor of its own
  // per arena file and claim id, with the holds counted (each cache
  // instance of the thread on the file is one), closed at the last release
  // or when the thread ends, which drops the lock. While the descriptor is
  // open its file's inode cannot be freed, so (dev, ino) cannot come to
  // name another file.
  struct LivenessHold {
    int fd;
    int holds;
  };
  using LivenessKey = std::tuple<dev_t, ino_t, int>;
  std::map<LivenessKey, LivenessHold> liveness;
};

// Byte ranges of an arena file's OFD locks. Openers lock [0,
// kLivenessBase): the arena itself, however large. The thread that claimed
// the file under id `c` (1 to kMaxClaimId, see lib/arena/common/liveness.js) is
// alive while byte kLivenessBase + c is write-locked: past any arena, so
// the two kinds never conflict, and far below the largest lock offset.
constexpr off_t kLivenessBase = off_t{1} << 40;
constexpr int64_t kMaxClaimId = int64_t{1} << 30;

// Replaces the file's pages with zeroed private memory at the same address:
// the file is no longer mapped (its descriptor and lock are closed), yet a
// stale view in this process reads zeros instead of faulting. The range
// itself is unmapped when V8 frees the last buffer over it. Called with
// registryMutex held, at the last user's release.
int UnmapFile(Mapping* mapping) {
  void* replaced = mmap(mapping->address, mapping->length, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
  if (replaced == MAP_FAILED) return errno;
  close(mapping->fd);
  mapping->released = true;
  return 0;
}

// Gives back `count` users of the mapping at `address`, if it still exists.
// Returns the users left (-1: no such mapping) or, on failure, -errno - 2.
int ReleaseUsers(uintptr_t address, int count) {
  std::lock_guard<std::mutex> guard(registryMutex);
  auto found = registry.find(address);
  if (found == registry.end() || found->second->released) return -1;
  Mapping* mapping = found->second;
  mapping->users -= count;
  if (mapping->users > 0) return mapping->users;
  const int error = UnmapFile(mapping);
  if (error != 0) {
    mapping->users += count;
    return -error - 2;
  }
  return 0;
}

// Whether the file open at `fd` lives in memory only (tmpfs, ramfs).
bool MemoryBacked(int fd) {
  struct statfs fs;
  return fstatfs(fd, &fs) == 0 && (fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC);
}

// The arena's range of its file for an OFD lock of `type`: [0,
// kLivenessBase), the arena however long, not the liveness bytes past it.
struct flock ArenaRange(short type) {
  struct flock lock = {};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  lock.l_start = 0;
  lock.l_len = kLivenessBase;
  return lock;
}

// The arena's OFD lock on `fd` set to `type` without waiting; whether it was.
bool SetArenaLock(int fd, short type) {
  struct flock lock = ArenaRange(type);
  int result = 0;
  while ((result = fcntl(fd, F_OFD_SETLK, &lock)) != 0 && errno == EINTR) {
  }
  return result == 0;
}

// For the last user of a mapping, before it is unmapped: if no other open
// file description holds the arena's lock (no other process has the file
// open, nor another open() of this one), stores the 32-bit `mark` at byte
// `offset` of the mapping. A file on disk is written back first (msync and
// fdatasync), and the mark's page after it, so a mark that reached the disk
// vouches for every byte written before it. The exclusive lock taken here
// keeps new openers out until the unmap closes the descriptor (an opener
// already waiting for a shared lock gets it then, and clears the mark: see
// lib/arena/entries/restart.js). Returns whether the mark was stored.
// Called without registryMutex: a write-back of a large file takes seconds.
bool MarkClean(void* address, size_t length, int fd, size_t offset, uint32_t mark) {
  if (!SetArenaLock(fd, F_WRLCK) || offset + sizeof(uint32_t) > length) return false;
  const bool onDisk = !MemoryBacked(fd);
  if (onDisk && (msync(address, length, MS_SYNC) != 0 || fdatasync(fd) != 0)) return false;
  auto* word = reinterpret_cast<uint32_t*>(static_cast<char*>(address) + offset);
  __atomic_store_n(word, mark, __ATOMIC_SEQ_CST);
  if (!onDisk) return true;
  const size_t page = offset & ~static_cast<size_t>(sysconf(_SC_PAGESIZE) - 1);
  return msync(static_cast<char*>(address) + page, sizeof(uint32_t) + offset - page, MS_SYNC) == 0 &&
         fdatasync(fd) == 0;
}

// ReleaseUsers() for one user that, if it is the mapping's last, first
// marks the file closed cleanly (MarkClean), with the mapping set closing
// meanwhile. Returns the users left (-1: no such mapping) or, on failure,
// -errno - 2; `marked` says whether it marked.
int ReleaseMarkingClean(uintptr_t address, size_t offset, uint32_t mark, bool* marked) {
  *marked = false;
  Mapping* mapping = nullptr;
  {
    std::lock_guard<std::mutex> guard(registryMutex);
    auto found = registry.find(address);
    if (found == registry.end() || found->second->released || found->second->closing) return -1;
    mapping = found->second;
    if (mapping->users > 1) return --mapping->users;
    mapping->closing = true;
  }
  // The caller's view keeps the buffer, and so the Mapping, alive.
  *marked = MarkClean(mapping->address, mapping->length, mapping->fd, offset, mark);
  std::lock_guard<std::mutex> guard(registryMutex);
  mapping->closing = false;
  mapping->users = 0;
  const int error = UnmapFile(mapping);
  if (error != 0) {
    mapping->users = 1;
    if (*marked) {
      // Still mapped and in use: the mark would vouch for writes to come.
      __atomic_store_n(reinterpret_cast<uint32_t*>(static_cast<char*>(mapping->address) + offset), 0u,
                       __ATOMIC_SEQ_CST);
      *marked = false;
    }
    SetArenaLock(mapping->fd, F_RDLCK);
    return -error - 2;
  }
  return 0;
}

void ReleaseEnvHolds(Napi::Env /*env*/, EnvHolds* holds) {
  for (const auto& [address, count] : holds->counts) {
    if (count > 0) ReleaseUsers(address, count);
  }
  for (const auto& [key, held] : holds->liveness) close(held.fd);
  delete holds;
}

EnvHolds* HoldsOf(Napi::Env env) {
  EnvHolds* holds = env.GetInstanceData<EnvHolds>();
  if (holds == nullptr) {
    holds = new EnvHolds();
    env.SetInstanceData<EnvHolds, ReleaseEnvHolds>(holds);
  }
  return holds;
}

void DeleteMapping(void* /*data*/, size_t /*length*/, void* hint) {
  Mapping* mapping = static_cast<Mapping*>(hint);
  {
    std::lock_guard<std::mutex> guard(registryMutex);
    registry.erase(reinterpret_cast<uintptr_t>(mapping->address));
  }
  TruncationGuard::Unguard(mapping->address);
  munmap(mapping->address, mapping->length);
  if (!mapping->released) close(mapping->fd);
  delete mapping;
}

// The data pointer of the Uint8Array argument 0 (the mapping it starts at,
// if it is one), or false with a TypeError thrown. A detached view has no
// data: it is no mapping.
bool ViewArgument(const Napi::CallbackInfo& info, const char* signature, void** data) {
  Arguments args(info, signature);
  size_t length = 0;
  return args.Count(1) && args.TypedArray(args.At(0, "view"), napi_uint8_array, -1, "a Uint8Array", data, &length);
}

Napi::Value OpenResult(Napi::Env env, int fd, bool created) {
  Napi::Array result = Napi::Array::New(env, 2);
  result.Set(0u, Napi::Number::New(env, fd));
  result.Set(1u, Napi::Boolean::New(env, created));
  return result;
}

// A descriptor argument: any int32 >= 0 (EBADF is the kernel's to say).
bool Fd(Arguments& args, size_t index, int* fd) { return args.Integer(args.At(index, "fd"), 0, INT32_MAX, fd); }

class FlushWorker : public Napi::AsyncWorker {
 public:
  FlushWorker(Napi::Env env, Napi::Object view, void* address, size_t length, int fd)
      : Napi::AsyncWorker(env), deferred_(Napi::Promise::Deferred::New(env)), address_(address), length_(length),
        fd_(fd) {
    // Keeps the buffer (and so the mapping) alive until the flush is done.
    view_ = Napi::Persistent(view);
  }
  ~FlushWorker() override {
    if (fd_ >= 0) close(fd_);
  }

  Napi::Promise Promise() { return deferred_.Promise(); }

  void Execute() override {
    if (msync(address_, length_, MS_SYNC) != 0) {
      error_ = errno;
      syscall_ = "msync";
    } else if (fdatasync(fd_) != 0) {
      error_ = errno;
      syscall_ = "fdatasync";
    }
  }

  void OnOK() override {
    Napi::Env env = Env();
    if (error_ == 0) {
      deferred_.Resolve(env.Undefined());
      return;
    }
    deferred_.Reject(FsError(env, error_, syscall_).Value());
  }

 private:
  Napi::Promise::Deferred deferred_;
  Napi::ObjectReference view_;
  void* address_;
  size_t length_;
  int fd_;
  int error_ = 0;
  const char* syscall_ = "";
};

}  // namespace

void MappedFile::Init(Napi::Env env, Napi::Object exports) {
  exports.Set("fileOpen", Napi::Function::New(env, Open, "fileOpen"));
  exports.Set("fileOpenReadOnly", Napi::Function::New(env, OpenReadOnly, "fileOpenReadOnly"));
  exports.Set("fileStat", Napi::Function::New(env, Stat, "fileStat"));
  exports.Set("fileLock", Napi::Function::New(env, Lock, "fileLock"));
  exports.Set("fileLockHolder", Napi::Function::New(env, LockHolder, "fileLockHolder"));
  exports.Set("mappingLockHolder", Napi::Function::New(env, MappingLockHolder, "mappingLockHolder"));
  exports.Set("fileResize", Napi::Function::New(env, Resize, "fileResize"));
  exports.Set("fileMap", Napi::Function::New(env, Map, "fileMap"));
  exports.Set("fileMapReadOnly", Napi::Function::New(env, MapReadOnly, "fileMapReadOnly"));
  exports.Set("fileClose", Napi::Function::New(env, Close, "fileClose"));
  exports.Set("mappingRetain", Napi::Function::New(env, Retain, "mappingRetain"));
  exports.Set("mappingRelease", Napi::Function::New(env, Release, "mappingRelease"));
  exports.Set("mappingReleaseClean", Napi::Function::New(env, ReleaseClean, "mappingReleaseClean"));
  exports.Set("mappingFlush", Napi::Function::New(env, Flush, "mappingFlush"));
  exports.Set("livenessHold", Napi::Function::New(env, LivenessHold, "livenessHold"));
  exports.Set("livenessRelease", Napi::Function::New(env, LivenessRelease, "livenessRelease"));
  exports.Set("livenessAlive", Napi::Function::New(env, LivenessAlive, "livenessAlive"));
}

Napi::Value MappedFile::Open(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Arguments args(info, "fileOpen(path, createMode)");
  std::string path;
  int createMode = 0;
  if (!args.Count(2) || !args.Path(args.At(0, "path"), &path) ||
      !args.Integer(args.At(1, "createMode"), 0, 07777, &createMode)) {
    return env.Undefined();
  }
  const int flags = O_RDWR | O_CLOEXEC | O_NOFOLLOW;
  for (;;) {
    int fd = open(path.c_str(), flags);
    if (fd >= 0) return OpenResult(env, fd, false);
    if (errno != ENOENT || createMode <= 0) return ThrowFsError(env, errno, "open", path);
    fd = open(path.c_str(), flags | O_CREAT | O_EXCL, static_cast<mode_t>(createMode));
    if (fd >= 0) {
      // The umask may have cleared bits of the requested mode; set it exactly.
      if (fchmod(fd, static_cast<mode_t>(createMode)) != 0) {
        const int error = errno;
        close(fd);
        return ThrowFsError(env, error, "fchmod");
      }
      return OpenResult(env, fd, true);
    }
    // Someone else created it between the two opens: open theirs.
    if (errno != EEXIST) return ThrowFsError(env, errno, "open", path);
  }
}

Napi::Value MappedFile::OpenReadOnly(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Arguments args(info, "fileOpenReadOnly(path)");
  std::string path;
  if (!args.Count(1) || !args.Path(args.At(0, "path"), &path)) return env.Undefined();
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
  // writer (the caller refuses anything but a regular file, where the flag
  // changes nothing); O_NOCTTY: a terminal never becomes ours.
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return ThrowFsError(env, errno, "open", path);
  return Napi::Number::New(env, fd);
}

Napi::Value MappedFile::Stat(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Arguments args(info, "fileStat(fd)");
  int fd = -1;
  if (!args.Count(1) || !Fd(args, 0, &fd)) return env.Undefined();
  struct stat st;
  if (fstat(fd, &st) != 0) return ThrowFsError(env, errno, "fstat");
  Napi::Object result = Napi::Object::New(env);
  result.Set("size", Napi::Number::New(env, static_cast<double>(st.st_size)));
  result.Set("uid", Napi::Number::New(env, st.st_uid));
  result.Set("euid", Napi::Number::New(env, geteuid()));
  result.Set("mode", Napi::Number::New(env, st.st_mode & 07777));
  result.Set("regular", Napi::Boolean::New(env, S_ISREG(st.st_mode)));
  result.Set("dev", Napi::Number::New(env, static_cast<double>(st.st_dev)));
  result.Set("ino", Napi::Number::New(env, static_cast<double>(st.st_ino)));
  // In memory only (tmpfs, ramfs): a machine crash takes the file with it,
  // so a file that survives has only seen processes die, never pages
  // written back in part.
  result.Set("memoryBacked", Napi::Boolean::New(env, MemoryBacked(fd)));
  return result;
}

Napi::Value MappedFile::Lock(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Arguments args(info, "fileLock(fd, kind, wait)");
  int fd = -1;
  int kind = 0;
  bool wait = false;
  if (!args.Count(3) || !Fd(args, 0, &fd) || !args.Integer(args.At(1, "kind"), 0, 2, &kind) ||
      !args.Boolean(args.At(2, "wait"), &wait)) {
    return env.Undefined();
  }
  struct flock lock = ArenaRange(kind == 0 ? F_UNLCK : kind == 1 ? F_RDLCK : F_WRLCK);
  for (;;) {
    if (fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &lock) == 0) return Napi::Boolean::New(env, true);
    if (errno == EINTR) continue;
    if (!wait && (errno == EAGAIN || errno == EACCES)) return Napi::Boolean::New(env, false);
    return ThrowFsError(env, errno, "fcntl(F_OFD_SETLK)");
  }
}

namespace {

// The lock other open file descriptions hold on the arena's range of the
// file open at `fd` (0 none, 1 shared, 2 exclusive), or -1 with errno set.
// Asks, takes nothing. An exclusive lock conflicts with every other:
// F_OFD_GETLK describes one that is held, and an exclusive one is the only
// one while it is held.
int LockHolderOf(int fd) {
  struct flock lock = ArenaRange(F_WRLCK);
  int result = 0;
  while ((result = fcntl(fd, F_OFD_GETLK, &lock)) != 0 && errno == EINTR) {
  }
  if (result != 0) return -1;
  return lock.l_type == F_WRLCK ? 2 : lock.l_type == F_RDLCK ? 1 : 0;
}

}  // namespace

Napi::Value MappedFile::LockHolder(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Arguments args(info, "fileLockHolder(fd)");
  int fd = -1;
  if (!args.Count(1) || !Fd(args, 0, &fd)) return env.Undefined();
  const int holder = LockHolderOf(fd);
  if (holder < 0) return ThrowFsError(env, errno, "fcntl(F_OFD_GETLK)");
  return Napi::Number::New(env, holder);
}

Napi::Value MappedFile::Resize(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Arguments args(info, "fileResize(fd, size)");
  int fd = -1;
  off_t size = 0;
  if (!args.Count(2) || !Fd(args, 0, &fd) || !args.Integer(args.At(1, "size"), 0, kMaxSafeInteger, &size)) {
    return env.Undefined();
  }
  if (ftruncate(fd, size) != 0) return ThrowFsError(env, errno, "ftruncate");
  // Reserve the blocks now: on tmpfs (/dev/shm) a sparse file would fault
  // with SIGBUS on first write once memory runs out.
  const int error = size > 0 ? posix_fallocate(fd, 0, size) : 0;
  if (error != 0 && error != EOPNOTSUPP) return ThrowFsError(env, error, "posix_fallocate");
  return env.Undefined();
}

namespace {

// Faults the pages of the mapping at `address` in for reading, a slice at
// a time, while it is still registered and not released or closing; stops
// at the first slice it finds it gone, or at an error (a kernel without
// MADV_POPULATE_READ). registryMutex is held only to look: this thread runs
// at the lowest priority, and on a busy machine it could be descheduled
// for a long time while holding it, stalling every retain and release. A
// release may unmap the range during a slice: madvise then fails, or faults
// in the zero pages of what replaced it, and only reads either way.
void* PopulateInBackground(void* argument) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(argument);
  constexpr size_t kSlice = size_t{4} << 20;
  // At the lowest priority: the threads using the cache come first.
  setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 19);
  for (size_t done = 0;;) {
    size_t slice = 0;
    {
      std::lock_guard<std::mutex> guard(registryMutex);
      auto found = registry.find(address);
      if (found == registry.end()) return nullptr;
      const Mapping* mapping = found->second;
      if (mapping->released || mapping->closing || done >= mapping->length) return nullptr;
      slice = std::min(kSlice, mapping->length - done);
    }
    if (madvise(reinterpret_cast<char*>(address) + done, slice, MADV_POPULATE_READ) != 0) return nullptr;
    done += slice;
  }
}

// Starts PopulateInBackground for the mapping at `address`, detached; a
// thread that cannot be made (a pids limit) only leaves the pages to fault
// in on first use.
void StartPopulating(uintptr_t address) {
  pthread_t thread;
  if (pthread_create(&thread, nullptr, PopulateInBackground, reinterpret_cast<void*>(address)) == 0)
    pthread_detach(thread);
}

// Maps `length` bytes of `fd` shared, with protection `prot`; the mapping
// then owns fd. Throws (returning undefined) on failure, fd still the caller's.
Napi::Value MapShared(const Napi::CallbackInfo& info, Arguments& args, int fd, size_t length, int populate, int prot) {
  Napi::Env env = info.Env();
  // Pages past the end of a file fault with SIGBUS when touched: a size
  // beyond the file's would crash the process at its first read there.
  struct stat st;
  if (fstat(fd, &st) != 0) return ThrowFsError(env, errno, "fstat");
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) < length) {
    const std::string what = "at most the file's size, " + std::to_string(st.st_size) + " bytes";
    args.Fail(true, args.At(1, "size"), what);
    return env.Undefined();
  }
  void* address = mmap(nullptr, length, prot, MAP_SHARED, fd, 0);
  if (address == MAP_FAILED) return ThrowFsError(env, errno, "mmap");
  // Fault the pages in, so that first touches do not dominate the first
  // operations: writable for a new arena, now (all of it is about to be
  // written); readable for an existing one (writable would mark every page
  // of a disk file dirty, to be written back in full), in the background:
  // 0.1 s per GiB in memory, seconds from a disk, that open() need not wait
  // for. Kernels before 5.14 lack these: then pages fault in on first use,
  // which is only slower.
  if (populate == 2) madvise(address, length, MADV_POPULATE_WRITE);
  // A truncation of the file from outside must not kill this process (see truncation_guard.h).
  TruncationGuard::Guard(address, length);
  Mapping* mapping = new Mapping{address, length, fd, 1, false};
  {
    std::lock_guard<std::mutex> guard(registryMutex);
    registry[reinterpret_cast<uintptr_t>(address)] = mapping;
  }
  if (populate == 1) StartPopulating(reinterpret_cast<uintptr_t>(address));
  HoldsOf(env)->counts[reinterpret_cast<uintptr_t>(address)]++;
  return NewExternalSharedArrayBuffer(env, address, length, DeleteMapping, mapping);
}

}  // namespace

Napi::Value MappedFile::Map(const Napi::CallbackInfo& info) {
  Arguments args(info, "fileMap(fd, size, populate)");
  int fd = -1;
  size_t length = 0;
  int populate = 0;
  if (!args.Count(3) || !Fd(args, 0, &fd) || !args.Integer(args.At(1, "size"), 1, kMaxSafeInteger, &length) ||
      !args.Integer(args.At(2, "populate"), 0, 2, &populate)) {
    return info.Env().Undefined();
  }
  return MapShared(info, args, fd, length, populate, PROT_READ | PROT_WRITE);
}

Napi::Value MappedFile::MapReadOnly(const Napi::CallbackInfo& info) {
  Arguments args(info, "fileMapReadOnly(fd, size)");
  int fd = -1;
  size_t length = 0;
  if (!args.Count(2) || !Fd(args, 0, &fd) || !args.Integer(args.At(1, "size"), 1, kMaxSafeInteger, &length)) {
    return info.Env().Undefined();
  }
  // PROT_READ: a store through the buffer faults instead of reaching the file.
  return MapShared(info, args, fd, length, 0, PROT_READ);
}

Napi::Value MappedFile::Close(const Napi::CallbackInfo& info) {
  Arguments args(info, "fileClose(fd)");
  int fd = -1;
  if (!args.Count(1) || !Fd(args, 0, &fd)) return info.Env().Undefined();
  if (close(fd) != 0) return ThrowFsError(info.Env(), errno, "close");
  return info.Env().Undefined();
}

Napi::Value MappedFile::Retain(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  void* data = nullptr;
  if (!ViewArgument(info, "mappingRetain(view)", &data)) return env.Undefined();
  const uintptr_t address = reinterpret_cast<uintptr_t>(data);
  {
    std::lock_guard<std::mutex> guard(registryMutex);
    auto found = registry.find(address);
    if (found == registry.end() || found->second->released || found->second->closing)
      return Napi::Boolean::New(env, false);
    found->second->users++;
  }
  HoldsOf(env)->counts[address]++;
  return Napi::Boolean::New(env, true);
}

Napi::Value MappedFile::Release(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  void* data = nullptr;
  if (!ViewArgument(info, "mappingRelease(view)", &data)) return env.Undefined();
  const uintptr_t address = reinterpret_cast<uintptr_t>(data);
  EnvHolds* holds = HoldsOf(env);
  auto held = holds->counts.find(address);
  // Only what this thread holds can be given back from it.
  if (held == holds->counts.end() || held->second == 0) return Napi::Number::New(env, -1);
  const int left = ReleaseUsers(address, 1);
  if (left < -1) return ThrowFsError(env, -(left + 2), "mmap(MAP_FIXED)");
  held->second--;
  return Napi::Number::New(env, left);
}

Napi::Value MappedFile::ReleaseClean(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Arguments args(info, "mappingReleaseClean(view, offset, mark)");
  void* data = nullptr;
  size_t length = 0;
  int64_t offset = 0;
  uint32_t mark = 0;
  if (!args.Count(3) || !args.TypedArray(args.At(0, "view"), napi_uint8_array, -1, "a Uint8Array", &data, &length) ||
      !args.Integer(args.At(1, "offset"), 0, kMaxSafeInteger, &offset) ||
      !args.Integer(args.At(2, "mark"), 0, UINT32_MAX, &mark)) {
    return env.Undefined();
  }
  if (offset % 4 != 0) {
    args.Fail(true, args.At(1, "offset"), "a multiple of 4");
    return env.Undefined();
  }
  const uintptr_t address = reinterpret_cast<uintptr_t>(data);
  EnvHolds* holds = HoldsOf(env);
  auto held = holds->counts.find(address);
  Napi::Array result = Napi::Array::New(env, 2);
  if (held == holds->counts.end() || held->second == 0) {
    result.Set(0u, Napi::Number::New(env, -1));
    result.Set(1u, Napi::Boolean::New(env, false));
    return result;
  }
  bool marked = false;
  const int left = ReleaseMarkingClean(address, static_cast<size_t>(offset), mark, &marked);
  if (left < -1) return ThrowFsError(env, -(left + 2), "mmap(MAP_FIXED)");
  held->second--;
  result.Set(0u, Napi::Number::New(env, left));
  result.Set(1u, Napi::Boolean::New(env, marked));
  return result;
}

Napi::Value MappedFile::Flush(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  void* data = nullptr;
  if (!ViewArgument(info, "mappingFlush(view)", &data)) return env.Undefined();
  void* address = nullptr;
  size_t length = 0;
  int fd = -1;
  {
    std::lock_guard<std::mutex> guard(registryMutex);
    auto found = registry.find(reinterpret_cast<uintptr_t>(data));
    if (found != registry.end() && !found->second->released) {
      address = found->second->address;
      length = found->second->length;
      // A descriptor of its own, so a release during the flush cannot close it under us.
      fd = fcntl(found->second->fd, F_DUPFD_CLOEXEC, 0);
      if (fd < 0) return ThrowFsError(env, errno, "fcntl(F_DUPFD_CLOEXEC)");
    }
  }
  if (fd < 0) return ThrowFsError(env, EINVAL, "msync");
  FlushWorker* worker = new FlushWorker(env, info[0].As<Napi::Object>(), address, length, fd);
  Napi::Promise promise = worker->Promise();
  worker->Queue();
  return promise;
}

namespace {

// The descriptor of the mapping `view` starts at, duplicated (so a release
// meanwhile cannot close it under us), or -1 with errno set.
int MappingFd(void* data) {
  std::lock_guard<std::mutex> guard(registryMutex);
  auto found = registry.find(reinterpret_cast<uintptr_t>(data));
  if (found == registry.end() || found->second->released) {
    errno = EBADF;
    return -1;
  }
  return fcntl(found->second->fd, F_DUPFD_CLOEXEC, 0);
}

bool LivenessArguments(const Napi::CallbackInfo& info, const char* signature, void** data, int* id) {
  Arguments args(info, signature);
  size_t length = 0;
  return args.Count(2) && args.TypedArray(args.At(0, "view"), napi_uint8_array, -1, "a Uint8Array", data, &length) &&
         args.Integer(args.At(1, "id"), 1, kMaxClaimId, id);
}

// The key of a liveness hold of claim `id` on the file open at `fd`; false
// (errno set) when it cannot be told.
bool LivenessKeyOf(int fd, int id, EnvHolds::LivenessKey* key) {
  struct stat st;
  if (fstat(fd, &st) != 0) return false;
  *key = std::make_tuple(st.st_dev, st.st_ino, id);
  return true;
}

struct flock LivenessByte(int id, short type) {
  struct flock lock = {};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  lock.l_start = kLivenessBase + id;
  lock.l_len = 1;
  return lock;
}

}  // namespace

Napi::Value MappedFile::LivenessHold(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  void* data = nullptr;
  int id = 0;
  if (!LivenessArguments(info, "livenessHold(view, id)", &data, &id)) return env.Undefined();
  const int mappingFd = MappingFd(data);
  if (mappingFd < 0) return ThrowFsError(env, errno, "livenessHold");
  EnvHolds::LivenessKey key;
  if (!LivenessKeyOf(mappingFd, id, &key)) {
    const int statError = errno;
    close(mappingFd);
    return ThrowFsError(env, statError, "fstat");
  }
  EnvHolds* holds = HoldsOf(env);
  auto held = holds->liveness.find(key);
  if (held != holds->liveness.end()) {
    close(mappingFd);
    held->second.holds++;
    return Napi::Boolean::New(env, true);
  }
  // An open file description of this thread's own (a dup() would share the
  // mapping's, whose locks are the process's): opened through the
  // descriptor, never by path, so it is the very file that is mapped.
  const std::string self = "/proc/self/fd/" + std::to_string(mappingFd);
  const int fd = open(self.c_str(), O_RDWR | O_CLOEXEC);
  const int openError = errno;
  close(mappingFd);
  if (fd < 0) return ThrowFsError(env, openError, "open", self);
  struct flock lock = LivenessByte(id, F_WRLCK);
  for (;;) {
    if (fcntl(fd, F_OFD_SETLK, &lock) == 0) break;
    if (errno == EINTR) continue;
    const int error = errno;
    close(fd);
    // Held: the claim's thread is alive (in this namespace or another).
    if (error == EAGAIN || error == EACCES) return Napi::Boolean::New(env, false);
    return ThrowFsError(env, error, "fcntl(F_OFD_SETLK)");
  }
  holds->liveness[key] = EnvHolds::LivenessHold{fd, 1};
  return Napi::Boolean::New(env, true);
}

Napi::Value MappedFile::LivenessRelease(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  void* data = nullptr;
  int id = 0;
  if (!LivenessArguments(info, "livenessRelease(view, id)", &data, &id)) return env.Undefined();
  const int mappingFd = MappingFd(data);
  if (mappingFd < 0) return Napi::Boolean::New(env, false);
  EnvHolds::LivenessKey key;
  const bool known = LivenessKeyOf(mappingFd, id, &key);
  close(mappingFd);
  if (!known) return Napi::Boolean::New(env, false);
  EnvHolds* holds = HoldsOf(env);
  auto found = holds->liveness.find(key);
  if (found == holds->liveness.end()) return Napi::Boolean::New(env, false);
  if (--found->second.holds == 0) {
    close(found->second.fd);
    holds->liveness.erase(found);
  }
  return Napi::Boolean::New(env, true);
}

Napi::Value MappedFile::LivenessAlive(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  void* data = nullptr;
  int id = 0;
  if (!LivenessArguments(info, "livenessAlive(view, id)", &data, &id)) return env.Undefined();
  const int mappingFd = MappingFd(data);
  if (mappingFd < 0) return ThrowFsError(env, errno, "livenessAlive");
  struct flock lock = LivenessByte(id, F_WRLCK);
  // A lock of another open file description (any thread's, this one's own
  // included) is reported; the mapping's own description holds none there.
  int result = 0;
  while ((result = fcntl(mappingFd, F_OFD_GETLK, &lock)) != 0 && errno == EINTR) {
  }
  const int error = errno;
  close(mappingFd);
  if (result != 0) return ThrowFsError(env, error, "fcntl(F_OFD_GETLK)");
  // Only a write lock is an owner's (livenessHold takes nothing else). A
  // read lock is anyone's who may read the file (a group- or
  // world-readable arena): it must not make a dead owner look alive.
  return Napi::Boolean::New(env, lock.l_type == F_WRLCK);
}

Napi::Value MappedFile::MappingLockHolder(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  void* data = nullptr;
  if (!ViewArgument(info, "mappingLockHolder(view)", &data)) return env.Undefined();
  const int mappingFd = MappingFd(data);
  if (mappingFd < 0) return ThrowFsError(env, errno, "mappingLockHolder");
  const int holder = LockHolderOf(mappingFd);
  const int error = errno;
  close(mappingFd);
  if (holder < 0) return ThrowFsError(env, error, "fcntl(F_OFD_GETLK)");
  return Napi::Number::New(env, holder);
}

}  // namespace arenacache
