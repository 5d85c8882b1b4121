#include "fs_sync.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "arguments.h"
#include "errors.h"

namespace arenacache {

void FsSync::Init(Napi::Env env, Napi::Object exports) {
  exports.Set("syncFilesystem", Napi::Function::New(env, SyncFilesystem, "syncFilesystem"));
}

Napi::Value FsSync::SyncFilesystem(const Napi::CallbackInfo& info) {
  Arguments args(info, "syncFilesystem(path)");
  std::string path;
  if (!args.Count(1) || !args.Path(args.At(0, "path"), &path)) return info.Env().Undefined();
  auto* worker = new FsSync(info.Env(), std::move(path));
  Napi::Promise promise = worker->deferred_.Promise();
  worker->Queue();
  return promise;
}

FsSync::FsSync(Napi::Env env, std::string path)
    : Napi::AsyncWorker(env, "arenacache:syncFilesystem"), deferred_(Napi::Promise::Deferred::New(env)),
      path_(std::move(path)) {}

void FsSync::Execute() {
  const int fd = open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    error_ = errno;
    syscall_ = "open";
    return;
  }
  if (syncfs(fd) != 0) {
    error_ = errno;
    syscall_ = "syncfs";
  }
  close(fd);
}

void FsSync::OnOK() {
  Napi::Env env = Env();
  if (error_ != 0) {
    deferred_.Reject(FsError(env, error_, syscall_, path_).Value());
    return;
  }
  deferred_.Resolve(env.Undefined());
}

}  // namespace arenacache
