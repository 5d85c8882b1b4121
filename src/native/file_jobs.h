// FileJobs: many independent file copies, packs, extractions and hashes in
// one call, on threads of their own.
//
// Taking or restoring a workspace snapshot means thousands of small file
// operations, each several system calls plus a SHA-256. Through node:fs
// every call is a trip to libuv's thread pool (four threads, shared with
// the rest of the process); here a run is one trip, whose Execute starts
// options.threads threads that take jobs by an atomic index, so a run
// neither queues behind nor starves other I/O in the pool.
//
// Jobs and results are columns (typed arrays and string arrays of one entry
// per job): no object per job to build or read on the main thread. A job
// that fails records its errno and system call and the others carry on;
// only a failure of the run itself (the pack cannot be opened, no thread
// can be started) rejects.
//
// Each copy checks that its source did not change while it was read (size,
// mtime and ctime from fstat before and after) and starts over if it did,
// up to options.retries times; a source that never holds still is copied
// anyway and flagged unstable, for the caller to decide.
#pragma once

#include <napi.h>
#include <sys/stat.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "arguments.h"
#include "columns.h"
#include "sha256.h"

namespace arenacache {

class FileJobs : public Napi::AsyncWorker {
 public:
  static void Init(Napi::Env env, Napi::Object exports);

  explicit FileJobs(Napi::Env env);
  ~FileJobs() override;

  void Execute() override;
  void OnOK() override;

  // (Public only for the helpers in file_jobs.cc.)
  // What one job thread keeps from job to job: its buffer (1 MiB, grown for
  // a whole file when packing or extracting one bigger than that), its hash
  // context, and the pack it last extracted from, still open.
  struct Thread {
    Thread();
    ~Thread();
    // Makes the buffer at least `size` bytes; false when out of memory.
    bool Reserve(size_t size);
    // Gives memory back after a job needed an exceptionally large buffer.
    void Trim();
    char* buffer = nullptr;
    size_t capacity = 0;
    Sha256 sha;
    std::string packPath;
    int packFd = -1;
    struct stat packStat = {};
    // Packed files not yet written: their bytes back to back, and each
    // job's index and place in them. One pwrite per batch instead of one
    // per file (10000 files of 1 KiB: 10 writes, not 10000).
    std::vector<char> packBatch;
    std::vector<std::pair<size_t, size_t>> packPending;
  };

  // Why a job failed: errno, the system call, and whether it was about the
  // destination (dsts[i] or the pack) rather than the source.
  struct Failure {
    int error = 0;
    const char* syscall = "";
    bool onDst = false;
  };

 private:
  // runFileJobs(jobs, options[, onProgress]) -> Promise<results> (the
  // columns are described in lib/native/file-jobs.js, which checks every argument).
  static Napi::Value RunFileJobs(const Napi::CallbackInfo& info);
  // Copies the jobs and options into the run and checks them again (false
  // with an exception pending when one is wrong or a getter threw).
  bool Parse(Arguments& args, const Arguments::Value& jobs, const Arguments::Value& options);
  bool StartProgress(Napi::Env env, Napi::Function callback);

  // Writes the thread's batch of packed files at a range reserved for it;
  // if that fails, every job in the batch fails with the error.
  void FlushPack(Thread& thread);
  bool OpenPack(Thread& thread, size_t i, Failure& failure);
  // HASH of a range without a source root: through the thread's cached descriptor.
  bool HashRange(Thread& thread, size_t i, Failure& failure);
  // Reads and hashes job i's range of its pack into the thread's buffer (`got` bytes).
  bool ReadPackRange(Thread& thread, size_t i, size_t& got, Failure& failure);
  // Clears job i's results and records why it failed.
  void MarkFailed(size_t i, const Failure& failure);

  void RunThread();
  void RunJob(Thread& thread, size_t i);
  bool Clone(Thread& thread, size_t i, Failure& failure);
  bool Pack(Thread& thread, size_t i, Failure& failure);
  bool Extract(Thread& thread, size_t i, Failure& failure);
  bool Hash(Thread& thread, size_t i, Failure& failure);
  // The copy itself, one attempt: reflink, copy_file_range or read/write
  // (whichever works first), then the hash if asked. Sets `bytes`.
  bool CopyOnce(Thread& thread, size_t i, int in, int out, const struct stat& before, bool& reflinkFailed,
                bool& rangeFailed, uint64_t& bytes, Failure& failure);
  // Sets dsts[i]'s mode and times from the job, then closes it (`out`
  // becomes -1 either way).
  bool FinishDst(size_t i, int& out, Failure& failure);
  void SendProgress();

  // Jobs (copied from the JavaScript columns: JavaScript may change or
  // detach its arrays while the threads run).
  size_t count_ = 0;
  std::vector<uint8_t> ops_;
  std::vector<std::string> srcs_;
  std::vector<std::string> dsts_;
  std::vector<double> offsets_;
  std::vector<double> lengths_;
  std::vector<uint32_t> modes_;
  std::vector<double> atimeSec_;
  std::vector<uint32_t> atimeNsec_;
  std::vector<double> mtimeSec_;
  std::vector<uint32_t> mtimeNsec_;
  std::vector<uint8_t> expected_;

  // Options.
  unsigned threads_ = 2;
  bool reflink_ = false;
  bool copyFileRange_ = false;
  bool hash_ = false;
  bool checkExpected_ = false;
  std::string packPath_;
  uint64_t packOffset_ = 0;
  int retries_ = 2;
  // Non-empty: srcs are relative to it, and opened without following links.
  std::string sourceRoot_;
  int sourceRootFd_ = -1;

  // Results, one entry per job; each job writes only its own entries.
  std::vector<uint8_t> engines_;
  std::vector<uint8_t> flags_;
  std::vector<double> sizes_;
  std::vector<double> outOffsets_;
  std::vector<uint8_t> hashes_;
  std::vector<int32_t> errnos_;
  std::vector<const char*> syscalls_;
  std::vector<uint8_t> errorOnDst_;
  std::vector<int32_t> fallbackErrnos_;
  StatColumns stats_;  // each source's fstat after its job

  // The run.
  napi_deferred deferred_ = nullptr;
  std::atomic<size_t> next_{0};
  std::atomic<size_t> done_{0};
  std::atomic<uint64_t> doneBytes_{0};
  std::atomic<uint64_t> packEnd_{0};
  int packFd_ = -1;
  std::mutex mutex_;
  std::condition_variable finished_;
  size_t threadsRunning_ = 0;
  int runError_ = 0;
  const char* runSyscall_ = "";
  std::string runPath_;

  // Progress (only with an onProgress function): the threadsafe function
  // delivers reports from Execute's thread; OnOK makes the final call
  // itself, so that it is certain to come last and before the promise
  // settles.
  struct ProgressContext;
  struct ProgressReport;
  static void CallProgress(Napi::Env env, Napi::Function callback, ProgressContext* context, ProgressReport* report);
  using ProgressFunction = Napi::TypedThreadSafeFunction<ProgressContext, ProgressReport, CallProgress>;
  Napi::FunctionReference progressCallback_;
  ProgressFunction progress_;
  ProgressContext* progressContext_ = nullptr;
  bool progressReleased_ = true;
};

}  // namespace arenacache
