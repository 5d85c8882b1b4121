// OpenBeneath: opening a path below a directory without following any
// symbolic link on the way, for TreeScan and FileJobs. A directory of the
// tree swapped for a link after it was listed must not lead a scan or a
// read outside the tree: such a path fails (ELOOP; ".." is EXDEV).
#pragma once

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace arenacache {

// `path` is relative to the directory `root`; `flags` are open(2) flags
// (O_NOFOLLOW and O_CLOEXEC are added). Returns the descriptor, or -1 with errno.
inline int OpenBeneath(int root, const std::string& path, int flags) {
  flags |= O_NOFOLLOW | O_CLOEXEC;
  struct open_how how = {};
  how.flags = static_cast<uint64_t>(flags);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  const int fd = static_cast<int>(syscall(SYS_openat2, root, path.c_str(), &how, sizeof how));
  // ENOSYS before Linux 5.6; EPERM where a seccomp filter refuses system
  // calls it does not know (some container runtimes). Then one component
  // at a time, none of them a link or "..": as safe, a little slower.
  if (fd >= 0 || (errno != ENOSYS && errno != EPERM)) return fd;
  int dir = root;
  size_t start = 0;
  for (;;) {
    const size_t slash = path.find('/', start);
    const std::string name = path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    int next = -1;
    if (name == ".." || name.empty()) {
      errno = EXDEV;
    } else {
      next = openat(dir, name.c_str(), slash == std::string::npos ? flags : (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    }
    const int error = errno;
    if (dir != root) close(dir);
    if (next < 0 || slash == std::string::npos) {
      errno = error;
      return next;
    }
    dir = next;
    start = slash + 1;
  }
}

}  // namespace arenacache
