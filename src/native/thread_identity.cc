#include "thread_identity.h"

#include <cerrno>
#include <sys/syscall.h>
#include <unistd.h>

namespace arenacache {

void ThreadIdentity::Init(Napi::Env env, Napi::Object exports) {
  exports.Set("currentThreadId", Napi::Function::New(env, CurrentThreadId, "currentThreadId"));
  exports.Set("isThreadAlive", Napi::Function::New(env, IsThreadAlive, "isThreadAlive"));
}

Napi::Value ThreadIdentity::CurrentThreadId(const Napi::CallbackInfo& info) {
  const long tid = syscall(SYS_gettid);
  return Napi::Number::New(info.Env(), static_cast<double>(tid));
}

// Arguments are validated in lib/native.js; here they are positive int32s.
Napi::Value ThreadIdentity::IsThreadAlive(const Napi::CallbackInfo& info) {
  const pid_t pid = static_cast<pid_t>(info[0].As<Napi::Number>().Int32Value());
  const pid_t tid = static_cast<pid_t>(info[1].As<Napi::Number>().Int32Value());
  const long rc = syscall(SYS_tgkill, pid, tid, 0);
  return Napi::Boolean::New(info.Env(), rc == 0 || errno != ESRCH);
}

}  // namespace arenacache
