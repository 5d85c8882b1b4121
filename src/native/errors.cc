#include "errors.h"

#include <uv.h>

#include <cerrno>
#include <string>

namespace arenacache {

namespace {

// Whether libuv has a name for errno `error`: uv_err_name and uv_strerror
// make up (and leak) a string for any other.
bool LibuvKnows(int error) {
  switch (-error) {
#define ARENACACHE_LIBUV_ERRNO(name, description) case UV_##name:
    UV_ERRNO_MAP(ARENACACHE_LIBUV_ERRNO)
#undef ARENACACHE_LIBUV_ERRNO
    return true;
    default: return false;
  }
}

// The errnos this addon can meet (quotas, locks, NFS) that libuv has no
// name for, named and described as the C library does.
struct CLibraryErrno {
  const char* name;
  const char* description;
};

CLibraryErrno CLibraryText(int error) {
  switch (error) {
    case EDQUOT: return {"EDQUOT", "disk quota exceeded"};
    case ENOLCK: return {"ENOLCK", "no locks available"};
    case ESTALE: return {"ESTALE", "stale file handle"};
    default: return {nullptr, "unknown error"};
  }
}

}  // namespace

std::string ErrnoCode(int error) {
  if (LibuvKnows(error)) return uv_err_name(-error);
  const char* name = CLibraryText(error).name;
  return name != nullptr ? name : "E" + std::to_string(error);
}

std::string ErrnoDescription(int error) {
  return LibuvKnows(error) ? uv_strerror(-error) : CLibraryText(error).description;
}

Napi::Error FsError(Napi::Env env, int error, const char* syscall, const std::string& path, const std::string& dest) {
  const std::string code = ErrnoCode(error);
  std::string message = code + ": " + ErrnoDescription(error) + ", " + syscall;
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

Napi::Value ThrowFsError(Napi::Env env, int error, const char* syscall, const std::string& path,
                         const std::string& dest) {
  FsError(env, error, syscall, path, dest).ThrowAsJavaScriptException();
  return env.Undefined();
}

Napi::Error RmDirectoryError(Napi::Env env, const std::string& path) {
  Napi::Error e = Napi::Error::New(env, "Path is a directory: rm returned EISDIR (is a directory) " + path);
  e.Set("code", Napi::String::New(env, "ERR_FS_EISDIR"));
  e.Set("errno", Napi::Number::New(env, EISDIR));
  e.Set("syscall", Napi::String::New(env, "rm"));
  e.Set("path", Napi::String::New(env, path));
  return e;
}

}  // namespace arenacache
