// Futex: wait and wake on an int32 in a mapped file, across processes.
//
// Atomics.wait/notify only reach threads of the same process waiting on the
// same address. A file-backed arena is mapped by several processes (and
// perhaps several times by one), so its lock sleepers use the kernel's
// shared futex instead, which is keyed by the file page, not the address.
#pragma once

#include <napi.h>

namespace arenacache {

class Futex {
 public:
  static void Init(Napi::Env env, Napi::Object exports);

 private:
  // futexWait(int32Array, index, expected, timeoutMs) -> "ok" | "not-equal" |
  // "timed-out", like Atomics.wait. A signal interrupting the wait reads as
  // "ok" (callers re-check the word anyway). timeoutMs may be Infinity.
  static Napi::Value Wait(const Napi::CallbackInfo& info);
  // futexWake(int32Array, index, count) -> number of waiters woken.
  static Napi::Value Wake(const Napi::CallbackInfo& info);
};

}  // namespace arenacache
