#include "file_jobs.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <system_error>
#include <thread>

#include "arguments.h"
#include "beneath.h"
#include "columns.h"
#include "errors.h"

namespace arenacache {

namespace {

// Packed files are written in batches of about this many bytes.
constexpr size_t kPackBatchBytes = 1 << 20;

constexpr uint8_t kOpClone = 1;
constexpr uint8_t kOpPack = 2;
constexpr uint8_t kOpExtract = 3;
constexpr uint8_t kOpHash = 4;

constexpr uint8_t kEngineReflink = 1;
constexpr uint8_t kEngineCopyFileRange = 2;
constexpr uint8_t kEngineCopy = 3;
constexpr uint8_t kEnginePack = 4;

constexpr uint8_t kFlagUnstable = 1;
constexpr uint8_t kFlagMismatch = 2;
constexpr uint8_t kFlagShort = 4;

constexpr size_t kBufferSize = 1 << 20;
// A thread that had to hold a file bigger than this gives the memory back
// after the job, so one huge file does not pin it for the rest of the run.
constexpr size_t kTrimAbove = 64 << 20;
// As much as one copy_file_range may move; the kernel caps it further.
constexpr size_t kRangeChunk = 1 << 30;
constexpr auto kProgressInterval = std::chrono::milliseconds(50);

using Failure = FileJobs::Failure;
using Thread = FileJobs::Thread;

bool Fail(Failure& failure, int error, const char* syscall, bool onDst = false) {
  failure.error = error;
  failure.syscall = syscall;
  failure.onDst = onDst;
  return false;
}

// Closes on every way out of a job.
struct Descriptor {
  int fd = -1;
  ~Descriptor() {
    if (fd >= 0) close(fd);
  }
};

// Size, mtime or ctime moved: the file was written (or truncated, or
// replaced in place) while it was read. ctime catches a write that restored
// the mtime.
bool Changed(const struct stat& a, const struct stat& b) {
  return a.st_size != b.st_size || a.st_mtim.tv_sec != b.st_mtim.tv_sec || a.st_mtim.tv_nsec != b.st_mtim.tv_nsec ||
         a.st_ctim.tv_sec != b.st_ctim.tv_sec || a.st_ctim.tv_nsec != b.st_ctim.tv_nsec;
}

// copy_file_range cannot do this pair (another filesystem on older
// kernels, a filesystem without support, an old kernel): not the file's
// fault, so the next engine gets it.
bool RangeUnsupported(int error) {
  return error == EXDEV || error == EINVAL || error == ENOSYS || error == EOPNOTSUPP || error == ENOTSUP ||
         error == EBADF;
}

// Out of space and the like are the destination's doing.
bool DstError(int error) { return error == ENOSPC || error == EDQUOT || error == EFBIG; }

bool OpenSource(int root, const std::string& path, Descriptor& in, struct stat& st, Failure& failure) {
  in.fd = root >= 0 ? OpenBeneath(root, path, O_RDONLY) : open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (in.fd < 0) return Fail(failure, errno, "open");
  if (fstat(in.fd, &st) != 0) return Fail(failure, errno, "fstat");
  // A FIFO or device would block or never end; a directory has no bytes.
  if (!S_ISREG(st.st_mode)) return Fail(failure, EINVAL, "open");
  return true;
}

bool OpenDst(const std::string& path, Descriptor& out, Failure& failure) {
  // 0600 until FinishDst sets the job's mode: nobody else reads a half-written copy.
  out.fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (out.fd < 0) return Fail(failure, errno, "open", true);
  return true;
}

bool WriteAll(int fd, const char* data, size_t length, uint64_t offset, Failure& failure) {
  while (length > 0) {
    const ssize_t n = pwrite(fd, data, length, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Fail(failure, errno, "write", true);
    }
    if (n == 0) return Fail(failure, EIO, "write", true);
    data += n;
    length -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

// Reads up to `length` bytes at `offset` into `data`; fewer only at the end
// of the file.
bool ReadAt(int fd, char* data, size_t length, uint64_t offset, size_t& got, Failure& failure) {
  got = 0;
  while (got < length) {
    const ssize_t n = pread(fd, data + got, length - got, static_cast<off_t>(offset + got));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Fail(failure, errno, "read");
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  return true;
}

// Reads the whole file into thread.buffer (grown as needed). `hint` is the
// size fstat gave: once that much is in, a read that comes back short is
// the end of the file (a regular file reads short only there), which saves
// the extra read that would return 0. A file growing later is caught by the
// caller's second fstat.
bool ReadWhole(Thread& thread, int fd, size_t hint, size_t& length, Failure& failure) {
  if (!thread.Reserve(hint + 1)) return Fail(failure, ENOMEM, "read");
  length = 0;
  for (;;) {
    if (length == thread.capacity && !thread.Reserve(thread.capacity * 2)) return Fail(failure, ENOMEM, "read");
    const size_t want = thread.capacity - length;
    const ssize_t n = pread(fd, thread.buffer + length, want, static_cast<off_t>(length));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Fail(failure, errno, "read");
    }
    length += static_cast<size_t>(n);
    if (n == 0 || (static_cast<size_t>(n) < want && length >= hint)) return true;
  }
}

// Feeds bytes [offset, offset + limit) of the file to thread.sha (limit < 0:
// up to the end of the file, `hint` as in ReadWhole) and sets `hashed`.
bool HashFile(Thread& thread, int fd, uint64_t offset, int64_t limit, uint64_t hint, uint64_t& hashed,
              Failure& failure) {
  uint64_t position = offset;
  for (;;) {
    size_t want = kBufferSize;
    if (limit >= 0) {
      const uint64_t left = static_cast<uint64_t>(limit) - (position - offset);
      if (left == 0) break;
      want = static_cast<size_t>(std::min<uint64_t>(want, left));
    }
    const ssize_t n = pread(fd, thread.buffer, want, static_cast<off_t>(position));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Fail(failure, errno, "read");
    }
    if (n == 0) break;
    if (!thread.sha.Update(thread.buffer, static_cast<size_t>(n))) return Fail(failure, ENOMEM, "sha256");
    position += static_cast<uint64_t>(n);
    if (limit < 0 && static_cast<size_t>(n) < want && position >= hint) break;
  }
  hashed = position - offset;
  return true;
}

struct timespec TimeOf(double seconds, uint32_t nanoseconds) {
  struct timespec t;
  t.tv_sec = static_cast<time_t>(seconds);
  t.tv_nsec = static_cast<long>(nanoseconds);
  return t;
}

// The TypedArray type that holds T.
template <typename T>
constexpr napi_typedarray_type ArrayType();
template <>
constexpr napi_typedarray_type ArrayType<uint8_t>() {
  return napi_uint8_array;
}
template <>
constexpr napi_typedarray_type ArrayType<uint32_t>() {
  return napi_uint32_array;
}
template <>
constexpr napi_typedarray_type ArrayType<double>() {
  return napi_float64_array;
}

// Copies the column jobs[name], a `type` of `count` elements: a copy,
// because JavaScript may change or detach its arrays while the threads run
// (and a getter read after this one may detach it before then).
template <typename T>
bool CopyColumn(Arguments& args, const Arguments::Value& jobs, const char* name, const char* type, size_t count,
                std::vector<T>* out) {
  Arguments::Value column;
  if (!args.Get(jobs, name, &column)) return false;
  void* data = nullptr;
  size_t length = 0;
  const std::string what = std::string("a ") + type + " of " + std::to_string(count) + " numbers";
  if (!args.TypedArray(column, ArrayType<T>(), static_cast<int64_t>(count), what, &data, &length)) return false;
  out->assign(static_cast<T*>(data), static_cast<T*>(data) + length);
  return true;
}

// Copies the column jobs[name], an array of `count` strings.
bool CopyStrings(Arguments& args, const Arguments::Value& jobs, const char* name, size_t count,
                 std::vector<std::string>* out) {
  Arguments::Value column;
  uint32_t length = 0;
  const std::string what = "an array of " + std::to_string(count) + " strings";
  if (!args.Get(jobs, name, &column) || !args.Array(column, what.c_str(), &length)) return false;
  if (length != count) return args.Fail(true, column, what);
  return args.Strings(column, length, "a string", out);
}

}  // namespace

// The threadsafe function's context, which outlives the worker: reports
// still queued when OnOK has run arrive after the worker is gone. Deleted
// by the threadsafe function's finalizer. Main thread only, but for
// inFlight.
struct FileJobs::ProgressContext {
  // A report is queued and not yet delivered: the next one waits, so a busy
  // event loop is not handed a backlog of stale reports.
  std::atomic<bool> inFlight{false};
  // The final report has been made; later ones are stale.
  bool finished = false;
};

struct FileJobs::ProgressReport {
  double done;
  double total;
  double bytes;
};

FileJobs::Thread::Thread() : buffer(static_cast<char*>(std::malloc(kBufferSize))) {
  if (buffer != nullptr) capacity = kBufferSize;
}

FileJobs::Thread::~Thread() {
  std::free(buffer);
  if (packFd >= 0) close(packFd);
}

bool FileJobs::Thread::Reserve(size_t size) {
  if (size <= capacity) return true;
  char* grown = static_cast<char*>(std::realloc(buffer, size));
  if (grown == nullptr) return false;
  buffer = grown;
  capacity = size;
  return true;
}

void FileJobs::Thread::Trim() {
  if (capacity <= kTrimAbove) return;
  char* smaller = static_cast<char*>(std::realloc(buffer, kBufferSize));
  if (smaller == nullptr) return;
  buffer = smaller;
  capacity = kBufferSize;
}

void FileJobs::Init(Napi::Env env, Napi::Object exports) {
  exports.Set("runFileJobs", Napi::Function::New(env, RunFileJobs, "runFileJobs"));
}

Napi::Value FileJobs::RunFileJobs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Arguments args(info, "runFileJobs(jobs, options[, onProgress])");
  const Arguments::Value jobs = args.At(0, "jobs");
  const Arguments::Value options = args.At(1, "options");
  bool progress = false;
  if (!args.Count(2, 3) || !args.Object(jobs, "an object of job columns") ||
      !args.Object(options, "an object of options") || !args.Function(args.At(2, "onProgress"), true, &progress)) {
    return env.Undefined();
  }
  auto* worker = new FileJobs(env);
  if (!worker->Parse(args, jobs, options) || (progress && !worker->StartProgress(env, info[2].As<Napi::Function>()))) {
    delete worker;
    return env.Undefined();
  }
  // Made only now: a promise made before a check failed would never settle.
  napi_value promise = nullptr;
  if (napi_create_promise(env, &worker->deferred_, &promise) != napi_ok) {
    delete worker;
    return env.Undefined();
  }
  worker->Queue();
  return Napi::Value(env, promise);
}

FileJobs::FileJobs(Napi::Env env) : Napi::AsyncWorker(env, "arenacache:runFileJobs") {}

// What lib/native/file-jobs.js checks, checked again on the copies the threads will
// use: a column shorter than ops would be read past its end, a NaN or
// negative offset converted to an integer undefined, a missing expected
// hash compared out of bounds.
bool FileJobs::Parse(Arguments& args, const Arguments::Value& jobs, const Arguments::Value& options) {
  Arguments::Value ops;
  void* data = nullptr;
  if (!args.Get(jobs, "ops", &ops) || !args.TypedArray(ops, napi_uint8_array, -1, "a Uint8Array", &data, &count_)) {
    return false;
  }
  ops_.assign(static_cast<uint8_t*>(data), static_cast<uint8_t*>(data) + count_);
  const size_t n = count_;
  if (!CopyStrings(args, jobs, "srcs", n, &srcs_) || !CopyStrings(args, jobs, "dsts", n, &dsts_) ||
      !CopyColumn(args, jobs, "offsets", "Float64Array", n, &offsets_) ||
      !CopyColumn(args, jobs, "lengths", "Float64Array", n, &lengths_) ||
      !CopyColumn(args, jobs, "modes", "Uint32Array", n, &modes_) ||
      !CopyColumn(args, jobs, "atimeSec", "Float64Array", n, &atimeSec_) ||
      !CopyColumn(args, jobs, "atimeNsec", "Uint32Array", n, &atimeNsec_) ||
      !CopyColumn(args, jobs, "mtimeSec", "Float64Array", n, &mtimeSec_) ||
      !CopyColumn(args, jobs, "mtimeNsec", "Uint32Array", n, &mtimeNsec_)) {
    return false;
  }
  const std::string expectedWhat = "a Uint8Array of " + std::to_string(Sha256::kSize * n) + " bytes (32 per job)";
  Arguments::Value expected;
  if (!args.Get(jobs, "expected", &expected)) return false;
  napi_valuetype expectedType = napi_undefined;
  napi_typeof(args.Env(), expected.value, &expectedType);
  if (expectedType != napi_undefined) {
    size_t length = 0;
    if (!args.TypedArray(expected, napi_uint8_array, static_cast<int64_t>(Sha256::kSize * n), expectedWhat, &data,
                         &length)) {
      return false;
    }
    expected_.assign(static_cast<uint8_t*>(data), static_cast<uint8_t*>(data) + length);
  }

  for (size_t i = 0; i < n; i++) {
    // Named only for a message: per job, the name would cost more than the check.
    const auto at = [i](const std::string& column) { return "jobs." + column + "[" + std::to_string(i) + "]"; };
    const uint8_t op = ops_[i];
    if (op < kOpClone || op > kOpHash) {
      return args.FailNumber(true, 0, at("ops"), "1 (clone), 2 (pack), 3 (extract) or 4 (hash)", op);
    }
    static const char* const path = "a non-empty string without NUL bytes";
    if (srcs_[i].empty() || srcs_[i].find('\0') != std::string::npos) {
      return args.FailString(true, 0, at("srcs"), path, srcs_[i]);
    }
    if (op == kOpClone || op == kOpExtract) {
      if (dsts_[i].empty() || dsts_[i].find('\0') != std::string::npos) {
        return args.FailString(true, 0, at("dsts"), path, dsts_[i]);
      }
      // true (an exception thrown) when a time of the job is wrong.
      const auto badTime = [&](const std::string& name, double seconds, uint32_t nanoseconds) {
        if (!IsSafeInteger(seconds)) return !args.FailNumber(true, 0, at(name + "Sec"), "an integer", seconds);
        if (nanoseconds <= 999999999) return false;
        return !args.FailNumber(true, 0, at(name + "Nsec"), "an integer from 0 to 999999999", nanoseconds);
      };
      if (badTime("atime", atimeSec_[i], atimeNsec_[i]) || badTime("mtime", mtimeSec_[i], mtimeNsec_[i])) return false;
    } else if (dsts_[i].find('\0') != std::string::npos) {
      return args.FailString(true, 0, at("dsts"), "a string without NUL bytes", dsts_[i]);
    }
    if (op == kOpExtract || op == kOpHash) {
      if (!IsSafeInteger(offsets_[i]) || offsets_[i] < 0) {
        return args.FailNumber(true, 0, at("offsets"), "a non-negative integer", offsets_[i]);
      }
      // HASH takes a negative length for "the whole file".
      if (!IsSafeInteger(lengths_[i]) || (op == kOpExtract && lengths_[i] < 0)) {
        return args.FailNumber(true, 0, at("lengths"),
                               op == kOpExtract ? "a non-negative integer" : "an integer (negative: the whole file)",
                               lengths_[i]);
      }
    }
  }

  Arguments::Value value;
  const auto option = [&](const char* name) { return args.Get(options, name, &value); };
  if (!option("threads") || !args.Integer(value, 1, 64, &threads_) || !option("reflink") ||
      !args.Boolean(value, &reflink_) || !option("copyFileRange") || !args.Boolean(value, &copyFileRange_) ||
      !option("hash") || !args.Boolean(value, &hash_) || !option("checkExpected") ||
      !args.Boolean(value, &checkExpected_) || !option("packPath") || !args.Text(value, &packPath_)) {
    return false;
  }
  const Arguments::Value packPath = value;
  if (!option("packOffset") || !args.Integer(value, 0, kMaxSafeInteger, &packOffset_, "a non-negative integer") ||
      !option("retries") || !args.Integer(value, 0, 10, &retries_) || !option("sourceRoot") ||
      !args.Text(value, &sourceRoot_)) {
    return false;
  }
  if (packPath_.empty() && std::find(ops_.begin(), ops_.end(), kOpPack) != ops_.end()) {
    return args.Fail(true, packPath, "a non-empty string when jobs include op 2 (pack)");
  }
  if (checkExpected_ && expectedType == napi_undefined) return args.Fail(false, expected, expectedWhat);
  if (!sourceRoot_.empty()) {
    for (size_t i = 0; i < n; i++) {
      // Sources beneath the root are relative to it (extractions read packs, named in full).
      if (ops_[i] != kOpExtract && srcs_[i][0] == '/') {
        return args.FailString(true, 0, "jobs.srcs[" + std::to_string(i) + "]", "a path relative to options.sourceRoot",
                               srcs_[i]);
      }
    }
  }

  engines_.assign(count_, 0);
  flags_.assign(count_, 0);
  sizes_.assign(count_, 0);
  outOffsets_.assign(count_, 0);
  hashes_.assign(count_ * Sha256::kSize, 0);
  errnos_.assign(count_, 0);
  syscalls_.assign(count_, "");
  errorOnDst_.assign(count_, 0);
  fallbackErrnos_.assign(count_, 0);
  stats_.Reset(count_);
  return true;
}

bool FileJobs::StartProgress(Napi::Env env, Napi::Function callback) {
  progressCallback_ = Napi::Persistent(callback);
  progressContext_ = new ProgressContext();
  progress_ = ProgressFunction::New(env, callback, "arenacache:runFileJobs:progress", 0, 1, progressContext_,
                                    [](Napi::Env, void*, ProgressContext* context) { delete context; });
  if (env.IsExceptionPending()) {
    delete progressContext_;
    progressContext_ = nullptr;
    return false;
  }
  progressReleased_ = false;
  return true;
}

FileJobs::~FileJobs() {
  if (packFd_ >= 0) close(packFd_);
  if (sourceRootFd_ >= 0) close(sourceRootFd_);
  if (!progressReleased_) progress_.Release();
}

// Runs on a thread-pool thread, which starts the job threads and then only
// reports progress until they are done.
void FileJobs::Execute() {
  packEnd_.store(packOffset_);
  if (!sourceRoot_.empty()) {
    sourceRootFd_ = open(sourceRoot_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (sourceRootFd_ < 0) {
      runError_ = errno;
      runSyscall_ = "open";
      runPath_ = sourceRoot_;
      return;
    }
  }
  if (std::find(ops_.begin(), ops_.end(), kOpPack) != ops_.end()) {
    // Opened once for all threads: each writes at offsets reserved from
    // packEnd_, so no two writes overlap and none needs O_APPEND.
    packFd_ = open(packPath_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (packFd_ < 0) {
      runError_ = errno;
      runSyscall_ = "open";
      runPath_ = packPath_;
      return;
    }
  }

  const size_t wanted = std::min<size_t>(threads_, count_);
  std::vector<std::thread> threads;
  threads.reserve(wanted);
  int startError = 0;
  for (size_t k = 0; k < wanted; k++) {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      threadsRunning_++;
    }
    try {
      threads.emplace_back(&FileJobs::RunThread, this);
    } catch (const std::system_error& e) {
      std::lock_guard<std::mutex> guard(mutex_);
      threadsRunning_--;
      startError = e.code().value();
      break;
    }
  }
  // Fewer threads than asked for still do every job; none at all cannot.
  if (threads.empty() && count_ > 0) {
    runError_ = startError != 0 ? startError : EAGAIN;
    runSyscall_ = "pthread_create";
  }

  {
    std::unique_lock<std::mutex> lock(mutex_);
    auto last = std::chrono::steady_clock::now();
    while (threadsRunning_ > 0) {
      if (finished_.wait_until(lock, last + kProgressInterval, [this] { return threadsRunning_ == 0; })) break;
      last = std::chrono::steady_clock::now();
      lock.unlock();
      SendProgress();
      lock.lock();
    }
  }
  for (std::thread& thread : threads) thread.join();

  if (packFd_ >= 0) {
    const int fd = packFd_;
    packFd_ = -1;
    // Some filesystems (NFS) report failed writes only here.
    if (close(fd) != 0 && runError_ == 0) {
      runError_ = errno;
      runSyscall_ = "close";
      runPath_ = packPath_;
    }
  }
}

void FileJobs::RunThread() {
  {
    Thread thread;
    for (;;) {
      const size_t i = next_.fetch_add(1, std::memory_order_relaxed);
      if (i >= count_) break;
      RunJob(thread, i);
    }
    FlushPack(thread);
  }
  {
    std::lock_guard<std::mutex> guard(mutex_);
    threadsRunning_--;
  }
  finished_.notify_one();
}

void FileJobs::RunJob(Thread& thread, size_t i) {
  Failure failure;
  bool ok = false;
  if (thread.buffer == nullptr) {
    ok = Fail(failure, ENOMEM, "malloc");
  } else {
    switch (ops_[i]) {
      case kOpClone: ok = Clone(thread, i, failure); break;
      case kOpPack: ok = Pack(thread, i, failure); break;
      case kOpExtract: ok = Extract(thread, i, failure); break;
      case kOpHash: ok = Hash(thread, i, failure); break;
      default: ok = Fail(failure, EINVAL, "job"); break;
    }
  }
  if (ok) {
    doneBytes_.fetch_add(static_cast<uint64_t>(sizes_[i]), std::memory_order_relaxed);
  } else {
    MarkFailed(i, failure);
  }
  thread.Trim();
  done_.fetch_add(1, std::memory_order_relaxed);
}

void FileJobs::MarkFailed(size_t i, const Failure& failure) {
  {
    // Nothing half-done is reported: only why (fallbackErrnos_ stays, it
    // tells which engines were tried).
    errnos_[i] = failure.error;
    syscalls_[i] = failure.syscall;
    errorOnDst_[i] = failure.onDst ? 1 : 0;
    engines_[i] = 0;
    flags_[i] = 0;
    sizes_[i] = 0;
    outOffsets_[i] = 0;
    std::memset(&hashes_[i * Sha256::kSize], 0, Sha256::kSize);
    stats_.Clear(i);
  }
}

bool FileJobs::Clone(Thread& thread, size_t i, Failure& failure) {
  Descriptor in;
  struct stat before;
  if (!OpenSource(sourceRootFd_, srcs_[i], in, before, failure)) return false;
  Descriptor out;
  if (!OpenDst(dsts_[i], out, failure)) return false;

  bool ok = true;
  bool reflinkFailed = false;
  bool rangeFailed = false;
  uint64_t bytes = 0;
  struct stat after = {};
  for (int attempt = 0; ok; attempt++) {
    ok = CopyOnce(thread, i, in.fd, out.fd, before, reflinkFailed, rangeFailed, bytes, failure);
    if (!ok) break;
    if (fstat(in.fd, &after) != 0) {
      ok = Fail(failure, errno, "fstat");
      break;
    }
    if (!Changed(before, after)) break;
    if (attempt >= retries_) {
      // Kept as copied: the caller decides what an unstable file is worth.
      flags_[i] |= kFlagUnstable;
      break;
    }
    if (ftruncate(out.fd, 0) != 0) ok = Fail(failure, errno, "ftruncate", true);
    before = after;
  }
  if (ok) ok = FinishDst(i, out.fd, failure);
  if (!ok) {
    // Created by this job (O_EXCL), so removing it takes nobody's file.
    if (out.fd >= 0) {
      close(out.fd);
      out.fd = -1;
    }
    unlink(dsts_[i].c_str());
    return false;
  }
  sizes_[i] = static_cast<double>(bytes);
  stats_.Set(i, after);
  return true;
}

bool FileJobs::CopyOnce(Thread& thread, size_t i, int in, int out, const struct stat& before, bool& reflinkFailed,
                        bool& rangeFailed, uint64_t& bytes, Failure& failure) {
  uint8_t engine = 0;
  if (reflink_ && !reflinkFailed) {
    // Any refusal (EOPNOTSUPP on ext4, EXDEV across filesystems, EINVAL for
    // unaligned sizes on some) only means this pair cannot share extents.
    if (ioctl(out, FICLONE, in) == 0) {
      engine = kEngineReflink;
    } else {
      fallbackErrnos_[i] = errno;
      reflinkFailed = true;
    }
  }
  if (engine == 0 && copyFileRange_ && !rangeFailed) {
    loff_t inPosition = 0;
    loff_t outPosition = 0;
    for (;;) {
      const ssize_t n = copy_file_range(in, &inPosition, out, &outPosition, kRangeChunk, 0);
      if (n > 0) continue;
      if (n == 0) {
        if (outPosition < before.st_size) {
          // Stopped short of the size fstat gave (some FUSE filesystems do):
          // not a copy to trust; read and write instead.
          if (ftruncate(out, 0) != 0) return Fail(failure, errno, "ftruncate", true);
          if (fallbackErrnos_[i] == 0) fallbackErrnos_[i] = EIO;
          rangeFailed = true;
          break;
        }
        engine = kEngineCopyFileRange;
        bytes = static_cast<uint64_t>(outPosition);
        break;
      }
      const int error = errno;
      if (error == EINTR) continue;
      if (!RangeUnsupported(error)) return Fail(failure, error, "copy_file_range", DstError(error));
      if (outPosition > 0 && ftruncate(out, 0) != 0) return Fail(failure, errno, "ftruncate", true);
      if (fallbackErrnos_[i] == 0) fallbackErrnos_[i] = error;
      rangeFailed = true;
      break;
    }
  }
  uint8_t* digest = &hashes_[i * Sha256::kSize];
  if (hash_ && !thread.sha.Begin()) return Fail(failure, ENOMEM, "sha256");
  if (engine == 0) {
    // Read and write, hashing on the way: one pass over the data.
    const uint64_t hint = static_cast<uint64_t>(before.st_size);
    uint64_t position = 0;
    for (;;) {
      const ssize_t n = pread(in, thread.buffer, kBufferSize, static_cast<off_t>(position));
      if (n < 0) {
        if (errno == EINTR) continue;
        return Fail(failure, errno, "read");
      }
      if (n == 0) break;
      if (hash_ && !thread.sha.Update(thread.buffer, static_cast<size_t>(n))) return Fail(failure, ENOMEM, "sha256");
      if (!WriteAll(out, thread.buffer, static_cast<size_t>(n), position, failure)) return false;
      position += static_cast<uint64_t>(n);
      if (static_cast<size_t>(n) < kBufferSize && position >= hint) break;
    }
    engine = kEngineCopy;
    bytes = position;
  } else if (hash_) {
    // The kernel copied without showing us the bytes: read the source again
    // (from the page cache, usually).
    uint64_t hashed = 0;
    if (!HashFile(thread, in, 0, -1, static_cast<uint64_t>(before.st_size), hashed, failure)) return false;
  }
  if (hash_ && !thread.sha.Finish(digest)) return Fail(failure, ENOMEM, "sha256");
  if (engine == kEngineReflink) {
    struct stat copied;
    if (fstat(out, &copied) != 0) return Fail(failure, errno, "fstat", true);
    bytes = static_cast<uint64_t>(copied.st_size);
  }
  engines_[i] = engine;
  return true;
}

bool FileJobs::Pack(Thread& thread, size_t i, Failure& failure) {
  Descriptor in;
  struct stat before;
  if (!OpenSource(sourceRootFd_, srcs_[i], in, before, failure)) return false;
  size_t length = 0;
  struct stat after = {};
  for (int attempt = 0;; attempt++) {
    if (!ReadWhole(thread, in.fd, static_cast<size_t>(before.st_size), length, failure)) return false;
    if (fstat(in.fd, &after) != 0) return Fail(failure, errno, "fstat");
    if (!Changed(before, after)) break;
    if (attempt >= retries_) {
      flags_[i] |= kFlagUnstable;
      break;
    }
    before = after;
  }
  uint8_t* digest = &hashes_[i * Sha256::kSize];
  if (!thread.sha.Begin() || !thread.sha.Update(thread.buffer, length) || !thread.sha.Finish(digest)) {
    return Fail(failure, ENOMEM, "sha256");
  }
  // Batched now that the bytes are final (a retry wastes no pack space);
  // the offset is known when the batch is written.
  thread.packPending.emplace_back(i, thread.packBatch.size());
  thread.packBatch.insert(thread.packBatch.end(), thread.buffer, thread.buffer + length);
  engines_[i] = kEnginePack;
  sizes_[i] = static_cast<double>(length);
  stats_.Set(i, after);
  if (thread.packBatch.size() >= kPackBatchBytes) FlushPack(thread);
  return true;
}

void FileJobs::FlushPack(Thread& thread) {
  if (thread.packPending.empty()) return;
  const uint64_t base = packEnd_.fetch_add(thread.packBatch.size(), std::memory_order_relaxed);
  Failure failure;
  if (WriteAll(packFd_, thread.packBatch.data(), thread.packBatch.size(), base, failure)) {
    for (const auto& [i, position] : thread.packPending) outOffsets_[i] = static_cast<double>(base + position);
  } else {
    for (const auto& pending : thread.packPending) MarkFailed(pending.first, failure);
  }
  thread.packBatch.clear();
  thread.packPending.clear();
}

// Jobs reading ranges of one pack come in runs: its descriptor (and its
// stat, taken when opened) is kept for the next.
bool FileJobs::OpenPack(Thread& thread, size_t i, Failure& failure) {
  if (thread.packFd >= 0 && thread.packPath == srcs_[i]) return true;
  if (thread.packFd >= 0) close(thread.packFd);
  thread.packPath = srcs_[i];
  thread.packFd = open(srcs_[i].c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (thread.packFd < 0) return Fail(failure, errno, "open");
  int error = 0;
  if (fstat(thread.packFd, &thread.packStat) != 0) error = errno;
  // A FIFO or device would block or never end.
  else if (!S_ISREG(thread.packStat.st_mode)) error = EINVAL;
  if (error == 0) return true;
  close(thread.packFd);
  thread.packFd = -1;
  thread.packPath.clear();
  return Fail(failure, error, error == EINVAL ? "open" : "fstat");
}

bool FileJobs::ReadPackRange(Thread& thread, size_t i, size_t& got, Failure& failure) {
  if (!OpenPack(thread, i, failure)) return false;
  const size_t length = static_cast<size_t>(lengths_[i]);
  if (!thread.Reserve(length)) return Fail(failure, ENOMEM, "read");
  if (!ReadAt(thread.packFd, thread.buffer, length, static_cast<uint64_t>(offsets_[i]), got, failure)) return false;
  if (!thread.sha.Begin() || !thread.sha.Update(thread.buffer, got) ||
      !thread.sha.Finish(&hashes_[i * Sha256::kSize])) {
    return Fail(failure, ENOMEM, "sha256");
  }
  sizes_[i] = static_cast<double>(got);
  return true;
}

bool FileJobs::HashRange(Thread& thread, size_t i, Failure& failure) {
  size_t got = 0;
  if (!ReadPackRange(thread, i, got, failure)) return false;
  if (got < static_cast<size_t>(lengths_[i])) flags_[i] |= kFlagShort;
  stats_.Set(i, thread.packStat);
  return true;
}

bool FileJobs::Extract(Thread& thread, size_t i, Failure& failure) {
  size_t got = 0;
  if (!ReadPackRange(thread, i, got, failure)) return false;
  const size_t length = static_cast<size_t>(lengths_[i]);
  const uint8_t* digest = &hashes_[i * Sha256::kSize];
  // A damaged entry creates no file: a restore must not leave a wrong one behind.
  if (got < length) {
    flags_[i] |= kFlagShort | kFlagMismatch;
    return true;
  }
  if (checkExpected_ && std::memcmp(digest, &expected_[i * Sha256::kSize], Sha256::kSize) != 0) {
    flags_[i] |= kFlagMismatch;
    return true;
  }
  Descriptor out;
  if (!OpenDst(dsts_[i], out, failure)) return false;
  if (!WriteAll(out.fd, thread.buffer, length, 0, failure) || !FinishDst(i, out.fd, failure)) {
    if (out.fd >= 0) {
      close(out.fd);
      out.fd = -1;
    }
    unlink(dsts_[i].c_str());
    return false;
  }
  engines_[i] = kEngineCopy;
  return true;
}

bool FileJobs::Hash(Thread& thread, size_t i, Failure& failure) {
  if (lengths_[i] >= 0 && sourceRootFd_ < 0) return HashRange(thread, i, failure);
  Descriptor in;
  struct stat before;
  if (!OpenSource(sourceRootFd_, srcs_[i], in, before, failure)) return false;
  if (!thread.sha.Begin()) return Fail(failure, ENOMEM, "sha256");
  const bool whole = lengths_[i] < 0;
  const uint64_t offset = whole ? 0 : static_cast<uint64_t>(offsets_[i]);
  const int64_t limit = whole ? -1 : static_cast<int64_t>(lengths_[i]);
  uint64_t hashed = 0;
  if (!HashFile(thread, in.fd, offset, limit, static_cast<uint64_t>(before.st_size), hashed, failure)) return false;
  if (!thread.sha.Finish(&hashes_[i * Sha256::kSize])) return Fail(failure, ENOMEM, "sha256");
  if (!whole && hashed < static_cast<uint64_t>(limit)) flags_[i] |= kFlagShort;
  struct stat after;
  if (fstat(in.fd, &after) != 0) return Fail(failure, errno, "fstat");
  sizes_[i] = static_cast<double>(hashed);
  stats_.Set(i, after);
  return true;
}

bool FileJobs::FinishDst(size_t i, int& out, Failure& failure) {
  // fchmod, not the open's mode: the umask must not change what is restored.
  if (fchmod(out, static_cast<mode_t>(modes_[i] & 07777)) != 0) return Fail(failure, errno, "fchmod", true);
  const struct timespec times[2] = {TimeOf(atimeSec_[i], atimeNsec_[i]), TimeOf(mtimeSec_[i], mtimeNsec_[i])};
  if (futimens(out, times) != 0) return Fail(failure, errno, "futimens", true);
  const int fd = out;
  out = -1;
  // Some filesystems (NFS) report failed writes only here.
  if (close(fd) != 0) return Fail(failure, errno, "close", true);
  return true;
}

// On Execute's thread.
void FileJobs::SendProgress() {
  if (progressContext_ == nullptr || progressContext_->inFlight.exchange(true)) return;
  auto* report =
      new ProgressReport{static_cast<double>(done_.load(std::memory_order_relaxed)), static_cast<double>(count_),
                         static_cast<double>(doneBytes_.load(std::memory_order_relaxed))};
  if (progress_.NonBlockingCall(report) != napi_ok) {
    delete report;
    progressContext_->inFlight = false;
  }
}

// On the main thread; env is null when the threadsafe function is torn down
// with reports still queued (the context is gone by then).
void FileJobs::CallProgress(Napi::Env env, Napi::Function callback, ProgressContext* context, ProgressReport* report) {
  std::unique_ptr<ProgressReport> owned(report);
  if (static_cast<napi_env>(env) == nullptr || callback.IsEmpty() || report == nullptr) return;
  context->inFlight = false;
  if (context->finished) return;
  callback.Call({Napi::Number::New(env, report->done), Napi::Number::New(env, report->total),
                 Napi::Number::New(env, report->bytes)});
  // A throwing callback must not take the process down with it.
  if (env.IsExceptionPending()) env.GetAndClearPendingException();
}

void FileJobs::OnOK() {
  Napi::Env env = Env();
  if (runError_ == 0 && progressContext_ != nullptr) {
    // The final report, made here so that no queued one can come after it.
    progressContext_->finished = true;
    progressCallback_.Value().Call({Napi::Number::New(env, static_cast<double>(done_.load())),
                                    Napi::Number::New(env, static_cast<double>(count_)),
                                    Napi::Number::New(env, static_cast<double>(doneBytes_.load()))});
    if (env.IsExceptionPending()) env.GetAndClearPendingException();
  }
  if (!progressReleased_) {
    // The context is the finalizer's from here on.
    progressContext_ = nullptr;
    progress_.Release();
    progressReleased_ = true;
  }
  if (runError_ != 0) {
    napi_reject_deferred(env, deferred_, FsError(env, runError_, runSyscall_, runPath_).Value());
    return;
  }

  std::vector<std::string> codes(count_);
  std::vector<std::string> syscalls(count_);
  for (size_t i = 0; i < count_; i++) {
    if (errnos_[i] == 0) continue;
    codes[i] = ErrnoCode(errnos_[i]);
    syscalls[i] = syscalls_[i];
  }
  Napi::Object result = Napi::Object::New(env);
  result.Set("engines", NewColumn(env, engines_));
  result.Set("flags", NewColumn(env, flags_));
  result.Set("sizes", NewColumn(env, sizes_));
  result.Set("offsets", NewColumn(env, outOffsets_));
  result.Set("hashes", Napi::Buffer<uint8_t>::Copy(env, hashes_.data(), hashes_.size()));
  result.Set("errnos", NewColumn(env, errnos_));
  result.Set("codes", NewStringColumn(env, codes));
  result.Set("syscalls", NewStringColumn(env, syscalls));
  result.Set("errorOnDst", NewColumn(env, errorOnDst_));
  result.Set("fallbackErrnos", NewColumn(env, fallbackErrnos_));
  stats_.Export(env, result);
  result.Set("packEnd", Napi::Number::New(env, static_cast<double>(packEnd_.load())));
  result.Set("bytes", Napi::Number::New(env, static_cast<double>(doneBytes_.load())));
  napi_resolve_deferred(env, deferred_, result);
}

}  // namespace arenacache
