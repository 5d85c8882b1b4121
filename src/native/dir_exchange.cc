#include "dir_exchange.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <string>

#include "arguments.h"
#include "errors.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

namespace arenacache {

namespace {

constexpr size_t kProbeSize = 4096;
constexpr int kProbeAttempts = 100;

int RenameAt2(const std::string& from, const std::string& to, unsigned int flags) {
  return static_cast<int>(syscall(SYS_renameat2, AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), flags));
}

// A name no other probe (in this process or another, now or left over from
// a crash) uses: pid, a counter and the clock; O_EXCL settles the rest.
std::string ProbeName(const std::string& dir, const char* suffix) {
  static std::atomic<unsigned> counter{0};
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  std::string name = dir;
  if (name.back() != '/') name += '/';
  name += ".reflink-probe-" + std::to_string(getpid()) + "-" + std::to_string(counter.fetch_add(1)) + "-" +
          std::to_string(static_cast<long long>(now.tv_nsec)) + suffix;
  return name;
}

// Creates a probe file; `path` gets its name. -1 with errno set on failure.
int CreateProbe(const std::string& dir, const char* suffix, std::string& path) {
  for (int attempt = 0;; attempt++) {
    path = ProbeName(dir, suffix);
    const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0 || errno != EEXIST || attempt + 1 >= kProbeAttempts) return fd;
  }
}

// The two paths of exchangePaths and renameNoReplace; false with an exception thrown.
bool TwoPaths(const Napi::CallbackInfo& info, const char* signature, std::string* a, std::string* b) {
  Arguments args(info, signature);
  return args.Count(2) && args.Path(args.At(0, "a"), a) && args.Path(args.At(1, "b"), b);
}

}  // namespace

void DirExchange::Init(Napi::Env env, Napi::Object exports) {
  exports.Set("exchangePaths", Napi::Function::New(env, ExchangePaths, "exchangePaths"));
  exports.Set("renameNoReplace", Napi::Function::New(env, RenameNoReplace, "renameNoReplace"));
  exports.Set("probeReflink", Napi::Function::New(env, ProbeReflink, "probeReflink"));
}

Napi::Value DirExchange::ExchangePaths(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string a;
  std::string b;
  if (!TwoPaths(info, "exchangePaths(a, b)", &a, &b)) return env.Undefined();
  if (RenameAt2(a, b, RENAME_EXCHANGE) != 0) return ThrowFsError(env, errno, "renameat2", a, b);
  return env.Undefined();
}

Napi::Value DirExchange::RenameNoReplace(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string a;
  std::string b;
  if (!TwoPaths(info, "renameNoReplace(a, b)", &a, &b)) return env.Undefined();
  if (RenameAt2(a, b, RENAME_NOREPLACE) == 0) return Napi::Boolean::New(env, true);
  const int error = errno;
  if (error == EEXIST) return Napi::Boolean::New(env, false);
  // EINVAL: this filesystem lacks RENAME_NOREPLACE (or a is an ancestor of
  // b); ENOSYS: the kernel lacks renameat2.
  if (error != EINVAL && error != ENOSYS) return ThrowFsError(env, error, "renameat2", a, b);
  // link(2) fails with EEXIST just as RENAME_NOREPLACE does, atomically.
  if (link(a.c_str(), b.c_str()) != 0) {
    const int linkError = errno;
    if (linkError == EEXIST) return Napi::Boolean::New(env, false);
    // A directory cannot be hard-linked: renameat2's own answer stands.
    if (linkError == EPERM) return ThrowFsError(env, error, "renameat2", a, b);
    return ThrowFsError(env, linkError, "link", a, b);
  }
  if (unlink(a.c_str()) != 0) {
    const int unlinkError = errno;
    unlink(b.c_str());  // back to where it was: one name, a
    return ThrowFsError(env, unlinkError, "unlink", a);
  }
  return Napi::Boolean::New(env, true);
}

Napi::Value DirExchange::ProbeReflink(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Arguments args(info, "probeReflink(dir)");
  std::string dir;
  // Never empty: ProbeName reads its last character.
  if (!args.Count(1) || !args.Path(args.At(0, "dir"), &dir)) return env.Undefined();
  std::string srcPath;
  std::string dstPath;
  const int src = CreateProbe(dir, "-src", srcPath);
  if (src < 0) return ThrowFsError(env, errno, "open", srcPath);
  const int dst = CreateProbe(dir, "-dst", dstPath);
  if (dst < 0) {
    const int error = errno;
    close(src);
    unlink(srcPath.c_str());
    return ThrowFsError(env, error, "open", dstPath);
  }
  // Real data: some filesystems clone an empty file without checking
  // anything, which would prove nothing.
  char data[kProbeSize];
  std::memset(data, 0x5a, sizeof(data));
  int writeError = 0;
  size_t written = 0;
  while (written < sizeof(data)) {
    const ssize_t n = write(src, data + written, sizeof(data) - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      writeError = n < 0 ? errno : EIO;
      break;
    }
    written += static_cast<size_t>(n);
  }
  int cloneError = 0;
  if (writeError == 0 && ioctl(dst, FICLONE, src) != 0) cloneError = errno;
  close(src);
  close(dst);
  unlink(srcPath.c_str());
  unlink(dstPath.c_str());
  if (writeError != 0) return ThrowFsError(env, writeError, "write", srcPath);
  Napi::Object result = Napi::Object::New(env);
  result.Set("supported", Napi::Boolean::New(env, cloneError == 0));
  result.Set("code", cloneError == 0 ? env.Null() : Napi::String::New(env, ErrnoCode(cloneError)));
  return result;
}

}  // namespace arenacache
