// The arenacache native addon: only what JavaScript cannot do itself.
// Each capability is one class in its own .cc/.h pair; this file wires them up.
#include <napi.h>

#include "file_loader.h"
#include "futex.h"
#include "mapped_file.h"
#include "thread_identity.h"

static Napi::Object InitArenacache(Napi::Env env, Napi::Object exports) {
  arenacache::ThreadIdentity::Init(env, exports);
  arenacache::MappedFile::Init(env, exports);
  arenacache::Futex::Init(env, exports);
  arenacache::FileLoader::Init(env, exports);
  // Bumped whenever the JS wrappers in lib/native.js need a different addon.
  exports.Set("abiVersion", Napi::Number::New(env, 3));
  return exports;
}

NODE_API_MODULE(arenacache, InitArenacache)
