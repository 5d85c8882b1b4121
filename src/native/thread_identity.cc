#include "thread_identity.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "arguments.h"

namespace arenacache {

void ThreadIdentity::Init(Napi::Env env, Napi::Object exports) {
  exports.Set("currentThreadId", Napi::Function::New(env, CurrentThreadId, "currentThreadId"));
  exports.Set("isThreadAlive", Napi::Function::New(env, IsThreadAlive, "isThreadAlive"));
}

Napi::Value ThreadIdentity::CurrentThreadId(const Napi::CallbackInfo& info) {
  Arguments args(info, "currentThreadId()");
  if (!args.Count(0)) return info.Env().Undefined();
  const long tid = syscall(SYS_gettid);
  return Napi::Number::New(info.Env(), static_cast<double>(tid));
}

Napi::Value ThreadIdentity::IsThreadAlive(const Napi::CallbackInfo& info) {
  Arguments args(info, "isThreadAlive(pid, tid)");
  pid_t pid = 0;
  pid_t tid = 0;
  // tgkill reads pid <= 0 as no process (EINVAL), which would answer "alive".
  if (!args.Count(2) || !args.Integer(args.At(0, "pid"), 1, INT32_MAX, &pid) ||
      !args.Integer(args.At(1, "tid"), 1, INT32_MAX, &tid)) {
    return info.Env().Undefined();
  }
  const long rc = syscall(SYS_tgkill, pid, tid, 0);
  return Napi::Boolean::New(info.Env(), rc == 0 || errno != ESRCH);
}

}  // namespace arenacache
