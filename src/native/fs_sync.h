// FsSync: syncfs(2) on the filesystem holding a path, off the event loop.
//
// A snapshot is durable only once every file written for it is on disk.
// fsync per file costs a journal commit each; one syncfs after the whole
// run flushes them together (and the rest of that filesystem's dirty data,
// which is the price). It can take seconds, hence the thread pool.
#pragma once

#include <napi.h>

#include <string>

namespace arenacache {

class FsSync : public Napi::AsyncWorker {
 public:
  static void Init(Napi::Env env, Napi::Object exports);

  FsSync(Napi::Env env, std::string path);

  void Execute() override;
  void OnOK() override;

 private:
  // syncFilesystem(path) -> Promise<undefined>; `path` is a directory on the
  // filesystem to flush (checked by lib/native/fs-sync.js, and by arguments.h
  // here). Rejects with a node:fs-shaped error.
  static Napi::Value SyncFilesystem(const Napi::CallbackInfo& info);

  Napi::Promise::Deferred deferred_;
  std::string path_;
  int error_ = 0;
  const char* syscall_ = "";
};

}  // namespace arenacache
