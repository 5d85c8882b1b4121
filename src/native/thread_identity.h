// ThreadIdentity: who holds a shard lock, and is that thread still alive?
//
// A lock word in the arena records the OS thread id (and process id) of its
// holder. A waiter that finds the lock held for long asks whether that thread
// still exists: a worker terminated mid-operation, or a process killed with
// SIGKILL, leaves a lock behind whose owner is gone, and the waiter can then
// repair the shard at once instead of waiting out the whole lease.
#pragma once

#include <napi.h>

namespace arenacache {

class ThreadIdentity {
 public:
  static void Init(Napi::Env env, Napi::Object exports);

 private:
  // currentThreadId() -> number: the kernel thread id (gettid) of the caller.
  static Napi::Value CurrentThreadId(const Napi::CallbackInfo& info);
  // isThreadAlive(pid, tid) -> boolean: tgkill(pid, tid, 0) did not fail with
  // ESRCH. EPERM means the thread exists but belongs to someone else: alive.
  static Napi::Value IsThreadAlive(const Napi::CallbackInfo& info);
};

}  // namespace arenacache
