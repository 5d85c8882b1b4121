#include "beneath.h"

#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <vector>

namespace arenacache {

namespace {

// The kernel's own limit on links followed in one lookup.
constexpr int kMaxLinks = 40;
// openat2 fails with EAGAIN when a rename elsewhere raced a ".." of the
// lookup; it is safe to try again.
constexpr int kRetries = 8;
// The walk looks again at an entry that changed between its open and its
// readlinkat this often (a file met where a directory is needed is reported
// after this too, so it stays small).
constexpr int kSwapRetries = 2;

// ARENACACHE_OPENAT2=off sends every lookup through the walk, as on a kernel
// without openat2, so that the walk can be tested where openat2 exists.
bool Openat2Enabled() {
  static const bool enabled = [] {
    const char* value = std::getenv("ARENACACHE_OPENAT2");
    return value == nullptr || std::strcmp(value, "off") != 0;
  }();
  return enabled;
}

// fs.protected_symlinks (on in most distributions): a link in a sticky,
// world-writable directory is followed only by its owner, or when it
// belongs to the directory's owner. The kernel applies it to openat2; the
// walk follows links itself, so it applies the same rule.
bool ProtectedSymlinks() {
  static const bool on = [] {
    const int fd = open("/proc/sys/fs/protected_symlinks", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char value = '0';
    const bool read = ::read(fd, &value, 1) == 1;
    close(fd);
    return read && value != '0';
  }();
  return on;
}

// Whether the walk may follow link `name` of directory `dir` (see ProtectedSymlinks).
bool MayFollow(int dir, const std::string& name) {
  if (!ProtectedSymlinks()) return true;
  struct stat parent;
  struct stat link;
  if (fstat(dir, &parent) != 0 || fstatat(dir, name.c_str(), &link, AT_SYMLINK_NOFOLLOW) != 0) return false;
  const bool shared = (parent.st_mode & S_ISVTX) != 0 && (parent.st_mode & S_IWOTH) != 0;
  return !shared || link.st_uid == geteuid() || link.st_uid == parent.st_uid;
}

std::deque<std::string> Components(const std::string& path) {
  const std::vector<std::string> parts = PathComponents(path);
  return std::deque<std::string>(parts.begin(), parts.end());
}

// Where the walk is: the names of the directories below the root that lead
// to it, and one descriptor, for the innermost. ".." drops a name; the
// descriptor is opened again from the root by the names when it is needed
// (each a directory, no link followed), so a walk holds one descriptor
// however deep the tree, and a run of ".." costs one reopening.
class DirStack {
 public:
  explicit DirStack(int root) : root_(root) {}
  ~DirStack() { CloseCurrent(); }
  DirStack(const DirStack&) = delete;
  DirStack& operator=(const DirStack&) = delete;

  // The current directory's descriptor; -1 with errno if it cannot be reopened.
  int Top() {
    if (names_.empty()) return root_;
    if (current_ >= 0) return current_;
    int dir = root_;
    for (const std::string& name : names_) {
      const int next = openat(dir, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      const int error = errno;
      if (dir != root_) close(dir);
      if (next < 0) {
        errno = error;
        return -1;
      }
      dir = next;
    }
    current_ = dir;
    return dir;
  }
  bool AtRoot() const { return names_.empty(); }
  void Push(int fd, std::string name) {
    CloseCurrent();
    current_ = fd;
    names_.push_back(std::move(name));
  }
  void Pop() {
    CloseCurrent();
    names_.pop_back();
  }
  void Clear() {
    CloseCurrent();
    names_.clear();
  }

 private:
  void CloseCurrent() {
    if (current_ >= 0) close(current_);
    current_ = -1;
  }

  int root_;
  int current_ = -1;
  std::vector<std::string> names_;
};

int Fail(int error) {
  errno = error;
  return -1;
}

int Outside(bool* outside) {
  *outside = true;
  return Fail(EXDEV);
}

// Whether the absolute link text `target` names the root or a place under
// it; *rest is then the part below the root.
bool UnderRoot(const std::string& target, const std::string& rootPath, std::string* rest) {
  if (rootPath.empty()) return false;
  if (rootPath == "/") {
    *rest = target.substr(1);
    return true;
  }
  if (target.compare(0, rootPath.size(), rootPath) != 0) return false;
  if (target.size() == rootPath.size()) {
    rest->clear();
    return true;
  }
  if (target[rootPath.size()] != '/') return false;
  *rest = target.substr(rootPath.size() + 1);
  return true;
}

// A ".." component in a path we were given (links may contain them; the
// paths lib/ passes never do, so one is refused rather than interpreted).
bool ClimbsAnywhere(const std::string& path) {
  for (const std::string& part : PathComponents(path)) {
    if (part == "..") return true;
  }
  return false;
}

// The lookup done one component at a time, each relative to the descriptor
// of the directory before it, reading links with readlinkat and following
// them by hand: for kernels without openat2, and to follow absolute links
// that name a place inside the root (openat2 refuses every absolute link).
int Walk(int root, const std::string& rootPath, const std::string& path, int flags, mode_t mode, Links links,
         bool* outside) {
  // The caller's O_NOFOLLOW is about the last component only.
  const bool followLast = (flags & O_NOFOLLOW) == 0 && links == Links::kFollowInside;
  // As the kernel answers: a file to create cannot be named with a trailing slash.
  if ((flags & O_CREAT) != 0 && !path.empty() && path.back() == '/') return Fail(EISDIR);
  DirStack dirs(root);
  std::deque<std::string> pending = Components(path);
  int followed = 0;
  while (!pending.empty()) {
    std::string name = std::move(pending.front());
    pending.pop_front();
    const bool last = pending.empty();
    if (name.empty() || name == ".") {
      if (!last) continue;
      name = ".";
    } else if (name == "..") {
      if (dirs.AtRoot()) return Outside(outside);
      dirs.Pop();
      if (!last) continue;
      name = ".";
    }
    const int how = last ? (flags | O_NOFOLLOW | O_CLOEXEC) : (O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    char target[PATH_MAX];
    ssize_t length = -1;
    // An entry swapped between the open and readlinkat (a link when opened,
    // a directory again when read) is looked at again, not reported as
    // what it never quite was.
    const int here = dirs.Top();
    if (here < 0) return Fail(errno);
    for (int attempt = 0; length < 0; attempt++) {
      int fd = openat(here, name.c_str(), how, last ? mode : 0);
      int error = errno;
      if (fd >= 0 && last && (flags & O_PATH) != 0) {
        // O_PATH with O_NOFOLLOW opens a link itself instead of failing.
        struct stat st;
        if (fstat(fd, &st) == 0 && S_ISLNK(st.st_mode)) {
          close(fd);
          fd = -1;
          error = ELOOP;
        }
      }
      if (fd >= 0) {
        if (last) return fd;
        dirs.Push(fd, name);
        break;
      }
      // O_NOFOLLOW met a link (ELOOP), or O_DIRECTORY did (ENOTDIR); if
      // readlinkat finds none, the open's own error stands.
      if (error != ELOOP && error != ENOTDIR) return Fail(error);
      length = readlinkat(here, name.c_str(), target, sizeof target);
      if (length < 0 && (errno != EINVAL || attempt == kSwapRetries)) return Fail(error);
    }
    if (length < 0) continue;  // opened: on to the next component
    if (links == Links::kRefuse || (last && !followLast) || ++followed > kMaxLinks) return Fail(ELOOP);
    if (!MayFollow(here, name)) return Fail(EACCES);
    if (length == static_cast<ssize_t>(sizeof target)) return Fail(ENAMETOOLONG);
    std::string text(target, static_cast<size_t>(length));
    if (text.empty()) return Fail(ENOENT);
    if (text[0] == '/') {
      std::string rest;
      if (!UnderRoot(text, rootPath, &rest)) return Outside(outside);
      dirs.Clear();
      text = std::move(rest);
    }
    // What follows the link is looked up in what it names.
    const std::vector<std::string> parts = PathComponents(text);
    pending.insert(pending.begin(), parts.begin(), parts.end());
  }
  return Fail(ENOENT);  // unreachable: the last component always returns
}

}  // namespace

std::vector<std::string> PathComponents(const std::string& path) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t slash = path.find('/', start);
    parts.push_back(path.substr(start, slash == std::string::npos ? std::string::npos : slash - start));
    if (slash == std::string::npos) return parts;
    start = slash + 1;
  }
}

size_t SuffixStart(const std::string& path) {
  size_t end = path.size();
  while (end > 0 && (path[end - 1] == '/' || (path[end - 1] == '.' && (end == 1 || path[end - 2] == '/')))) end--;
  return end;
}

int ResolveBeneath(int root, const std::string& rootPath, const std::string& path, int flags, mode_t mode, Links links,
                   bool* outside) {
  *outside = false;
  if ((!path.empty() && path[0] == '/') || ClimbsAnywhere(path)) return Outside(outside);
  struct open_how how = {};
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
  how.mode = (flags & O_CREAT) != 0 ? mode : 0;  // openat2 refuses a mode it will not use
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | (links == Links::kRefuse ? RESOLVE_NO_SYMLINKS : 0);
  const char* name = path.empty() ? "." : path.c_str();
  for (int attempt = 0; attempt < kRetries && Openat2Enabled(); attempt++) {
    const int fd = static_cast<int>(syscall(SYS_openat2, root, name, &how, sizeof how));
    if (fd >= 0) return fd;
    if (errno == EAGAIN) continue;
    // EXDEV: the lookup left the root, or met an absolute link that may name
    // a place inside it; the walk tells which. ENOSYS (before Linux 5.6) or
    // EPERM (a seccomp filter that does not know openat2): the walk does it all.
    if (errno != EXDEV && errno != ENOSYS && errno != EPERM) return -1;
    break;
  }
  return Walk(root, rootPath, path, flags, mode, links, outside);
}

int OpenParentBeneath(int root, const std::string& rootPath, const std::string& path, std::string* name,
                      bool* outside) {
  *outside = false;
  // The last component ends before any trailing run of "/" and "." components.
  const size_t end = SuffixStart(path);
  if (end == 0) {
    // The root itself: its entry is "." in itself (mkdir gives EEXIST, rename EBUSY).
    *name = ".";
    return ResolveBeneath(root, rootPath, std::string(), O_PATH | O_DIRECTORY, 0, Links::kFollowInside, outside);
  }
  const size_t slash = path.rfind('/', end - 1);
  const size_t start = slash == std::string::npos ? 0 : slash + 1;
  *name = path.substr(start);
  if (*name == ".." || name->compare(0, 3, "../") == 0) return Outside(outside);
  return ResolveBeneath(root, rootPath, path.substr(0, start), O_PATH | O_DIRECTORY, 0, Links::kFollowInside, outside);
}

}  // namespace arenacache
