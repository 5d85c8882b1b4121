#include "tree_scan.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "columns.h"
#include "errors.h"
#include "sha256.h"

namespace arenacache {

namespace {

constexpr uint8_t kTypeFile = 1;
constexpr uint8_t kTypeDirectory = 2;
constexpr uint8_t kTypeSymlink = 3;
constexpr uint8_t kTypeOther = 4;

uint8_t TypeOf(mode_t mode) {
  if (S_ISREG(mode)) return kTypeFile;
  if (S_ISDIR(mode)) return kTypeDirectory;
  if (S_ISLNK(mode)) return kTypeSymlink;
  return kTypeOther;
}

bool IsDotOrDotDot(const char* name) {
  return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

// The target of the symlink `name` in directory `fd`. st_size is only a hint
// (the link may be replaced between the two calls; some filesystems report
// 0), so a result filling the buffer is read again with a bigger one.
int ReadLink(int fd, const char* name, size_t hint, std::string* target) {
  size_t capacity = std::max<size_t>(hint + 1, 256);
  for (;;) {
    target->resize(capacity);
    const ssize_t length = readlinkat(fd, name, &(*target)[0], capacity);
    if (length < 0) return errno;
    if (static_cast<size_t>(length) < capacity) {
      target->resize(static_cast<size_t>(length));
      return 0;
    }
    capacity *= 2;
  }
}

}  // namespace

void TreeScan::Init(Napi::Env env, Napi::Object exports) {
  exports.Set("scanTree", Napi::Function::New(env, ScanTree, "scanTree"));
}

Napi::Value TreeScan::ScanTree(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Array names = info[1].As<Napi::Array>();
  std::vector<std::string> exclude;
  exclude.reserve(names.Length());
  for (uint32_t i = 0; i < names.Length(); i++) exclude.push_back(names.Get(i).As<Napi::String>().Utf8Value());
  auto* worker = new TreeScan(env, info[0].As<Napi::String>().Utf8Value(), std::move(exclude));
  Napi::Promise promise = worker->deferred_.Promise();
  worker->Queue();
  return promise;
}

TreeScan::TreeScan(Napi::Env env, std::string root, std::vector<std::string> exclude)
    : Napi::AsyncWorker(env, "arenacache:scanTree"), deferred_(Napi::Promise::Deferred::New(env)),
      root_(std::move(root)), exclude_(std::move(exclude)) {}

bool TreeScan::Fail(int error, const char* syscall, const std::string& relative) {
  error_ = error;
  syscall_ = syscall;
  if (relative.empty()) errorPath_ = root_;
  else if (!root_.empty() && root_.back() == '/') errorPath_ = root_ + relative;
  else errorPath_ = root_ + "/" + relative;
  return false;
}

// Runs on a thread-pool thread. The root itself may be reached through
// symlinks (it is the caller's choice); nothing below it is.
void TreeScan::Execute() {
  const int fd = open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    Fail(errno, "open", "");
    return;
  }
  if (Walk(fd, "")) Digest();
}

void TreeScan::Digest() {
  Sha256 sha;
  uint8_t out[Sha256::kSize];
  if (!sha.Begin()) return;
  std::string record;
  for (size_t i = 0; i < paths_.size(); i++) {
    record.clear();
    record.append(paths_[i]);
    record.push_back('\0');
    const uint64_t numbers[] = {types_[i], modes_[i], static_cast<uint64_t>(sizes_[i]), devs_[i], inos_[i],
                                static_cast<uint64_t>(mtimeSec_[i]), mtimeNsec_[i], static_cast<uint64_t>(ctimeSec_[i]),
                                ctimeNsec_[i]};
    record.append(reinterpret_cast<const char*>(numbers), sizeof numbers);
    record.append(targets_[i]);
    record.push_back('\n');
    if (!sha.Update(record.data(), record.size())) return;
  }
  if (!sha.Finish(out)) return;
  static const char kHex[] = "0123456789abcdef";
  digest_.resize(2 * Sha256::kSize);
  for (size_t i = 0; i < Sha256::kSize; i++) {
    digest_[2 * i] = kHex[out[i] >> 4];
    digest_[2 * i + 1] = kHex[out[i] & 15];
  }
}

bool TreeScan::Walk(int fd, const std::string& prefix) {
  DIR* dir = fdopendir(fd);
  if (dir == nullptr) {
    const int error = errno;
    close(fd);
    return Fail(error, "scandir", prefix);
  }
  // All names first: the order must not depend on the directory's hash order.
  const bool top = prefix.empty();
  std::vector<std::string> names;
  for (;;) {
    errno = 0;
    const struct dirent* entry = readdir(dir);
    if (entry == nullptr) {
      if (errno == 0) break;
      const int error = errno;
      closedir(dir);
      return Fail(error, "scandir", prefix);
    }
    if (IsDotOrDotDot(entry->d_name)) continue;
    if (top && std::find(exclude_.begin(), exclude_.end(), entry->d_name) != exclude_.end()) continue;
    names.emplace_back(entry->d_name);
  }
  // std::string compares as unsigned bytes (char_traits<char>::compare is memcmp).
  std::sort(names.begin(), names.end());

  const int parent = dirfd(dir);
  std::string target;
  for (const std::string& name : names) {
    const std::string path = top ? name : prefix + "/" + name;
    struct stat st;
    if (fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      // Removed since readdir listed it: not part of the tree any more.
      if (errno == ENOENT) continue;
      const int error = errno;
      closedir(dir);
      return Fail(error, "lstat", path);
    }
    const uint8_t type = TypeOf(st.st_mode);
    target.clear();
    if (type == kTypeSymlink) {
      const int error = ReadLink(parent, name.c_str(), static_cast<size_t>(st.st_size), &target);
      if (error == ENOENT) continue;
      if (error != 0) {
        closedir(dir);
        return Fail(error, "readlink", path);
      }
    }
    paths_.push_back(path);
    types_.push_back(type);
    modes_.push_back(static_cast<uint32_t>(st.st_mode));
    sizes_.push_back(static_cast<double>(st.st_size));
    devs_.push_back(static_cast<uint64_t>(st.st_dev));
    inos_.push_back(static_cast<uint64_t>(st.st_ino));
    atimeSec_.push_back(static_cast<double>(st.st_atim.tv_sec));
    atimeNsec_.push_back(static_cast<uint32_t>(st.st_atim.tv_nsec));
    mtimeSec_.push_back(static_cast<double>(st.st_mtim.tv_sec));
    mtimeNsec_.push_back(static_cast<uint32_t>(st.st_mtim.tv_nsec));
    ctimeSec_.push_back(static_cast<double>(st.st_ctim.tv_sec));
    ctimeNsec_.push_back(static_cast<uint32_t>(st.st_ctim.tv_nsec));
    targets_.push_back(target);
    if (type != kTypeDirectory) continue;

    // O_NOFOLLOW: a symlink swapped in since the fstatat fails (ELOOP or
    // ENOTDIR) instead of leading the walk elsewhere.
    const int child = openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (child < 0) {
      const int error = errno;
      if (error == ENOENT) {
        // Removed since the fstatat: drop the entry just added, as if never seen.
        RemoveLast();
        continue;
      }
      closedir(dir);
      return Fail(error, "open", path);
    }
    if (!Walk(child, path)) {
      closedir(dir);
      return false;
    }
  }
  closedir(dir);
  return true;
}

void TreeScan::RemoveLast() {
  paths_.pop_back();
  types_.pop_back();
  modes_.pop_back();
  sizes_.pop_back();
  devs_.pop_back();
  inos_.pop_back();
  atimeSec_.pop_back();
  atimeNsec_.pop_back();
  mtimeSec_.pop_back();
  mtimeNsec_.pop_back();
  ctimeSec_.pop_back();
  ctimeNsec_.pop_back();
  targets_.pop_back();
}

void TreeScan::OnOK() {
  Napi::Env env = Env();
  if (error_ != 0) {
    deferred_.Reject(FsError(env, error_, syscall_, errorPath_).Value());
    return;
  }
  Napi::Object result = Napi::Object::New(env);
  result.Set("paths", NewStringColumn(env, paths_));
  result.Set("types", NewColumn(env, types_));
  result.Set("modes", NewColumn(env, modes_));
  result.Set("sizes", NewColumn(env, sizes_));
  result.Set("devs", NewColumn(env, devs_));
  result.Set("inos", NewColumn(env, inos_));
  result.Set("atimeSec", NewColumn(env, atimeSec_));
  result.Set("atimeNsec", NewColumn(env, atimeNsec_));
  result.Set("mtimeSec", NewColumn(env, mtimeSec_));
  result.Set("mtimeNsec", NewColumn(env, mtimeNsec_));
  result.Set("ctimeSec", NewColumn(env, ctimeSec_));
  result.Set("ctimeNsec", NewColumn(env, ctimeNsec_));
  result.Set("targets", NewStringColumn(env, targets_));
  result.Set("digest", Napi::String::New(env, digest_));
  deferred_.Resolve(result);
}

}  // namespace arenacache
