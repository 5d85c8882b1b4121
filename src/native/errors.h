// The addon's errors for failed system calls, built in one place and shaped
// like node:fs's own, so that callers handle both alike: the errno's name
// and description come from libuv, where node:fs takes them.
#pragma once

#include <napi.h>

#include <string>

namespace arenacache {

// The name node:fs gives errno `error` (positive) as `code`: libuv's
// ("ENOENT"; "ENOTSUP" for EOPNOTSUPP, the same number on Linux). An errno
// libuv has no name for, which node:fs calls UNKNOWN, keeps the C library's
// name where this knows it ("EDQUOT"), else "E<number>".
std::string ErrnoCode(int error);

// How node:fs describes errno `error` (positive) in a message: libuv's
// words ("no such file or directory"), or for an errno libuv does not know,
// the C library's where this knows them, else "unknown error" as node says.
std::string ErrnoDescription(int error);

// An error shaped like node:fs's own: message "ENOENT: no such file or
// directory, open '/x'" (with " -> '/y'" when there is a destination, as
// node words rename errors), code, errno (negative, as libuv reports it),
// syscall, path and, when given, dest. `error` is the positive errno. An
// empty path is left out (a failure tied to no file, as node words errors of
// calls on a descriptor). Not thrown: async workers reject with it.
Napi::Error FsError(Napi::Env env, int error, const char* syscall, const std::string& path = std::string(),
                    const std::string& dest = std::string());

// Throws FsError(...). Returns undefined for the caller to return.
Napi::Value ThrowFsError(Napi::Env env, int error, const char* syscall, const std::string& path = std::string(),
                         const std::string& dest = std::string());

// node:fs's error for rm on a directory without `recursive`, as node:fs
// builds it (its own words, not libuv's): "Path is a directory: rm returned
// EISDIR (is a directory) /x", code ERR_FS_EISDIR, errno (positive there),
// syscall "rm" and path.
Napi::Error RmDirectoryError(Napi::Env env, const std::string& path);

}  // namespace arenacache
