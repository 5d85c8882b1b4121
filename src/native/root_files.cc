#include "root_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "arguments.h"
#include "beneath.h"
#include "errors.h"
#include "node_stats.h"

namespace arenacache {

namespace {

// Above this, loaded data is handed to JavaScript without a copy (an
// external buffer freed by its finalizer); below, a copy into V8's memory
// is cheaper than the finalizer bookkeeping.
constexpr size_t kCopyLimit = 64 * 1024;
// The first read asks for the size fstat gave plus this, so a file that grew
// is noticed (and one reporting size 0, like /proc files, is read in chunks).
constexpr size_t kReadSlack = 64 * 1024;
// Linux moves at most this many bytes in one read or write.
constexpr size_t kMaxTransfer = 0x7ffff000;
// node:fs refuses to read a whole file larger than this (ERR_FS_FILE_TOO_LARGE).
constexpr size_t kMaxFileBytes = (size_t{1} << 31) - 1;
// Directories removed below one another at most: deeper trees have paths
// longer than PATH_MAX, which node:fs's rm fails on too.
constexpr int kMaxRemoveDepth = 2048;

constexpr int kRecursive = 1;
constexpr int kForce = 2;

// Closes a descriptor when it goes out of scope.
class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0) close(fd_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;

 private:
  int fd_;
};

// The names in a directory stream, without "." and ".."; false with errno on failure.
bool ReadNames(DIR* stream, std::vector<std::string>* names) {
  for (;;) {
    errno = 0;
    const dirent* entry = readdir(stream);
    if (entry == nullptr) return errno == 0;
    if (std::strcmp(entry->d_name, ".") == 0 || std::strcmp(entry->d_name, "..") == 0) continue;
    names->emplace_back(entry->d_name);
  }
}

// What a file that is neither regular nor a directory is, for a message.
const char* SpecialKind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return nullptr;
}

// A last component that kept a trailing "/" or "/." (see OpenParentBeneath).
bool AsksForDirectory(const std::string& name) { return name.find('/') != std::string::npos; }

// `path` without a trailing run of "/" and "." components: what node:fs's
// mkdir reports as made for "new/.".
std::string WithoutSuffix(const std::string& path) { return path.substr(0, SuffixStart(path)); }

int RemoveEntry(int dir, const std::string& name, int depth, const char** failed);

// Removes everything in the directory `fd` (taken over and closed), never
// following a link: each entry is removed relative to this descriptor.
int RemoveContents(int fd, int depth, const char** failed) {
  DIR* stream = fdopendir(fd);
  if (stream == nullptr) {
    const int error = errno;
    close(fd);
    errno = error;
    *failed = "scandir";
    return -1;
  }
  std::vector<std::string> names;
  int result = 0;
  if (!ReadNames(stream, &names)) {
    *failed = "scandir";
    result = -1;
  }
  for (size_t i = 0; result == 0 && i < names.size(); i++) result = RemoveEntry(dirfd(stream), names[i], depth, failed);
  const int error = errno;
  closedir(stream);
  errno = error;
  return result;
}

// Removes the entry `name` of directory `dir`, and all below it if it is a
// directory. An entry swapped for something else meanwhile is removed as
// what it is now; one gone already is fine.
int RemoveEntry(int dir, const std::string& name, int depth, const char** failed) {
  for (int attempt = 0; attempt < 3; attempt++) {
    if (unlinkat(dir, name.c_str(), 0) == 0 || errno == ENOENT) return 0;
    if (errno != EISDIR) {
      *failed = "unlink";
      return -1;
    }
    if (depth >= kMaxRemoveDepth) {
      errno = ENAMETOOLONG;
      *failed = "rmdir";
      return -1;
    }
    const int fd = openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) return 0;
      if (errno == ELOOP || errno == ENOTDIR) continue;  // no longer a directory
      *failed = "open";
      return -1;
    }
    if (RemoveContents(fd, depth + 1, failed) != 0) return -1;
    if (unlinkat(dir, name.c_str(), AT_REMOVEDIR) == 0 || errno == ENOENT) return 0;
    *failed = "rmdir";
    return -1;
  }
  *failed = "unlink";
  return -1;
}

// The descriptors kOpen handed to each environment (the main thread, each
// worker thread) and not closed yet. Node closes the descriptors a worker
// opened through node:fs when it exits; these it does not know, so an
// environment cleanup hook closes them.
std::mutex descriptorsMutex;
std::unordered_map<napi_env, std::unordered_set<int>> openDescriptors;

void CloseLeftDescriptors(void* arg) {
  const napi_env env = static_cast<napi_env>(arg);
  std::unordered_set<int> left;
  {
    std::lock_guard<std::mutex> guard(descriptorsMutex);
    auto found = openDescriptors.find(env);
    if (found == openDescriptors.end()) return;
    left.swap(found->second);
    openDescriptors.erase(found);
  }
  for (const int fd : left) close(fd);
}

void Remember(napi_env env, int fd) {
  std::lock_guard<std::mutex> guard(descriptorsMutex);
  auto [found, added] = openDescriptors.try_emplace(env);
  if (added) napi_add_env_cleanup_hook(env, CloseLeftDescriptors, env);
  found->second.insert(fd);
}

// Whether `fd` was handed to `env` (and is no longer counted as open).
bool Forget(napi_env env, int fd) {
  std::lock_guard<std::mutex> guard(descriptorsMutex);
  auto found = openDescriptors.find(env);
  return found != openDescriptors.end() && found->second.erase(fd) == 1;
}

}  // namespace

std::string RootFiles::Call::Absolute(const std::string& relative) const {
  if (relative.empty()) return rootPath;
  return rootPath == "/" ? "/" + relative : rootPath + "/" + relative;
}

int RootFiles::Call::Fail(int errnum, const char* call) {
  error = errnum;
  syscall = call;
  return -1;
}

int RootFiles::Call::Resolve(const std::string& relative, int openFlags, mode_t openMode, const char* call) {
  bool escaped = false;
  const int fd = ResolveBeneath(root, rootPath, relative, openFlags, openMode, Links::kFollowInside, &escaped);
  if (fd >= 0) return fd;
  if (escaped) {
    outside = true;
    outsidePath = relative;
  }
  return Fail(errno, call);
}

int RootFiles::Call::Parent(const std::string& relative, std::string* name, const char* call) {
  bool escaped = false;
  const int fd = OpenParentBeneath(root, rootPath, relative, name, &escaped);
  if (fd < 0) {
    if (escaped) {
      outside = true;
      outsidePath = relative;
    }
    return Fail(errno, call);
  }
  // "x/" and "x/." make the *at call look through a link x, wherever it
  // leads: it must lead beneath the root, as any lookup does (else what is
  // outside would show in the answer: EEXIST, ENOTDIR or ENOENT).
  if (AsksForDirectory(*name)) {
    const int probe =
        ResolveBeneath(root, rootPath, WithoutSuffix(relative), O_PATH, 0, Links::kFollowInside, &escaped);
    if (probe >= 0) {
      close(probe);
    } else if (escaped) {
      close(fd);
      outside = true;
      outsidePath = relative;
      return Fail(EXDEV, call);
    }
  }
  return fd;
}

bool RootFiles::Call::Stat(int file, uv_stat_t* out, const char* call) {
  // libuv's fstat (statx), as node:fs uses: the same fields, birth time included.
  uv_fs_t req;
  const int result = uv_fs_fstat(loop, &req, file, nullptr);
  if (result == 0) *out = req.statbuf;
  uv_fs_req_cleanup(&req);
  if (result < 0) Fail(-result, call);
  return result == 0;
}

// Opens `path` for reading or writing its data, refusing what is not a
// regular file (or a directory, whose read fails as node:fs's does): a FIFO
// would block the thread until a writer came, a device could stream forever.
// O_NONBLOCK makes that open return at once (ENXIO for a FIFO without a
// reader, or a socket); it is cleared again for the file's own I/O.
int RootFiles::Call::OpenFile(int openFlags, mode_t openMode, uv_stat_t* stats) {
  const int file = Resolve(path, openFlags | O_NONBLOCK, openMode, "open");
  if (file < 0) {
    if (error == ENXIO) special = "a FIFO, a socket or a device";
    return -1;
  }
  if (!Stat(file, stats, "fstat")) {
    close(file);
    return -1;
  }
  special = SpecialKind(static_cast<mode_t>(stats->st_mode));
  if (special != nullptr) {
    close(file);
    Fail(EINVAL, "open");
    return -1;
  }
  const int status = fcntl(file, F_GETFL);
  if (status < 0 || fcntl(file, F_SETFL, status & ~O_NONBLOCK) != 0) {
    Fail(errno, "fcntl");
    close(file);
    return -1;
  }
  return file;
}

void RootFiles::Call::Run() {
  switch (op) {
    case kOpen: fd = OpenFile(flags, static_cast<mode_t>(mode), &after); break;
    case kStat: {
      const int file = Resolve(path, O_PATH, 0, "stat");
      if (file < 0) break;
      Stat(file, &after, "stat");
      close(file);
      break;
    }
    case kReaddir: Readdir(); break;
    case kMkdir: Mkdir(path, (flags & kRecursive) != 0); break;
    case kUnlink: {
      std::string name;
      const int parent = Parent(path, &name, "unlink");
      if (parent < 0) break;
      if (unlinkat(parent, name.c_str(), 0) != 0) Fail(errno, "unlink");
      close(parent);
      break;
    }
    case kRename: {
      std::string from;
      std::string to;
      const int source = Parent(path, &from, "rename");
      if (source < 0) break;
      Descriptor sourceGuard(source);
      const int target = Parent(dest, &to, "rename");
      if (target < 0) break;
      if (renameat(source, from.c_str(), target, to.c_str()) != 0) Fail(errno, "rename");
      close(target);
      break;
    }
    case kRm: Rm(); break;
    case kLoad: Load(); break;
    case kStore:
    case kRewrite: Store(); break;
    default: Fail(EINVAL, "open");
  }
}

void RootFiles::Call::Readdir() {
  const int dir = Resolve(path, O_RDONLY | O_DIRECTORY, 0, "scandir");
  if (dir < 0) return;
  DIR* stream = fdopendir(dir);
  if (stream == nullptr) {
    Fail(errno, "scandir");
    close(dir);
    return;
  }
  if (!ReadNames(stream, &names)) Fail(errno, "scandir");
  closedir(stream);
}

// Makes `relative`; with `recursive`, see MkdirRecursive.
int RootFiles::Call::Mkdir(const std::string& relative, bool recursive) {
  if (recursive) return MkdirRecursive(relative);
  std::string name;
  const int parent = Parent(relative, &name, "mkdir");
  if (parent < 0) return -1;
  const int made = mkdirat(parent, name.c_str(), static_cast<mode_t>(mode));
  const int failure = errno;
  close(parent);
  return made == 0 ? 0 : Fail(failure, "mkdir");
}

// Makes `relative` and every missing directory above it, as node:fs's
// recursive mkdir: `created` is the first one made. The deepest directory
// there already is found by bisection (a few lookups beneath the root, not
// one per level), and the missing ones are made from its descriptor on.
int RootFiles::Call::MkdirRecursive(const std::string& relative) {
  const std::string target = WithoutSuffix(relative);
  std::vector<std::string> names;
  for (const std::string& part : PathComponents(target)) {
    if (!part.empty() && part != ".") names.push_back(part);
  }
  auto prefix = [&](size_t count) {
    std::string joined;
    for (size_t i = 0; i < count; i++) joined += (i == 0 ? "" : "/") + names[i];
    return joined;
  };
  size_t low = 0;
  size_t high = names.size();
  while (low < high) {
    const size_t middle = (low + high + 1) / 2;
    const int dir = Resolve(prefix(middle), O_PATH | O_DIRECTORY, 0, "mkdir");
    if (dir >= 0) {
      close(dir);
      low = middle;
      continue;
    }
    // Missing, or not a directory: above it then. Anything else is the answer.
    if (outside || (error != ENOENT && error != ENOTDIR)) return -1;
    error = 0;
    high = middle - 1;
  }
  int dir = Resolve(prefix(low), O_PATH | O_DIRECTORY, 0, "mkdir");
  if (dir < 0) return -1;
  for (size_t i = low; i < names.size(); i++) {
    int next;
    if (mkdirat(dir, names[i].c_str(), static_cast<mode_t>(mode)) == 0) {
      if (!hasCreated) {
        hasCreated = true;
        created = prefix(i + 1);
      }
      // Just made: anything else there now was swapped in since.
      next = openat(dir, names[i].c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (next < 0) Fail(errno, "mkdir");
    } else if (errno == EEXIST) {
      // There already (made meanwhile, a link, a file): looked up as any path is.
      next = Resolve(prefix(i + 1), O_PATH | O_DIRECTORY, 0, "mkdir");
      // As node:fs words it: "a.txt" exists (EEXIST); "a.txt/" or "a.txt/b" is not a directory (ENOTDIR).
      if (next < 0 && error == ENOTDIR && i + 1 == names.size() && target.size() == relative.size()) error = EEXIST;
    } else {
      Fail(errno, "mkdir");
      next = -1;
    }
    close(dir);
    if (next < 0) return -1;
    dir = next;
  }
  close(dir);
  return 0;
}

// As node:fs's rm: lstat, then unlink a non-directory; a directory only
// with `recursive` (ERR_FS_EISDIR otherwise), its contents removed first.
void RootFiles::Call::Rm() {
  const bool recursive = (flags & kRecursive) != 0;
  const bool force = (flags & kForce) != 0;
  auto missing = [&](int errnum) { return force && errnum == ENOENT; };
  std::string name;
  const int parent = Parent(path, &name, "lstat");
  if (parent < 0) {
    if (!outside && missing(error)) error = 0;
    return;
  }
  Descriptor guard(parent);
  struct stat st;
  if (AsksForDirectory(name)) {
    // "x/" looks through a link x (as lstat does): beneath the root, like any lookup.
    const int target = Resolve(path, O_PATH, 0, "lstat");
    if (target < 0) {
      if (!outside && missing(error)) error = 0;
      return;
    }
    const int stated = fstat(target, &st);
    close(target);
    if (stated != 0) {
      Fail(errno, "lstat");
      return;
    }
  } else if (fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (!missing(errno)) Fail(errno, "lstat");
    return;
  }
  if (!S_ISDIR(st.st_mode)) {
    if (unlinkat(parent, name.c_str(), 0) != 0 && !missing(errno)) Fail(errno, "unlink");
    return;
  }
  if (!recursive) {
    rmDirectory = true;
    Fail(EISDIR, "rm");
    return;
  }
  // Every refusal comes before anything is removed, as node:fs/promises's rm
  // refuses. "d/." can never be removed (rmdir of "." is EINVAL).
  const std::string bare = WithoutSuffix(name);
  if (name.find('.', bare.size()) != std::string::npos) {
    Fail(EINVAL, "rmdir");
    return;
  }
  // The entry itself, never through a link: "link/" named the directory
  // behind it for the lstat above, but rmdir refuses a link (ENOTDIR), so
  // the directory behind it is not emptied either.
  const int dir = openat(parent, bare.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0) {
    const int failure = errno;
    if (AsksForDirectory(name) && (failure == ELOOP || failure == ENOTDIR)) Fail(ENOTDIR, "rmdir");
    else if (!missing(failure)) Fail(failure, "open");
    return;
  }
  const char* failed = "rm";
  if (RemoveContents(dir, 0, &failed) != 0) {
    Fail(errno, failed);
    return;
  }
  if (unlinkat(parent, name.c_str(), AT_REMOVEDIR) != 0 && !missing(errno)) Fail(errno, "rmdir");
}

void RootFiles::Call::Load() {
  const int file = OpenFile(O_RDONLY, 0, &before);
  if (file < 0) return;
  Descriptor guard(file);
  if (before.st_size > kMaxFileBytes) {
    length = before.st_size;
    Fail(EFBIG, "read");
    return;
  }
  size_t capacity = static_cast<size_t>(before.st_size) + kReadSlack;
  data.reset(static_cast<char*>(std::malloc(capacity)));
  if (data == nullptr) {
    Fail(ENOMEM, "read");
    return;
  }
  for (;;) {
    if (length == capacity) {
      if (capacity > kMaxFileBytes) {
        Fail(EFBIG, "read");
        return;
      }
      capacity *= 2;
      char* grown = static_cast<char*>(std::realloc(data.get(), capacity));
      if (grown == nullptr) {
        Fail(ENOMEM, "read");
        return;
      }
      static_cast<void>(data.release());
      data.reset(grown);
    }
    const ssize_t got = read(file, data.get() + length, std::min(capacity - length, kMaxTransfer));
    if (got < 0) {
      if (errno == EINTR) continue;
      Fail(errno, "read");
      return;
    }
    if (got == 0) break;
    length += static_cast<size_t>(got);
  }
  if (length > kMaxFileBytes) {
    Fail(EFBIG, "read");
    return;
  }
  Stat(file, &after, "fstat");
}

void RootFiles::Call::Store() {
  // A rewrite changes the file in place (written first, then cut to size):
  // a failure leaves old bytes past the new end, never a file shorter than both versions.
  const bool rewrite = op == kRewrite;
  const int file = OpenFile(rewrite ? (O_WRONLY | O_CREAT) : flags, static_cast<mode_t>(mode), &after);
  if (file < 0) return;
  Descriptor guard(file);
  for (size_t done = 0; done < inputLength;) {
    const size_t chunk = std::min(inputLength - done, kMaxTransfer);
    const ssize_t wrote = rewrite ? pwrite(file, inputData + done, chunk, static_cast<off_t>(done))
                                  : write(file, inputData + done, chunk);
    if (wrote < 0) {
      if (errno == EINTR) continue;
      Fail(errno, "write");
      return;
    }
    done += static_cast<size_t>(wrote);
  }
  if (rewrite && ftruncate(file, static_cast<off_t>(inputLength)) != 0) {
    Fail(errno, "ftruncate");
    return;
  }
  Stat(file, &after, "fstat");
}

Napi::Value RootFiles::Call::Result(Napi::Env env) {
  switch (op) {
    case kOpen: return Napi::Number::New(env, fd);
    case kStat:
    case kStore:
    case kRewrite: return StatsObject(env, after);
    case kReaddir: {
      Napi::Array array = Napi::Array::New(env, names.size());
      for (size_t i = 0; i < names.size(); i++) array.Set(static_cast<uint32_t>(i), Napi::String::New(env, names[i]));
      return array;
    }
    case kMkdir: return hasCreated ? Napi::String::New(env, created) : env.Undefined();
    case kLoad: {
      Napi::Buffer<char> bytes;
      if (length <= kCopyLimit) {
        bytes = Napi::Buffer<char>::Copy(env, data.get(), length);
      } else {
        bytes = Napi::Buffer<char>::New(env, data.get(), length, [](Napi::Env, char* owned) { std::free(owned); });
        if (!bytes.IsEmpty()) static_cast<void>(data.release());  // the buffer owns it now
      }
      Napi::Object result = Napi::Object::New(env);
      result.Set("before", StatsObject(env, before));
      result.Set("data", bytes);
      result.Set("after", StatsObject(env, after));
      return result;
    }
    default: return env.Undefined();
  }
}

Napi::Value RootFiles::Call::Failure(Napi::Env env) const {
  if (outside) {
    Napi::Error e = Napi::Error::New(env, "path " + outsidePath + " leads outside the root " + rootPath);
    e.Set("code", Napi::String::New(env, "ERR_PATH_OUTSIDE_ROOT"));
    e.Set("relative", Napi::String::New(env, outsidePath));
    return e.Value();
  }
  if (special != nullptr) {
    Napi::Error e = Napi::Error::New(env, "path " + path + " is " + special + ", not a regular file");
    e.Set("code", Napi::String::New(env, "ERR_FS_SPECIAL_FILE"));
    e.Set("relative", Napi::String::New(env, path));
    e.Set("kind", Napi::String::New(env, special));
    return e.Value();
  }
  if (rmDirectory) return RmDirectoryError(env, Absolute(path)).Value();
  if (error == EFBIG && op == kLoad) {
    Napi::RangeError e = Napi::RangeError::New(env, "File size (" + std::to_string(length) + ") is greater than 2 GiB");
    e.Set("code", Napi::String::New(env, "ERR_FS_FILE_TOO_LARGE"));
    return e.Value();
  }
  // Calls on a descriptor name no path, as node:fs words them.
  const bool named = std::strcmp(syscall, "read") != 0 && std::strcmp(syscall, "write") != 0 &&
                     std::strcmp(syscall, "fstat") != 0 && std::strcmp(syscall, "ftruncate") != 0;
  const std::string shownPath = named ? Absolute(path) : std::string();
  const std::string shownDest = named && op == kRename ? Absolute(dest) : std::string();
  return FsError(env, error, syscall, shownPath, shownDest).Value();
}

void RootFiles::Init(Napi::Env env, Napi::Object exports) {
  exports.Set("rootFilesSync", Napi::Function::New(env, CallSync, "rootFilesSync"));
  exports.Set("rootFiles", Napi::Function::New(env, CallAsync, "rootFiles"));
  exports.Set("closeDescriptor", Napi::Function::New(env, CloseDescriptor, "closeDescriptor"));
}

Napi::Value RootFiles::CloseDescriptor(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Arguments args(info, "closeDescriptor(fd)");
  int fd = -1;
  if (!args.Count(1) || !args.Integer(args.At(0, "fd"), 0, INT32_MAX, &fd)) return env.Undefined();
  // Only what kOpen gave this environment: never the root, nor a descriptor of node's.
  if (!Forget(env, fd)) {
    return ThrowFsError(env, EBADF, "close");
  }
  if (close(fd) != 0 && errno != EINTR) return ThrowFsError(env, errno, "close");
  return env.Undefined();
}

bool RootFiles::Parse(const Napi::CallbackInfo& info, const char* signature, Call* call) {
  Napi::Env env = info.Env();
  Arguments args(info, signature);
  // The root's path names it in messages and places absolute links: it is
  // absolute. `path` and `dest` are not checked for "..": leaving the root
  // is what resolving beneath it refuses (ERR_PATH_OUTSIDE_ROOT).
  static const char* const absolute = "an absolute path without NUL bytes";
  const Arguments::Value rootPath = args.At(2, "rootPath");
  if (!args.Count(7, 8) || !args.Integer(args.At(0, "op"), kOpen, kRewrite, &call->op) ||
      !args.Integer(args.At(1, "rootFd"), 0, INT32_MAX, &call->root) ||
      !args.Text(rootPath, &call->rootPath, absolute)) {
    return false;
  }
  if (call->rootPath.empty() || call->rootPath[0] != '/') return args.Fail(true, rootPath, absolute);
  if (!args.Text(args.At(3, "path"), &call->path) || !args.Text(args.At(4, "dest"), &call->dest) ||
      !args.Integer(args.At(5, "flags"), 0, INT32_MAX, &call->flags) ||
      !args.Integer(args.At(6, "mode"), 0, 07777, &call->mode)) {
    return false;
  }
  // Read by kStore and kRewrite only.
  if (call->op == kStore || call->op == kRewrite) {
    void* data = nullptr;
    if (!args.TypedArray(args.At(7, "data"), napi_uint8_array, -1, "a Uint8Array", &data, &call->inputLength)) {
      return false;
    }
    call->inputData = static_cast<const char*>(data);
  }
  if (napi_get_uv_event_loop(env, &call->loop) != napi_ok) {
    Napi::Error::New(env, "rootFiles: no event loop").ThrowAsJavaScriptException();
    return false;
  }
  return true;
}

Napi::Value RootFiles::CallSync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Call call;
  if (!Parse(info, "rootFilesSync(op, rootFd, rootPath, path, dest, flags, mode[, data])", &call)) {
    return env.Undefined();
  }
  call.Run();
  if (call.error != 0) {
    Napi::Error(env, call.Failure(env)).ThrowAsJavaScriptException();
    return env.Undefined();
  }
  if (call.op == kOpen) Remember(env, call.fd);
  return call.Result(env);
}

Napi::Value RootFiles::CallAsync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Call call;
  if (!Parse(info, "rootFiles(op, rootFd, rootPath, path, dest, flags, mode[, data])", &call)) return env.Undefined();
  // The data is copied: the caller's buffer may change while the write waits for a thread.
  if (call.inputData != nullptr) call.input.assign(call.inputData, call.inputData + call.inputLength);
  auto* worker = new RootFiles(env, std::move(call));
  napi_value promise = nullptr;
  if (napi_create_promise(env, &worker->deferred_, &promise) != napi_ok) {
    delete worker;
    Napi::Error::New(env, "rootFiles: could not create a promise").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  worker->Queue();
  return Napi::Value(env, promise);
}

RootFiles::RootFiles(Napi::Env env, Call&& call)
    : Napi::AsyncWorker(env, "arenacache:rootFiles"), call_(std::move(call)) {
  call_.inputData = call_.input.data();
}

RootFiles::~RootFiles() {
  if (!delivered_ && call_.op == kOpen && call_.fd >= 0) close(call_.fd);
}

void RootFiles::Execute() { call_.Run(); }

// During a worker thread's teardown every napi call here may fail; the
// addon is built with NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS, so a failure
// is not fatal, and the statuses say whether JavaScript took the result.
void RootFiles::OnOK() {
  Napi::Env env = Env();
  if (call_.error != 0) {
    napi_reject_deferred(env, deferred_, call_.Failure(env));
    return;
  }
  Napi::Value result = call_.Result(env);
  delivered_ = !result.IsEmpty() && napi_resolve_deferred(env, deferred_, result) == napi_ok;
  if (delivered_ && call_.op == kOpen) Remember(env, call_.fd);
}

}  // namespace arenacache
