// TreeScan: every entry of a directory tree with its lstat, in one trip to
// the thread pool.
//
// A workspace snapshot starts from a listing of the whole tree. Walking it
// with node:fs costs a readdir per directory and an lstat per entry, each a
// hop between the event loop and the thread pool; here the walk runs on a
// few threads of its own (directories are handed out from a queue: the
// lstat calls are the cost, and they wait on the kernel) and comes back as
// columns. Directories are opened below the root without following any
// symbolic link (OpenBeneath) and entries stat'ed relative to them: a link
// swapped in for a directory mid-scan cannot lead the walk outside the tree.
//
// The order is canonical, so that two scans of equal trees are equal
// arrays: depth-first pre-order, the children of each directory sorted by
// the bytes of their names. A directory comes right before its contents.
#pragma once

#include <napi.h>
#include <sys/stat.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "columns.h"

namespace arenacache {

class TreeScan : public Napi::AsyncWorker {
 public:
  static void Init(Napi::Env env, Napi::Object exports);

  TreeScan(Napi::Env env, std::string root, std::vector<std::string> exclude);

  void Execute() override;
  void OnOK() override;

 private:
  // scanTree(root, exclude) -> Promise<columns> (see lib/native/tree-scan.js),
  // rejecting with a node:fs-shaped error naming the full path. Arguments
  // are checked by lib/native/tree-scan.js, and here too (arguments.h).
  static Napi::Value ScanTree(const Napi::CallbackInfo& info);

  struct Node;
  struct Task;
  // Lists one directory into its node, queueing its subdirectories.
  // Returns false on an error (kept in error_).
  bool List(Task& task);
  void Work();
  // Appends `node`'s entries and, after each directory, its subtree: the
  // canonical order, whatever order the threads finished in.
  void Flatten(const Node& node, const std::string& prefix);
  bool Fail(int error, const char* syscall, const std::string& relative);

  Napi::Promise::Deferred deferred_;
  std::string root_;
  std::vector<std::string> exclude_;

  std::vector<std::string> paths_;
  std::vector<uint8_t> types_;
  std::vector<uint32_t> modes_;
  std::vector<double> sizes_;
  StatColumns stats_;  // dev, ino, mtime, ctime
  std::vector<double> atimeSec_;
  std::vector<uint32_t> atimeNsec_;
  std::vector<std::string> targets_;
  // SHA-256 over every entry's path, type, mode, size, dev, ino, mtime,
  // ctime and link target (not atime: reading changes it): equal digests
  // mean an unchanged tree, so a snapshot can skip everything else.
  std::string digest_;
  // Directories listed by their parent but gone when their turn came
  // (removed, or an ancestor moved): their subtrees are missing.
  std::vector<std::string> vanished_;

  void Digest();

  int rootFd_ = -1;
  std::unique_ptr<Node> top_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Task>* queue_ = nullptr;
  size_t pending_ = 0;  // queued or being listed

  int error_ = 0;
  const char* syscall_ = "";
  std::string errorPath_;
};

}  // namespace arenacache
