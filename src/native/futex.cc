#include "futex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <ctime>

#include "errors.h"

namespace arenacache {

namespace {

// The address of element `index` of an Int32Array (validated in lib/native.js).
int32_t* WordAt(const Napi::CallbackInfo& info) {
  Napi::Int32Array array = info[0].As<Napi::Int32Array>();
  const size_t index = static_cast<size_t>(info[1].As<Napi::Number>().Int64Value());
  return array.Data() + index;
}

}  // namespace

void Futex::Init(Napi::Env env, Napi::Object exports) {
  exports.Set("futexWait", Napi::Function::New(env, Wait, "futexWait"));
  exports.Set("futexWake", Napi::Function::New(env, Wake, "futexWake"));
}

Napi::Value Futex::Wait(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int32_t* word = WordAt(info);
  const int32_t expected = info[2].As<Napi::Number>().Int32Value();
  const double timeoutMs = info[3].As<Napi::Number>().DoubleValue();
  struct timespec timeout;
  struct timespec* bound = nullptr;
  if (std::isfinite(timeoutMs)) {
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
  return ThrowErrno(env, "futex(FUTEX_WAIT)", errno);
}

Napi::Value Futex::Wake(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int32_t* word = WordAt(info);
  const double count = info[2].As<Napi::Number>().DoubleValue();
  const int n = count >= INT_MAX ? INT_MAX : static_cast<int>(count);
  const long rc = syscall(SYS_futex, word, FUTEX_WAKE, n, nullptr, nullptr, 0);
  if (rc < 0) return ThrowErrno(env, "futex(FUTEX_WAKE)", errno);
  return Napi::Number::New(env, static_cast<double>(rc));
}

}  // namespace arenacache
