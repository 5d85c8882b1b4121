#include "errors.h"

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
    default: return nullptr;
  }
}

Napi::Value ThrowErrno(Napi::Env env, const char* syscall, int error) {
  const char* name = ErrnoName(error);
  std::string code = name != nullptr ? name : "E" + std::to_string(error);
  Napi::Error e = Napi::Error::New(env, std::string(syscall) + " failed: " + std::strerror(error));
  e.Set("code", Napi::String::New(env, code));
  e.Set("errno", Napi::Number::New(env, -error));
  e.Set("syscall", Napi::String::New(env, syscall));
  e.ThrowAsJavaScriptException();
  return env.Undefined();
}

}  // namespace arenacache
