// TreeScan: every entry of a directory tree with its lstat, in one trip to
// the thread pool.
//
// A workspace snapshot starts from a listing of the whole tree. Walking it
// with node:fs costs a readdir per directory and an lstat per entry, each a
// hop between the event loop and the thread pool; here the walk runs on one
// pool thread and comes back as columns. Entries are opened and stat'ed
// relative to their parent directory's descriptor (openat, fstatat), never
// following a symbolic link: a link swapped in for a directory mid-scan
// cannot lead the walk outside the tree.
//
// The order is canonical, so that two scans of equal trees are equal
// arrays: depth-first pre-order, the children of each directory sorted by
// the bytes of their names. A directory comes right before its contents.
#pragma once

#include <napi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace arenacache {

class TreeScan : public Napi::AsyncWorker {
 public:
  static void Init(Napi::Env env, Napi::Object exports);

  TreeScan(Napi::Env env, std::string root, std::vector<std::string> exclude);

  void Execute() override;
  void OnOK() override;

 private:
  // scanTree(root, exclude) -> Promise<columns> (see lib/native.js),
  // rejecting with a node:fs-shaped error naming the full path. Arguments
  // are checked by lib/native.js.
  static Napi::Value ScanTree(const Napi::CallbackInfo& info);

  // Lists the directory open as `fd` (whose path below the root is
  // `prefix`, "" for the root), appends its entries and recurses into its
  // subdirectories. Takes ownership of fd. Returns false on an error (kept
  // in error_).
  bool Walk(int fd, const std::string& prefix);
  bool Fail(int error, const char* syscall, const std::string& relative);
  // Drops the entry added last (a directory removed before it could be opened).
  void RemoveLast();

  Napi::Promise::Deferred deferred_;
  std::string root_;
  std::vector<std::string> exclude_;

  std::vector<std::string> paths_;
  std::vector<uint8_t> types_;
  std::vector<uint32_t> modes_;
  std::vector<double> sizes_;
  std::vector<uint64_t> devs_;
  std::vector<uint64_t> inos_;
  std::vector<double> atimeSec_;
  std::vector<uint32_t> atimeNsec_;
  std::vector<double> mtimeSec_;
  std::vector<uint32_t> mtimeNsec_;
  std::vector<double> ctimeSec_;
  std::vector<uint32_t> ctimeNsec_;
  std::vector<std::string> targets_;
  // SHA-256 over every entry's path, type, mode, size, dev, ino, mtime,
  // ctime and link target (not atime: reading changes it): equal digests
  // mean an unchanged tree, so a snapshot can skip everything else.
  std::string digest_;

  void Digest();

  int error_ = 0;
  const char* syscall_ = "";
  std::string errorPath_;
};

}  // namespace arenacache
