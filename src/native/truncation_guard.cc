#include "truncation_guard.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <mutex>

#include "arguments.h"
#include "external_shared_buffer.h"

namespace arenacache {

namespace {

// The signal handler may run on any thread at any moment, possibly while
// another thread holds a mutex: the ranges it looks at are a fixed table of
// atomics, written only under `tableMutex` by Guard/Unguard, never locked by
// the handler. A slot is published by storing its start last.
constexpr size_t kMaxRanges = 1024;

struct GuardedRange {
  std::atomic<uintptr_t> start{0};
  std::atomic<size_t> length{0};
  std::atomic<int> faulted{0};
};

GuardedRange ranges[kMaxRanges];
std::mutex tableMutex;
// How many guarded mappings faulted, read by JavaScript before each lock.
alignas(64) std::atomic<int32_t> faultCount{0};
static_assert(sizeof(std::atomic<int32_t>) == sizeof(int32_t),
              "an atomic int32 must be a plain int32 to share with JS");

struct sigaction previousAction;
std::once_flag installOnce;
bool installed = false;

void PassOn(int signal, siginfo_t* info, void* context) {
  if ((previousAction.sa_flags & SA_SIGINFO) != 0 && previousAction.sa_sigaction != nullptr) {
    previousAction.sa_sigaction(signal, info, context);
    return;
  }
  if (previousAction.sa_handler != SIG_DFL && previousAction.sa_handler != SIG_IGN &&
      previousAction.sa_handler != nullptr) {
    previousAction.sa_handler(signal);
    return;
  }
  // The default action: returning re-runs the access, which faults again
  // and now kills the process, as it would have without us.
  struct sigaction fallback = {};
  fallback.sa_handler = SIG_DFL;
  sigemptyset(&fallback.sa_mask);
  sigaction(SIGBUS, &fallback, nullptr);
}

void OnSigbus(int signal, siginfo_t* info, void* context) {
  const int savedErrno = errno;
  const uintptr_t address = reinterpret_cast<uintptr_t>(info->si_addr);
  for (size_t i = 0; i < kMaxRanges; i++) {
    const uintptr_t start = ranges[i].start.load(std::memory_order_acquire);
    if (start == 0 || address < start) continue;
    const size_t length = ranges[i].length.load(std::memory_order_relaxed);
    if (address - start >= length) continue;
    const uintptr_t pageSize = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const uintptr_t page = address & ~(pageSize - 1);
    // mmap is a plain system call here; MAP_FIXED swaps the range atomically.
    void* replaced = mmap(reinterpret_cast<void*>(page), start + length - page, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
    if (replaced == MAP_FAILED) break;
    if (ranges[i].faulted.exchange(1) == 0) faultCount.fetch_add(1);
    errno = savedErrno;
    return;
  }
  errno = savedErrno;
  PassOn(signal, info, context);
}

void Install() {
  struct sigaction action = {};
  action.sa_sigaction = OnSigbus;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  installed = sigaction(SIGBUS, &action, &previousAction) == 0;
}

void NoDelete(void* /*data*/, size_t /*length*/, void* /*hint*/) {}

}  // namespace

bool TruncationGuard::Guard(void* address, size_t length) {
  std::call_once(installOnce, Install);
  if (!installed) return false;
  std::lock_guard<std::mutex> guard(tableMutex);
  for (size_t i = 0; i < kMaxRanges; i++) {
    if (ranges[i].start.load(std::memory_order_relaxed) != 0) continue;
    ranges[i].faulted.store(0);
    ranges[i].length.store(length, std::memory_order_relaxed);
    ranges[i].start.store(reinterpret_cast<uintptr_t>(address), std::memory_order_release);
    return true;
  }
  return false;
}

void TruncationGuard::Unguard(void* address) {
  std::lock_guard<std::mutex> guard(tableMutex);
  for (size_t i = 0; i < kMaxRanges; i++) {
    if (ranges[i].start.load(std::memory_order_relaxed) == reinterpret_cast<uintptr_t>(address)) {
      ranges[i].start.store(0, std::memory_order_release);
      return;
    }
  }
}

void TruncationGuard::Init(Napi::Env env, Napi::Object exports) {
  exports.Set("mappingFaults", Napi::Function::New(env, Faults, "mappingFaults"));
  exports.Set("mappingTruncated", Napi::Function::New(env, Truncated, "mappingTruncated"));
}

Napi::Value TruncationGuard::Faults(const Napi::CallbackInfo& info) {
  Arguments args(info, "mappingFaults()");
  if (!args.Count(0)) return info.Env().Undefined();
  return NewExternalSharedArrayBuffer(info.Env(), reinterpret_cast<void*>(&faultCount), sizeof(int32_t), NoDelete,
                                      nullptr);
}

Napi::Value TruncationGuard::Truncated(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Arguments args(info, "mappingTruncated(view)");
  void* data = nullptr;
  size_t length = 0;
  if (!args.Count(1) || !args.TypedArray(args.At(0, "view"), napi_uint8_array, -1, "a Uint8Array", &data, &length)) {
    return env.Undefined();
  }
  std::lock_guard<std::mutex> guard(tableMutex);
  for (size_t i = 0; i < kMaxRanges; i++) {
    if (ranges[i].start.load(std::memory_order_relaxed) == reinterpret_cast<uintptr_t>(data)) {
      return Napi::Boolean::New(env, ranges[i].faulted.load() != 0);
    }
  }
  return Napi::Boolean::New(env, false);
}

}  // namespace arenacache
