#include "errors.h"

#include <uv.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace arenacache {

const char* ErrnoName(int error) {
  switch (error) {
    case EACCES: return "EACCES";
    case EAGAIN: return "EAGAIN";
    case EBADF: return "EBADF";
    case EBUSY: return "EBUSY";
    case EEXIST: return "EEXIST";
    case EFBIG: return "EFBIG";
    case EINTR: return "EINTR";
    case EINVAL: return "EINVAL";
    case EIO: return "EIO";
    case EISDIR: return "EISDIR";
    case ELOOP: return "ELOOP";
    case EMFILE: return "EMFILE";
    case ENAMETOOLONG: return "ENAMETOOLONG";
    case ENFILE: return "ENFILE";
    case ENODEV: return "ENODEV";
    case ENOENT: return "ENOENT";
    case ENOLCK: return "ENOLCK";
    case ENOMEM: return "ENOMEM";
    case ENOSPC: return "ENOSPC";
    case ENOTDIR: return "ENOTDIR";
    case EOPNOTSUPP: return "EOPNOTSUPP";
    case EPERM: return "EPERM";
    case EROFS: return "EROFS";
    case ETIMEDOUT: return "ETIMEDOUT";
    case ETXTBSY: return "ETXTBSY";
    case EDQUOT: return "EDQUOT";
    case EMLINK: return "EMLINK";
    case ENOSYS: return "ENOSYS";
    case ENOTEMPTY: return "ENOTEMPTY";
    case ENXIO: return "ENXIO";
    case EOVERFLOW: return "EOVERFLOW";
    case ESPIPE: return "ESPIPE";
    case ESTALE: return "ESTALE";
    case EXDEV: return "EXDEV";
    default: return nullptr;
  }
}

std::string ErrnoCode(int error) {
  const char* name = ErrnoName(error);
  return name != nullptr ? name : "E" + std::to_string(error);
}

Napi::Error FsError(Napi::Env env, int error, const char* syscall, const std::string& path, const std::string& dest) {
  const std::string code = ErrnoCode(error);
  // libuv's wording (lower case), which node:fs messages use, not strerror's.
  std::string message = code + ": " + uv_strerror(-error) + ", " + syscall;
  if (!path.empty()) message += " '" + path + "'";
  if (!dest.empty()) message += " -> '" + dest + "'";
  Napi::Error e = Napi::Error::New(env, message);
  e.Set("code", Napi::String::New(env, code));
  e.Set("errno", Napi::Number::New(env, -error));
  e.Set("syscall", Napi::String::New(env, syscall));
  if (!path.empty()) e.Set("path", Napi::String::New(env, path));
  if (!dest.empty()) e.Set("dest", Napi::String::New(env, dest));
  return e;
}

Napi::Value ThrowErrno(Napi::Env env, const char* syscall, int error) {
  const std::string code = ErrnoCode(error);
  Napi::Error e = Napi::Error::New(env, std::string(syscall) + " failed: " + std::strerror(error));
  e.Set("code", Napi::String::New(env, code));
  e.Set("errno", Napi::Number::New(env, -error));
  e.Set("syscall", Napi::String::New(env, syscall));
  e.ThrowAsJavaScriptException();
  return env.Undefined();
}

}  // namespace arenacache
