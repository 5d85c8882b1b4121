// Helpers shared by the addon's classes: raising an error that carries the
// errno name as `code` (like Node's own fs errors), so lib/ can turn it into
// an ArenaCacheError with a stable code and the OS reason as its cause.
#pragma once

#include <napi.h>

#include <string>

namespace arenacache {

// Throws Error(`${syscall} failed: ${strerror}`) with code (e.g. "ENOSPC"),
// errno and syscall properties. Returns undefined for the caller to return.
Napi::Value ThrowErrno(Napi::Env env, const char* syscall, int error);

// The errno name ("ENOENT"), or "E<number>" for one without a name here.
const char* ErrnoName(int error);

// ErrnoName, never null: "E<number>" for an errno it has no name for.
std::string ErrnoCode(int error);

// An error shaped like node:fs's own, so callers handle both alike: message
// "ENOENT: no such file or directory, open '/x'" (with " -> '/y'" when there
// is a destination, as node words rename errors), code, errno (negative, as
// libuv reports it), syscall, path and, when given, dest. `error` is the
// positive errno. An empty path is left out (a failure tied to no file, as
// node words errors of calls on a descriptor). Not thrown: async workers
// reject with it.
Napi::Error FsError(Napi::Env env, int error, const char* syscall, const std::string& path,
                    const std::string& dest = std::string());

}  // namespace arenacache
