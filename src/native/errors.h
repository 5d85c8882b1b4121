// Helpers shared by the addon's classes: raising an error that carries the
// errno name as `code` (like Node's own fs errors), so lib/ can turn it into
// an ArenaCacheError with a stable code and the OS reason as its cause.
#pragma once

#include <napi.h>

namespace arenacache {

// Throws Error(`${syscall} failed: ${strerror}`) with code (e.g. "ENOSPC"),
// errno and syscall properties. Returns undefined for the caller to return.
Napi::Value ThrowErrno(Napi::Env env, const char* syscall, int error);

// The errno name ("ENOENT"), or "E<number>" for one without a name here.
const char* ErrnoName(int error);

}  // namespace arenacache
