#include "tree_scan.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <thread>

#include "arguments.h"
#include "beneath.h"
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
  Arguments args(info, "scanTree(root, exclude)");
  static const char* const name = "a file name: a non-empty string without '/' or NUL bytes";
  std::string root;
  const Arguments::Value names = args.At(1, "exclude");
  uint32_t count = 0;
  std::vector<std::string> exclude;
  if (!args.Count(2) || !args.Path(args.At(0, "root"), &root) || !args.Array(names, "an array of file names", &count) ||
      !args.Strings(names, count, name, &exclude)) {
    return env.Undefined();
  }
  // Refused as lib/native/tree-scan.js refuses them: no entry of the top level has such a name.
  for (size_t i = 0; i < exclude.size(); i++) {
    if (exclude[i].empty() || exclude[i].find_first_of(std::string("/\0", 2)) != std::string::npos) {
      args.FailString(true, 1, "exclude[" + std::to_string(i) + "]", name, exclude[i]);
      return env.Undefined();
    }
  }
  auto* worker = new TreeScan(env, std::move(root), std::move(exclude));
  Napi::Promise promise = worker->deferred_.Promise();
  worker->Queue();
  return promise;
}

TreeScan::TreeScan(Napi::Env env, std::string root, std::vector<std::string> exclude)
    : Napi::AsyncWorker(env, "arenacache:scanTree"), deferred_(Napi::Promise::Deferred::New(env)),
      root_(std::move(root)), exclude_(std::move(exclude)) {}

bool TreeScan::Fail(int error, const char* syscall, const std::string& relative) {
  {
    // Called by the scan threads: the first error is the one reported.
    std::lock_guard<std::mutex> lock(mutex_);
    if (error_ != 0) return false;
    error_ = error;
    syscall_ = syscall;
    if (relative.empty()) errorPath_ = root_;
    else if (!root_.empty() && root_.back() == '/') errorPath_ = root_ + relative;
    else errorPath_ = root_ + "/" + relative;
  }
  wake_.notify_all();
  return false;
}

struct TreeScan::Node {
  struct Entry {
    std::string name;
    struct stat st;
    std::string target;
    std::unique_ptr<Node> child;  // directories only
  };
  std::vector<Entry> entries;  // sorted by name
  bool gone = false;           // removed before it could be listed
};

struct TreeScan::Task {
  Node* node;
  std::string prefix;  // "" for the root
};

namespace {
// lstat is CPU work in the kernel: more threads than cores only contend.
unsigned ScanThreads() {
  const unsigned cores = std::thread::hardware_concurrency();
  return cores == 0 ? 2 : std::min(4u, cores);
}
}  // namespace

// Runs on a thread-pool thread, which starts the scan threads and waits.
// The root itself may be reached through symlinks (it is the caller's
// choice); nothing below it is.
void TreeScan::Execute() {
  rootFd_ = open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (rootFd_ < 0) {
    Fail(errno, "open", "");
    return;
  }
  std::deque<Task> queue;
  queue_ = &queue;
  top_ = std::make_unique<Node>();
  queue.push_back(Task{top_.get(), ""});
  pending_ = 1;
  std::vector<std::thread> threads;
  for (unsigned k = 1, wanted = ScanThreads(); k < wanted; k++) {
    try {
      threads.emplace_back([this] { Work(); });
    } catch (const std::system_error&) {
      break;  // fewer threads, same result
    }
  }
  Work();
  for (std::thread& thread : threads) thread.join();
  close(rootFd_);
  if (error_ != 0) return;
  Flatten(*top_, "");
  top_.reset();
  Digest();
}

void TreeScan::Work() {
  for (;;) {
    Task task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return !queue_->empty() || pending_ == 0 || error_ != 0; });
      if (queue_->empty() || error_ != 0) return;
      task = std::move(queue_->front());
      queue_->pop_front();
    }
    List(task);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pending_--;
    }
    wake_.notify_all();
  }
}

bool TreeScan::List(Task& task) {
  const bool top = task.prefix.empty();
  const int fd = top ? dup(rootFd_) : OpenBeneath(rootFd_, task.prefix, O_RDONLY | O_DIRECTORY);
  if (fd < 0) {
    // Removed since its parent listed it: not part of the tree any more.
    if (errno == ENOENT && !top) {
      task.node->gone = true;
      std::lock_guard<std::mutex> lock(mutex_);
      vanished_.push_back(task.prefix);
      return true;
    }
    return Fail(errno, "open", task.prefix);
  }
  DIR* dir = fdopendir(fd);
  if (dir == nullptr) {
    const int error = errno;
    close(fd);
    return Fail(error, "scandir", task.prefix);
  }
  // All names first: the order must not depend on the directory's hash order.
  std::vector<std::string> names;
  for (;;) {
    errno = 0;
    const struct dirent* entry = readdir(dir);
    if (entry == nullptr) {
      if (errno == 0) break;
      const int error = errno;
      closedir(dir);
      return Fail(error, "scandir", task.prefix);
    }
    if (IsDotOrDotDot(entry->d_name)) continue;
    if (top && std::find(exclude_.begin(), exclude_.end(), entry->d_name) != exclude_.end()) continue;
    names.emplace_back(entry->d_name);
  }
  // std::string compares as unsigned bytes (char_traits<char>::compare is memcmp).
  std::sort(names.begin(), names.end());

  const int parent = dirfd(dir);
  std::vector<Task> children;
  task.node->entries.reserve(names.size());
  for (std::string& name : names) {
    Node::Entry entry;
    if (fstatat(parent, name.c_str(), &entry.st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) continue;
      const int error = errno;
      closedir(dir);
      return Fail(error, "lstat", top ? name : task.prefix + "/" + name);
    }
    if (S_ISLNK(entry.st.st_mode)) {
      const int error = ReadLink(parent, name.c_str(), static_cast<size_t>(entry.st.st_size), &entry.target);
      if (error == ENOENT) continue;
      if (error != 0) {
        closedir(dir);
        return Fail(error, "readlink", top ? name : task.prefix + "/" + name);
      }
    }
    if (S_ISDIR(entry.st.st_mode)) {
      entry.child = std::make_unique<Node>();
      children.push_back(Task{entry.child.get(), top ? name : task.prefix + "/" + name});
    }
    entry.name = std::move(name);
    task.node->entries.push_back(std::move(entry));
  }
  closedir(dir);
  if (!children.empty()) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pending_ += children.size();
      for (Task& child : children) queue_->push_back(std::move(child));
    }
    wake_.notify_all();
  }
  return true;
}

void TreeScan::Flatten(const Node& node, const std::string& prefix) {
  for (const Node::Entry& entry : node.entries) {
    if (entry.child != nullptr && entry.child->gone) continue;
    const struct stat& st = entry.st;
    const std::string path = prefix.empty() ? entry.name : prefix + "/" + entry.name;
    paths_.push_back(path);
    types_.push_back(TypeOf(st.st_mode));
    modes_.push_back(static_cast<uint32_t>(st.st_mode));
    sizes_.push_back(static_cast<double>(st.st_size));
    atimeSec_.push_back(static_cast<double>(st.st_atim.tv_sec));
    atimeNsec_.push_back(static_cast<uint32_t>(st.st_atim.tv_nsec));
    stats_.Push(st);
    targets_.push_back(entry.target);
    if (entry.child != nullptr) Flatten(*entry.child, path);
  }
}

// The strings joined by NUL, which no file name or link target holds:
// lib/native/tree-scan.js splits them (one JS string per entry made here cost more
// than the scan itself).
static std::string Joined(const std::vector<std::string>& values) {
  size_t length = values.size();
  for (const std::string& value : values) length += value.size();
  std::string joined;
  joined.reserve(length);
  for (size_t i = 0; i < values.size(); i++) {
    if (i > 0) joined.push_back('\0');
    joined.append(values[i]);
  }
  return joined;
}

void TreeScan::Digest() {
  Sha256 sha;
  uint8_t out[Sha256::kSize];
  // A scan without its digest must fail, not pass as an unchanged tree.
  if (!sha.Begin()) {
    Fail(ENOMEM, "sha256", "");
    return;
  }
  std::string record;
  for (size_t i = 0; i < paths_.size(); i++) {
    record.clear();
    record.append(paths_[i]);
    record.push_back('\0');
    const uint64_t numbers[] = {types_[i],
                                modes_[i],
                                static_cast<uint64_t>(sizes_[i]),
                                stats_.devs[i],
                                stats_.inos[i],
                                static_cast<uint64_t>(stats_.mtimeSec[i]),
                                stats_.mtimeNsec[i],
                                static_cast<uint64_t>(stats_.ctimeSec[i]),
                                stats_.ctimeNsec[i]};
    record.append(reinterpret_cast<const char*>(numbers), sizeof numbers);
    record.append(targets_[i]);
    record.push_back('\n');
    if (!sha.Update(record.data(), record.size())) {
      Fail(ENOMEM, "sha256", "");
      return;
    }
  }
  if (!sha.Finish(out)) {
    Fail(ENOMEM, "sha256", "");
    return;
  }
  static const char kHex[] = "0123456789abcdef";
  digest_.resize(2 * Sha256::kSize);
  for (size_t i = 0; i < Sha256::kSize; i++) {
    digest_[2 * i] = kHex[out[i] >> 4];
    digest_[2 * i + 1] = kHex[out[i] & 15];
  }
}

void TreeScan::OnOK() {
  Napi::Env env = Env();
  if (error_ != 0) {
    deferred_.Reject(FsError(env, error_, syscall_, errorPath_).Value());
    return;
  }
  Napi::Object result = Napi::Object::New(env);
  // One string for all names, unless that would pass V8's longest string
  // (about 2^29 characters): then one string per name.
  size_t total = paths_.size() + targets_.size();
  for (const std::string& value : paths_) total += value.size();
  for (const std::string& value : targets_) total += value.size();
  const bool joined = total < (size_t{1} << 28);
  result.Set("paths",
             joined ? Napi::Value(Napi::String::New(env, Joined(paths_))) : Napi::Value(NewStringColumn(env, paths_)));
  result.Set("types", NewColumn(env, types_));
  result.Set("modes", NewColumn(env, modes_));
  result.Set("sizes", NewColumn(env, sizes_));
  result.Set("atimeSec", NewColumn(env, atimeSec_));
  result.Set("atimeNsec", NewColumn(env, atimeNsec_));
  stats_.Export(env, result);
  result.Set("targets", joined ? Napi::Value(Napi::String::New(env, Joined(targets_)))
                               : Napi::Value(NewStringColumn(env, targets_)));
  result.Set("vanished", NewStringColumn(env, vanished_));
  result.Set("digest", Napi::String::New(env, digest_));
  deferred_.Resolve(result);
}

}  // namespace arenacache
