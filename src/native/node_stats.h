// Stats as node:fs gives them: the same number fields, computed the same way
// from libuv's uv_stat_t (which node:fs itself reads), so that a stat from
// the addon and one from node:fs compare equal field by field.
#pragma once

#include <napi.h>
#include <uv.h>

namespace arenacache {

inline Napi::Object StatsObject(Napi::Env env, const uv_stat_t& s) {
  Napi::Object stats = Napi::Object::New(env);
  auto set = [&](const char* name, double value) { stats.Set(name, Napi::Number::New(env, value)); };
  auto ms = [](const uv_timespec_t& t) {
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
  };
  set("dev", static_cast<double>(s.st_dev));
  set("ino", static_cast<double>(s.st_ino));
  set("mode", static_cast<double>(s.st_mode));
  set("nlink", static_cast<double>(s.st_nlink));
  set("uid", static_cast<double>(s.st_uid));
  set("gid", static_cast<double>(s.st_gid));
  set("rdev", static_cast<double>(s.st_rdev));
  set("size", static_cast<double>(s.st_size));
  set("blksize", static_cast<double>(s.st_blksize));
  set("blocks", static_cast<double>(s.st_blocks));
  set("atimeMs", ms(s.st_atim));
  set("mtimeMs", ms(s.st_mtim));
  set("ctimeMs", ms(s.st_ctim));
  set("birthtimeMs", ms(s.st_birthtim));
  return stats;
}

}  // namespace arenacache
