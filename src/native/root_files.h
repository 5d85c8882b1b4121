// RootFiles: the file operations CacheFS makes on a directory it serves,
// each on a path relative to the root's open descriptor and resolved beneath
// it (beneath.h), so that no path can be redirected outside the root between
// a check and a use. Symbolic links are followed only while they stay inside.
//
// Every operation runs the same code synchronously (rootFilesSync, for
// readFileSync and friends, like node:fs's sync calls) or on the thread pool
// (rootFiles, a Promise), and answers with the values and errors node:fs
// gives for the same call by path: stats with node:fs's number fields,
// errors with code, errno, syscall and the absolute path and dest. A path
// that leaves the root is an error with code ERR_PATH_OUTSIDE_ROOT and the
// relative path in `relative`, for lib/ to turn into its ArenaCacheError.
#pragma once

#include <napi.h>
#include <uv.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace arenacache {

class RootFiles : public Napi::AsyncWorker {
 public:
  static void Init(Napi::Env env, Napi::Object exports);

  // The operations; the numbers are lib/native/root-files.js's ROOT_* constants.
  enum Op {
    kOpen = 1,     // -> descriptor (flags, mode: open(2)'s)
    kStat = 2,     // -> stats, following a last link (stat(2))
    kReaddir = 3,  // -> names, without "." and ".."
    kMkdir = 4,    // flags 1: recursive -> the first directory made (relative) or undefined
    kUnlink = 5,
    kRename = 6,    // path -> dest
    kRm = 7,        // flags 1: recursive, 2: force
    kLoad = 8,      // -> { before, data, after }: the stats around one read of the whole file
    kStore = 9,     // writes data through open(flags, mode) -> stats after
    kRewrite = 10,  // data becomes the whole file, written in place, then cut to size -> stats after
  };

 private:
  // One operation: its arguments, what it produced, or how it failed.
  struct Call {
    int op = 0;
    int root = -1;
    std::string rootPath;
    std::string path;
    std::string dest;
    int flags = 0;
    int mode = 0;
    std::vector<char> input;  // kStore/kRewrite: a copy, so JavaScript may reuse its buffer meanwhile
    const char* inputData = nullptr;
    size_t inputLength = 0;
    uv_loop_t* loop = nullptr;

    int fd = -1;
    uv_stat_t before{};
    uv_stat_t after{};
    std::vector<std::string> names;
    std::string created;
    bool hasCreated = false;
    struct FreeBytes {
      void operator()(char* bytes) const { std::free(bytes); }
    };
    std::unique_ptr<char, FreeBytes> data;  // kLoad: malloc'ed, handed to a Buffer without a copy when large
    size_t length = 0;

    int error = 0;
    const char* syscall = "";
    bool outside = false;
    std::string outsidePath;
    bool rmDirectory = false;
    // What a FIFO, socket or device met where a file was wanted is ("a FIFO"), else null.
    const char* special = nullptr;

    void Run();
    Napi::Value Result(Napi::Env env);
    Napi::Value Failure(Napi::Env env) const;

   private:
    int Fail(int errnum, const char* call);
    int Resolve(const std::string& relative, int openFlags, mode_t openMode, const char* call);
    int OpenFile(int openFlags, mode_t openMode, uv_stat_t* stats);
    int Parent(const std::string& relative, std::string* name, const char* call);
    bool Stat(int file, uv_stat_t* out, const char* call);
    void Load();
    void Store();
    void Readdir();
    int Mkdir(const std::string& relative, bool recursive);
    int MkdirRecursive(const std::string& relative);
    void Rm();
    std::string Absolute(const std::string& relative) const;
  };

  // rootFilesSync(op, rootFd, rootPath, path, dest, flags, mode, data) -> result (throws);
  // rootFiles(...) -> Promise. Arguments are checked by lib/native/root-files.js, and
  // by Parse too (arguments.h), so a wrong call throws instead of crashing.
  static Napi::Value CallSync(const Napi::CallbackInfo& info);
  static Napi::Value CallAsync(const Napi::CallbackInfo& info);
  // closeDescriptor(fd): closes a descriptor that kOpen gave this
  // environment (EBADF for any other). Descriptors still open when the
  // environment goes (a worker thread exits or is terminated) are closed
  // then, as node:fs does for the descriptors a worker opens.
  static Napi::Value CloseDescriptor(const Napi::CallbackInfo& info);
  static bool Parse(const Napi::CallbackInfo& info, const char* signature, Call* call);

  RootFiles(Napi::Env env, Call&& call);
  ~RootFiles() override;

  void Execute() override;
  void OnOK() override;

  // A raw deferred, so that a failed resolution is seen: a worker thread
  // torn down while the call ran cannot take its result, and a descriptor
  // opened for it must then be closed here.
  napi_deferred deferred_ = nullptr;
  bool delivered_ = false;
  Call call_;
};

}  // namespace arenacache
