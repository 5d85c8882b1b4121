// The arenacache native addon: only what JavaScript cannot do itself.
// Each capability is one class in its own .cc/.h pair, wrapped by the
// JavaScript module of the same name in lib/native/ (root_files.cc/.h:
// root-files.js); this file wires them up.
#include <napi.h>

#include "dir_exchange.h"
#include "file_jobs.h"
#include "fs_sync.h"
#include "futex.h"
#include "mapped_file.h"
#include "root_files.h"
#include "thread_identity.h"
#include "tree_scan.h"
#include "truncation_guard.h"

static Napi::Object InitArenacache(Napi::Env env, Napi::Object exports) {
  arenacache::ThreadIdentity::Init(env, exports);
  arenacache::MappedFile::Init(env, exports);
  arenacache::TruncationGuard::Init(env, exports);
  arenacache::Futex::Init(env, exports);
  arenacache::RootFiles::Init(env, exports);
  arenacache::TreeScan::Init(env, exports);
  arenacache::FileJobs::Init(env, exports);
  arenacache::DirExchange::Init(env, exports);
  arenacache::FsSync::Init(env, exports);
  // Bumped whenever the JS wrappers in lib/native/ need a different addon.
  exports.Set("abiVersion", Napi::Number::New(env, 8));
  return exports;
}

NODE_API_MODULE(arenacache, InitArenacache)
