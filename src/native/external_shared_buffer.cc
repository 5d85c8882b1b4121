#include "external_shared_buffer.h"

#include <v8.h>

namespace arenacache {

Napi::Value NewExternalSharedArrayBuffer(Napi::Env env, void* data, size_t length, ExternalDeleter deleter,
                                         void* hint) {
  v8::Isolate* isolate = v8::Isolate::GetCurrent();
  std::unique_ptr<v8::BackingStore> store = v8::SharedArrayBuffer::NewBackingStore(data, length, deleter, hint);
  v8::Local<v8::SharedArrayBuffer> buffer = v8::SharedArrayBuffer::New(isolate, std::move(store));
  // Node-API values are V8 locals of the current handle scope (Node's own
  // JsValueFromV8LocalValue does exactly this cast).
  v8::Local<v8::Value> value = buffer;
  return Napi::Value(env, reinterpret_cast<napi_value>(*value));
}

}  // namespace arenacache
