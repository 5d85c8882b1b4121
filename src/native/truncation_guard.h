// TruncationGuard: survives another process truncating a mapped arena file.
//
// A page of a shared file mapping that lies past the end of the file faults
// with SIGBUS when touched, and the default action kills the process: any
// process with write access to the file (or a stray `truncate`) could kill
// every process using the cache at its next get. The guard handles SIGBUS
// for addresses inside this process's arena mappings: it replaces the pages
// from the faulting one to the mapping's end (all past the end of the file,
// which is contiguous) with zeroed private memory, notes the mapping as
// truncated, and returns, so the faulting access completes on zeros. Zeros
// read as empty slots and free records: a read finds a miss, never another
// value. Writes are then refused by JavaScript (lib/arena/common/truncation.js),
// which checks a process-wide fault count before every lock: a write into
// private pages would be seen by this process only.
//
// SIGBUS for any other address (not ours) goes to the handler installed
// before ours, or kills the process as it would have.
#pragma once

#include <napi.h>

#include <cstddef>

namespace arenacache {

class TruncationGuard {
 public:
  static void Init(Napi::Env env, Napi::Object exports);
  // Installs the handler (once per process) and starts guarding
  // [address, address + length). Returns false when the guard table is full
  // (the mapping then is not guarded; a truncation kills the process).
  static bool Guard(void* address, size_t length);
  // Stops guarding the range starting at `address` (before it is unmapped).
  static void Unguard(void* address);

 private:
  // mappingFaults() -> SharedArrayBuffer of one int32: how many guarded
  // mappings of this process have faulted. The same memory on every call
  // and in every thread.
  static Napi::Value Faults(const Napi::CallbackInfo& info);
  // mappingTruncated(view) -> boolean: whether the mapping `view` starts at
  // has faulted past the end of its file.
  static Napi::Value Truncated(const Napi::CallbackInfo& info);
};

}  // namespace arenacache
