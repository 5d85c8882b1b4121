// The one place in the addon that uses the V8 API directly.
//
// Node-API (as of Node 20) can make an ArrayBuffer over external memory but
// not a SharedArrayBuffer, and only a SharedArrayBuffer can be handed to
// worker threads without a copy and used with Atomics. So a mapped file is
// wrapped here with v8::SharedArrayBuffer::NewBackingStore: one backing
// store per mapping, whose deleter runs when the last SharedArrayBuffer over
// it (in any thread) is collected.
#pragma once

#include <napi.h>

#include <cstddef>

namespace arenacache {

using ExternalDeleter = void (*)(void* data, size_t length, void* hint);

// A SharedArrayBuffer over [data, data + length). `deleter(data, length,
// hint)` is called once, on any thread, when V8 no longer needs the memory.
Napi::Value NewExternalSharedArrayBuffer(Napi::Env env, void* data, size_t length, ExternalDeleter deleter, void* hint);

}  // namespace arenacache
