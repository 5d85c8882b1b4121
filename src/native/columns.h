// Columns: results handed to JavaScript as one typed array per field.
//
// A scan or a run of file jobs can have tens of thousands of entries. One
// object per entry costs a property store per field per entry on the main
// thread; a typed array per field is one allocation and one memcpy, and the
// JavaScript side reads it by index just as fast. Header-only: these are
// templates, used by TreeScan and FileJobs.
#pragma once

#include <napi.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace arenacache {

// A typed array of the type that fits T (Uint8Array for uint8_t,
// BigUint64Array for uint64_t, ...) holding a copy of `values`.
template <typename T>
Napi::TypedArrayOf<T> NewColumn(Napi::Env env, const std::vector<T>& values) {
  Napi::TypedArrayOf<T> column = Napi::TypedArrayOf<T>::New(env, values.size());
  if (!values.empty()) std::memcpy(column.Data(), values.data(), values.size() * sizeof(T));
  return column;
}

// A JavaScript array of strings; the empty strings (most of the error codes
// of a run that went well) share one value.
inline Napi::Array NewStringColumn(Napi::Env env, const std::vector<std::string>& values) {
  Napi::Array column = Napi::Array::New(env, values.size());
  Napi::String empty = Napi::String::New(env, "");
  for (size_t i = 0; i < values.size(); i++) {
    column.Set(static_cast<uint32_t>(i), values[i].empty() ? empty : Napi::String::New(env, values[i]));
  }
  return column;
}

// The identity columns of a stat (dev, ino, mtime, ctime), which TreeScan
// and FileJobs both report and JavaScript compares across them (a file's
// key in a snapshot manifest): one definition of the fields and their names.
struct StatColumns {
  std::vector<uint64_t> devs;
  std::vector<uint64_t> inos;
  std::vector<double> mtimeSec;
  std::vector<uint32_t> mtimeNsec;
  std::vector<double> ctimeSec;
  std::vector<uint32_t> ctimeNsec;

  // n entries of zeros, set later by index.
  void Reset(size_t n) {
    devs.assign(n, 0);
    inos.assign(n, 0);
    mtimeSec.assign(n, 0);
    mtimeNsec.assign(n, 0);
    ctimeSec.assign(n, 0);
    ctimeNsec.assign(n, 0);
  }

  void Set(size_t i, const struct stat& st) {
    devs[i] = static_cast<uint64_t>(st.st_dev);
    inos[i] = static_cast<uint64_t>(st.st_ino);
    mtimeSec[i] = static_cast<double>(st.st_mtim.tv_sec);
    mtimeNsec[i] = static_cast<uint32_t>(st.st_mtim.tv_nsec);
    ctimeSec[i] = static_cast<double>(st.st_ctim.tv_sec);
    ctimeNsec[i] = static_cast<uint32_t>(st.st_ctim.tv_nsec);
  }

  void Clear(size_t i) { Set(i, {}); }

  void Push(const struct stat& st) {
    devs.emplace_back();
    inos.emplace_back();
    mtimeSec.emplace_back();
    mtimeNsec.emplace_back();
    ctimeSec.emplace_back();
    ctimeNsec.emplace_back();
    Set(devs.size() - 1, st);
  }

  void Export(Napi::Env env, Napi::Object result) const {
    result.Set("devs", NewColumn(env, devs));
    result.Set("inos", NewColumn(env, inos));
    result.Set("mtimeSec", NewColumn(env, mtimeSec));
    result.Set("mtimeNsec", NewColumn(env, mtimeNsec));
    result.Set("ctimeSec", NewColumn(env, ctimeSec));
    result.Set("ctimeNsec", NewColumn(env, ctimeNsec));
  }
};

}  // namespace arenacache
