#include "file_loader.h"

#include <fcntl.h>

#include <cstdlib>
#include <cstring>

namespace arenacache {

namespace {

// Above this, the data is handed to JavaScript without a copy (an external
// buffer freed by its finalizer); below, a copy into V8's memory is cheaper
// than the finalizer bookkeeping.
constexpr size_t kCopyLimit = 64 * 1024;
// The first read asks for the size fstat gave plus this, so a file that grew
// is noticed (and one reporting size 0, like /proc files, is read in chunks).
constexpr size_t kReadSlack = 64 * 1024;

// The same number fields, computed the same way, as node:fs Stats.
Napi::Object StatsObject(Napi::Env env, const uv_stat_t& s) {
  Napi::Object stats = Napi::Object::New(env);
  auto set = [&](const char* name, double value) { stats.Set(name, Napi::Number::New(env, value)); };
  auto ms = [](const uv_timespec_t& t) { return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6; };
  set("dev", static_cast<double>(s.st_dev));
  set("ino", static_cast<double>(s.st_ino));
  set("mode", static_cast<double>(s.st_mode));
  set("nlink", static_cast<double>(s.st_nlink));
  set("uid", static_cast<double>(s.st_uid));
  set("gid", static_cast<double>(s.st_gid));
  set("rdev", static_cast<double>(s.st_rdev));
  set("size", static_cast<double>(s.st_size));
  set("blksize", static_cast<double>(s.st_blksize));
  set("blocks", static_cast<double>(s.st_blocks));
  set("atimeMs", ms(s.st_atim));
  set("mtimeMs", ms(s.st_mtim));
  set("ctimeMs", ms(s.st_ctim));
  set("birthtimeMs", ms(s.st_birthtim));
  return stats;
}

}  // namespace

void FileLoader::Init(Napi::Env env, Napi::Object exports) {
  exports.Set("loadFile", Napi::Function::New(env, LoadFile, "loadFile"));
}

Napi::Value FileLoader::LoadFile(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uv_loop_t* loop = nullptr;
  if (napi_get_uv_event_loop(env, &loop) != napi_ok) {
    Napi::Error::New(env, "loadFile: no event loop").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  auto* worker = new FileLoader(env, info[0].As<Napi::String>().Utf8Value(), loop);
  Napi::Promise promise = worker->deferred_.Promise();
  worker->Queue();
  return promise;
}

FileLoader::FileLoader(Napi::Env env, std::string path, uv_loop_t* loop)
    : Napi::AsyncWorker(env, "arenacache:loadFile"), deferred_(Napi::Promise::Deferred::New(env)), path_(std::move(path)), loop_(loop) {}

FileLoader::~FileLoader() { std::free(data_); }

int FileLoader::Fail(int result, const char* syscall) {
  error_ = result;
  syscall_ = syscall;
  return result;
}

// Runs on a thread-pool thread. With no callback, libuv performs each call
// at once on this thread and never touches the loop.
void FileLoader::Execute() {
  uv_fs_t req;
  int file = uv_fs_open(loop_, &req, path_.c_str(), O_RDONLY | O_CLOEXEC, 0, nullptr);
  uv_fs_req_cleanup(&req);
  if (file < 0) {
    Fail(file, "open");
    return;
  }
  int result = uv_fs_fstat(loop_, &req, file, nullptr);
  if (result < 0) {
    Fail(result, "fstat");
  } else {
    before_ = req.statbuf;
    uv_fs_req_cleanup(&req);
    if (ReadAll(file) == 0) {
      result = uv_fs_fstat(loop_, &req, file, nullptr);
      if (result < 0) Fail(result, "fstat");
      else after_ = req.statbuf;
    }
  }
  uv_fs_req_cleanup(&req);
  uv_fs_close(loop_, &req, file, nullptr);
  uv_fs_req_cleanup(&req);
}

int FileLoader::ReadAll(uv_file file) {
  size_t capacity = static_cast<size_t>(before_.st_size) + kReadSlack;
  data_ = static_cast<char*>(std::malloc(capacity));
  if (data_ == nullptr) return Fail(UV_ENOMEM, "read");
  for (;;) {
    if (length_ == capacity) {
      capacity *= 2;
      char* grown = static_cast<char*>(std::realloc(data_, capacity));
      if (grown == nullptr) return Fail(UV_ENOMEM, "read");
      data_ = grown;
    }
    uv_buf_t buffer = uv_buf_init(data_ + length_, static_cast<unsigned int>(capacity - length_ > 0x7ffff000 ? 0x7ffff000 : capacity - length_));
    uv_fs_t req;
    int got = uv_fs_read(loop_, &req, file, &buffer, 1, -1, nullptr);
    uv_fs_req_cleanup(&req);
    if (got < 0) return Fail(got, "read");
    if (got == 0) return 0;
    length_ += static_cast<size_t>(got);
  }
}

void FileLoader::OnOK() {
  Napi::Env env = Env();
  if (error_ != 0) {
    // As node:fs words it: "ENOENT: no such file or directory, open '/x'";
    // calls on a descriptor (read, fstat) name no path there.
    bool named = std::strcmp(syscall_, "open") == 0;
    std::string code = uv_err_name(error_);
    std::string message = code + ": " + uv_strerror(error_) + ", " + syscall_;
    if (named) message += " '" + path_ + "'";
    Napi::Error error = Napi::Error::New(env, message);
    error.Set("errno", Napi::Number::New(env, error_));
    error.Set("code", Napi::String::New(env, code));
    error.Set("syscall", Napi::String::New(env, syscall_));
    if (named) error.Set("path", Napi::String::New(env, path_));
    deferred_.Reject(error.Value());
    return;
  }
  Napi::Buffer<char> data;
  if (length_ <= kCopyLimit) {
    data = Napi::Buffer<char>::Copy(env, data_, length_);
  } else {
    data = Napi::Buffer<char>::New(env, data_, length_, [](Napi::Env, char* bytes) { std::free(bytes); });
    data_ = nullptr;  // owned by the buffer now
  }
  Napi::Object result = Napi::Object::New(env);
  result.Set("before", StatsObject(env, before_));
  result.Set("data", data);
  result.Set("after", StatsObject(env, after_));
  deferred_.Resolve(result);
}

}  // namespace arenacache
