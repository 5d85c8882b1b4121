// Arguments: the checks every export makes on what JavaScript passed it.
//
// These checks are the crash guard: most of lib/native/'s wrappers pass
// their arguments straight through (lib/native/arguments.js says which ones
// check first, for a message of their own), and the addon is also reachable
// without them (require() of the binary, tests, code to come). An unchecked
// value is worse than a wrong answer here: node-addon-api
// (built without C++ exceptions) throws on a failed conversion and carries
// on, so the next Node-API call finds an exception pending and aborts the
// process (napi_throw FATAL), and an async worker queued meanwhile resolves
// a deferred that was never made (a crash on the thread pool's return).
// So every export checks the count, type and range of each argument first,
// before any other Node-API call, and returns at the first that is wrong
// with a TypeError (wrong type) or RangeError (right type, bad value):
//   fileOpen: argument 2 (createMode) must be an integer from 0 to 4095 (got -1)
// A getter that throws while an object is read leaves its own exception
// pending; the check returns false and the export returns at once.
#pragma once

#include <napi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace arenacache {

// Number.MAX_SAFE_INTEGER: the largest integer a double holds exactly.
constexpr int64_t kMaxSafeInteger = (int64_t{1} << 53) - 1;

// Number.isSafeInteger, for a number copied out of JavaScript.
bool IsSafeInteger(double value);

class Arguments {
 public:
  // A value to check: argument `index` (0-based) or something read from it,
  // named as the message names it ("path", "jobs.srcs[3]").
  struct Value {
    napi_value value;
    size_t index;
    std::string name;
  };

  // `signature` is the call as documented, "fileOpen(path, createMode)";
  // messages start with the name before "(", a wrong count quotes it whole.
  Arguments(const Napi::CallbackInfo& info, const char* signature);

  Napi::Env Env() const { return env_; }
  Value At(size_t index, const char* name) const;

  // Between `min` and `max` arguments (TypeError otherwise).
  bool Count(size_t min, size_t max);
  bool Count(size_t count) { return Count(count, count); }

  // Each check below throws and returns false when `v` is not what it
  // wants; on success it sets `out`.
  // A string (of any content).
  bool String(const Value& v, std::string* out);
  // A non-empty string without NUL bytes (a NUL would end it early in the
  // system call: refused, never cut).
  bool Path(const Value& v, std::string* out);
  // A string without NUL bytes, possibly empty; `what` words it otherwise.
  bool Text(const Value& v, std::string* out, const char* what = "a string without NUL bytes");
  // An integer number from `min` to `max` (both at most 2^53 - 1 in
  // magnitude). `what` replaces "an integer from min to max".
  bool Integer(const Value& v, int64_t min, int64_t max, int64_t* out, const char* what = nullptr);
  template <typename T>
  bool Integer(const Value& v, int64_t min, int64_t max, T* out, const char* what = nullptr) {
    int64_t value = 0;
    if (!Integer(v, min, max, &value, what)) return false;
    *out = static_cast<T>(value);
    return true;
  }
  // Any number, NaN and the infinities included.
  bool Number(const Value& v, const char* what, double* out);
  bool Boolean(const Value& v, bool* out);
  // A function, or (with `optional`) undefined; `present` says which.
  bool Function(const Value& v, bool optional, bool* present);
  // An object (not null, not a function); arrays pass.
  bool Object(const Value& v, const char* what);
  // An Array (not a Proxy of one), and its length.
  bool Array(const Value& v, const char* what, uint32_t* length);
  // A typed array of `type` (TypeError otherwise) and `length` elements
  // unless `length` is -1 (RangeError otherwise); its data and length.
  bool TypedArray(const Value& v, napi_typedarray_type type, int64_t length, const std::string& what, void** data,
                  size_t* elements);

  // Reads property `key` of object `v` (running its getter, if any): false
  // when that threw, its exception left pending.
  bool Get(const Value& v, const char* key, Value* out);
  // The `length` elements of the array `v`, each a string (a TypeError
  // saying `what` for the first that is not, named "exclude[2]").
  bool Strings(const Value& v, uint32_t length, const char* what, std::vector<std::string>* out);

  // Throws "<fn>: argument N (<name>) must be <what> (got <got>)", a
  // RangeError when `range`, else a TypeError; returns false. `got` is
  // described as lib/errors.js's describe() does, but objects by their
  // kind only (no getter is run to word an error).
  bool Fail(bool range, size_t index, const std::string& name, const std::string& what, napi_value got);
  bool Fail(bool range, const Value& v, const std::string& what) { return Fail(range, v.index, v.name, what, v.value); }
  // Fail() for a number or string that was copied out of JavaScript (a
  // string as UTF-8, so a lone surrogate in it shows as U+FFFD).
  bool FailNumber(bool range, size_t index, const std::string& name, const std::string& what, double got);
  bool FailString(bool range, size_t index, const std::string& name, const std::string& what, const std::string& got);

 private:
  napi_valuetype TypeOf(napi_value value) const;
  std::string Describe(napi_value value) const;

  Napi::Env env_;
  const Napi::CallbackInfo& info_;
  std::string signature_;
  std::string function_;
};

}  // namespace arenacache
