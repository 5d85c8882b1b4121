// Resolving paths beneath a directory descriptor, never outside it.
//
// A path checked and then opened by name can be redirected between the two
// steps: a directory swapped for a symbolic link (renameat2 RENAME_EXCHANGE)
// makes the open land outside. Everything here resolves relative to an open
// directory descriptor instead, so there is no second lookup to race:
// openat2(RESOLVE_BENEATH) when the kernel has it (Linux 5.6), and otherwise
// one component at a time with openat(O_NOFOLLOW) and readlinkat, each step
// relative to the descriptor of the step before.
#pragma once

#include <fcntl.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace arenacache {

enum class Links {
  // Follow symbolic links whose resolution stays beneath the root (relative
  // ones, and absolute ones naming a place under rootPath); refuse others.
  kFollowInside,
  // Refuse every symbolic link on the way (ELOOP), as snapshots do.
  kRefuse,
};

// Opens `path` (relative; "" is the root itself) beneath the directory `root`
// with open(2) `flags` (O_CLOEXEC is added) and `mode`. Returns the
// descriptor, or -1 with errno; a path that would leave the root fails with
// EXDEV and sets *outside. `rootPath` is the root's real path, which
// absolute links are compared with (kFollowInside only).
int ResolveBeneath(int root, const std::string& rootPath, const std::string& path, int flags, mode_t mode, Links links,
                   bool* outside);

// Opens the directory holding the last component of `path` beneath `root`
// (following links as ResolveBeneath does) and sets *name to that component,
// with any trailing "/" or "/." kept, so that the *at call made with it
// answers as the same call by path would ("a.txt/" is ENOTDIR).
int OpenParentBeneath(int root, const std::string& rootPath, const std::string& path, std::string* name, bool* outside);

// "a//b/" -> "a", "", "b", "": empty components are kept, so that a
// trailing slash still asks for a directory at the end.
std::vector<std::string> PathComponents(const std::string& path);

// Where the trailing run of "/" and "." components of `path` starts: the
// length of "new/." without it is 3.
size_t SuffixStart(const std::string& path);

// The snapshots' form: no symbolic link at all (ELOOP; ".." is EXDEV).
inline int OpenBeneath(int root, const std::string& path, int flags) {
  bool outside = false;
  return ResolveBeneath(root, std::string(), path, flags | O_NOFOLLOW, 0, Links::kRefuse, &outside);
}

}  // namespace arenacache
