#include "sha256.h"

namespace arenacache {

Sha256::Sha256() : digest_(EVP_MD_fetch(nullptr, "SHA256", nullptr)), context_(EVP_MD_CTX_new()) {}

Sha256::~Sha256() {
  EVP_MD_CTX_free(context_);
  EVP_MD_free(digest_);
}

bool Sha256::Begin() {
  if (digest_ == nullptr || context_ == nullptr) return false;
  return EVP_DigestInit_ex2(context_, digest_, nullptr) == 1;
}

bool Sha256::Update(const void* data, size_t length) {
  return length == 0 || EVP_DigestUpdate(context_, data, length) == 1;
}

bool Sha256::Finish(uint8_t out[kSize]) {
  unsigned int length = 0;
  return EVP_DigestFinal_ex(context_, out, &length) == 1 && length == kSize;
}

}  // namespace arenacache
