// FileLoader: reads a whole file together with its stats before and after,
// in one trip to the thread pool.
//
// CacheFS caches a file only if it did not change while it was read, so a
// miss needs open, fstat, read, fstat and close. Through node:fs/promises
// that is five or six hops between the event loop and the thread pool (each
// costing more than the system call itself); here it is one. The calls are
// libuv's own, made synchronously on the worker thread, so stats and errors
// are exactly those node:fs gives (same codes, messages and number fields).
#pragma once

#include <napi.h>
#include <uv.h>

#include <string>

namespace arenacache {

class FileLoader : public Napi::AsyncWorker {
 public:
  static void Init(Napi::Env env, Napi::Object exports);

  FileLoader(Napi::Env env, std::string path, uv_loop_t* loop);
  ~FileLoader() override;

  void Execute() override;
  void OnOK() override;

 private:
  // loadFile(path) -> Promise<{ before, data, after }>, rejecting with a
  // node:fs-shaped error (code, errno, syscall, path). `path` is checked by
  // lib/native.js.
  static Napi::Value LoadFile(const Napi::CallbackInfo& info);

  int Fail(int result, const char* syscall);
  int ReadAll(uv_file file);

  Napi::Promise::Deferred deferred_;
  std::string path_;
  uv_loop_t* loop_;
  uv_stat_t before_{};
  uv_stat_t after_{};
  char* data_ = nullptr;
  size_t length_ = 0;
  int error_ = 0;
  const char* syscall_ = nullptr;
};

}  // namespace arenacache
