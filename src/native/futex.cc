#include "futex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <ctime>

#include "arguments.h"
#include "errors.h"

namespace arenacache {

namespace {

// The address of element `index` of the Int32Array argument 0, or null
// (an exception thrown) when the array or the index is wrong. Any Int32Array
// is memory the futex may use; an index outside it would not be.
int32_t* WordAt(Arguments& args) {
  void* data = nullptr;
  size_t length = 0;
  const Arguments::Value array = args.At(0, "array");
  if (!args.TypedArray(array, napi_int32_array, -1, "a non-empty Int32Array", &data, &length)) return nullptr;
  // Detached, or made empty: no word to wait on.
  if (length == 0) {
    args.Fail(true, array, "a non-empty Int32Array");
    return nullptr;
  }
  size_t index = 0;
  if (!args.Integer(args.At(1, "index"), 0, static_cast<int64_t>(length) - 1, &index)) return nullptr;
  return static_cast<int32_t*>(data) + index;
}

}  // namespace

void Futex::Init(Napi::Env env, Napi::Object exports) {
  exports.Set("futexWait", Napi::Function::New(env, Wait, "futexWait"));
  exports.Set("futexWake", Napi::Function::New(env, Wake, "futexWake"));
}

Napi::Value Futex::Wait(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Arguments args(info, "futexWait(array, index, expected, timeoutMs)");
  if (!args.Count(4)) return env.Undefined();
  int32_t* word = WordAt(args);
  int32_t expected = 0;
  // NaN and Infinity wait without bound, as with Atomics.wait.
  double timeoutMs = 0;
  if (word == nullptr || !args.Integer(args.At(2, "expected"), INT32_MIN, INT32_MAX, &expected) ||
      !args.Number(args.At(3, "timeoutMs"), "a number of milliseconds", &timeoutMs)) {
    return env.Undefined();
  }
  struct timespec timeout;
  struct timespec* bound = nullptr;
  // Beyond 1e15 ms (31,000 years) a timespec could overflow: no bound either.
  if (std::isfinite(timeoutMs) && timeoutMs <= 1e15) {
    const double ms = timeoutMs < 0 ? 0 : timeoutMs;
    timeout.tv_sec = static_cast<time_t>(ms / 1000);
    timeout.tv_nsec = static_cast<long>(std::fmod(ms, 1000.0) * 1e6);
    bound = &timeout;
  }
  // FUTEX_WAIT without FUTEX_PRIVATE_FLAG: shared between processes.
  const long rc = syscall(SYS_futex, word, FUTEX_WAIT, expected, bound, nullptr, 0);
  if (rc == 0 || errno == EINTR) return Napi::String::New(env, "ok");
  if (errno == EAGAIN) return Napi::String::New(env, "not-equal");
  if (errno == ETIMEDOUT) return Napi::String::New(env, "timed-out");
  return ThrowFsError(env, errno, "futex(FUTEX_WAIT)");
}

Napi::Value Futex::Wake(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Arguments args(info, "futexWake(array, index, count)");
  if (!args.Count(3)) return env.Undefined();
  int32_t* word = WordAt(args);
  if (word == nullptr) return env.Undefined();
  static const char* const what = "a non-negative integer or Infinity";
  const Arguments::Value countArg = args.At(2, "count");
  double count = 0;
  if (!args.Number(countArg, what, &count)) return env.Undefined();
  // NaN, a negative or a fraction would reach the int conversion below undefined.
  if (!(count >= 0) || (std::isfinite(count) && std::trunc(count) != count)) {
    args.Fail(true, countArg, what);
    return env.Undefined();
  }
  const int n = count >= INT_MAX ? INT_MAX : static_cast<int>(count);
  const long rc = syscall(SYS_futex, word, FUTEX_WAKE, n, nullptr, nullptr, 0);
  if (rc < 0) return ThrowFsError(env, errno, "futex(FUTEX_WAKE)");
  return Napi::Number::New(env, static_cast<double>(rc));
}

}  // namespace arenacache
