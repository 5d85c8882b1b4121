// Sha256: SHA-256 through OpenSSL's EVP interface.
//
// Node's own binary carries OpenSSL and exports its symbols, so the addon
// links against the very library node:crypto uses (the headers come with
// Node's); hashes here equal crypto.createHash('sha256') by construction.
// One instance per thread, reused for every file that thread hashes: the
// digest is fetched from the provider once, not per file.
#pragma once

#include <openssl/evp.h>

#include <cstddef>
#include <cstdint>

namespace arenacache {

class Sha256 {
 public:
  static constexpr size_t kSize = 32;

  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  // Each returns false when OpenSSL fails (out of memory); the hash is then
  // unusable until the next Begin.
  bool Begin();
  bool Update(const void* data, size_t length);
  bool Finish(uint8_t out[kSize]);

 private:
  EVP_MD* digest_;
  EVP_MD_CTX* context_;
};

}  // namespace arenacache
