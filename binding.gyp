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
      # No -std here: each Node's common.gypi sets the standard its headers
      # need (gnu++17 up to Node 22, gnu++20 from Node 24, whose V8 requires
      # it). -Wno-restrict: GCC 12 in C++20 mode warns about std::string
      # assignments of short literals at -O3 (GCC bug 105329, a false positive).
      "cflags_cc": ["-O3", "-fvisibility=hidden", "-Wall", "-Wextra", "-Wno-restrict"],
      "cflags": ["-O3", "-fvisibility=hidden"]
    }
  ]
}
