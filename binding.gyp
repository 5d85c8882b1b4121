{
  "targets": [
    {
      "target_name": "arenacache",
      "sources": [
        "src/native/addon.cc",
        "src/native/arguments.cc",
        "src/native/beneath.cc",
        "src/native/dir_exchange.cc",
        "src/native/errors.cc",
        "src/native/external_shared_buffer.cc",
        "src/native/file_jobs.cc",
        "src/native/fs_sync.cc",
        "src/native/futex.cc",
        "src/native/mapped_file.cc",
        "src/native/root_files.cc",
        "src/native/sha256.cc",
        "src/native/thread_identity.cc",
        "src/native/tree_scan.cc",
        "src/native/truncation_guard.cc"
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_VERSION=8", "NAPI_DISABLE_CPP_EXCEPTIONS", "NODE_ADDON_API_DISABLE_DEPRECATED", "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS"],
      "cflags!": ["-fno-exceptions", "-O2"],
      "cflags_cc!": ["-fno-exceptions", "-O2"],
      "cflags_cc": ["-O3", "-fvisibility=hidden", "-std=c++17", "-Wall", "-Wextra"],
      "cflags": ["-O3", "-fvisibility=hidden"]
    }
  ]
}
