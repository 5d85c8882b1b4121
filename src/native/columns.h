// Columns: results handed to JavaScript as one typed array per field.
//
// A scan or a run of file jobs can have tens of thousands of entries. One
// object per entry costs a property store per field per entry on the main
// thread; a typed array per field is one allocation and one memcpy, and the
// JavaScript side reads it by index just as fast. Header-only: these are
// templates, used by TreeScan and FileJobs.
#pragma once

#include <napi.h>

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

}  // namespace arenacache
