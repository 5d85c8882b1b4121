// DirExchange: the renames a snapshot restore is made of, and the reflink
// probe that decides how its files are copied.
//
// A restore builds the new tree beside the live one and swaps the two in a
// single step (renameat2 RENAME_EXCHANGE), so a reader sees either the old
// tree or the new, never a mix; where the filesystem or kernel cannot
// exchange, lib/ falls back to two plain renames. RENAME_NOREPLACE moves a
// file into place without ever overwriting one that appeared meanwhile,
// which rename(2) alone cannot promise.
//
// renameat2 is called through syscall(2): glibc has a wrapper only since
// 2.28, and prebuilt binaries are built against older ones.
#pragma once

#include <napi.h>

namespace arenacache {

class DirExchange {
 public:
  static void Init(Napi::Env env, Napi::Object exports);

 private:
  // exchangePaths(a, b): swaps the two paths atomically; throws a
  // node:fs-shaped error (syscall 'renameat2', path a, dest b), EINVAL,
  // ENOSYS or EOPNOTSUPP where that cannot be done.
  static Napi::Value ExchangePaths(const Napi::CallbackInfo& info);
  // renameNoReplace(a, b) -> boolean: renames a to b; false when b exists.
  // Where RENAME_NOREPLACE is not supported, link(a, b) + unlink(a) gives
  // the same answer for files.
  static Napi::Value RenameNoReplace(const Napi::CallbackInfo& info);
  // probeReflink(dir) -> { supported, code }: whether FICLONE works between
  // two new files in `dir`. Separate from the per-file fallback in FileJobs,
  // which would only learn it one failed copy at a time. Throws a
  // node:fs-shaped error when the probe files cannot be made.
  static Napi::Value ProbeReflink(const Napi::CallbackInfo& info);
};

}  // namespace arenacache
