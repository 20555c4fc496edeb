//===- Sha256.cpp - SHA-256 through OpenSSL's libcrypto -------------------===//
#include "Sha256.h"

#include <cstdio>
#include <cstring>
#include <openssl/evp.h>

namespace twochains::format {

/// Fetched once: an EVP_MD_CTX initialised with EVP_sha256() looks the
/// implementation up in the provider's tables again every time.
static const EVP_MD *sha256Md() {
  static EVP_MD *Md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  return Md;
}

Sha256::Sha256() : Ctx(EVP_MD_CTX_new()) {
  const EVP_MD *Md = sha256Md();
  Failed = !Ctx || !Md || EVP_DigestInit_ex(Ctx, Md, nullptr) != 1;
}

Sha256::~Sha256() { EVP_MD_CTX_free(Ctx); }

void Sha256::update(const void *Data, size_t Size) {
  if (!Failed && Size)
    Failed = EVP_DigestUpdate(Ctx, Data, Size) != 1;
}

bool Sha256::digest(uint8_t Out[32]) {
  unsigned Len = 0;
  if (!Failed)
    Failed = EVP_DigestFinal_ex(Ctx, Out, &Len) != 1 || Len != 32;
  if (Failed)
    std::memset(Out, 0, 32);
  // Spent either way: a second digest would be of nothing.
  Failed = true;
  return Len == 32;
}

std::string Sha256::hex() {
  uint8_t D[32];
  if (!digest(D))
    return "";
  static const char Digits[] = "0123456789abcdef";
  std::string Out;
  Out.reserve(64);
  for (uint8_t B : D) {
    Out.push_back(Digits[B >> 4]);
    Out.push_back(Digits[B & 0xf]);
  }
  return Out;
}

std::string sha256File(const std::string &Path) {
  FILE *F = std::fopen(Path.c_str(), "rb");
  if (!F)
    return "";
  Sha256 H;
  uint8_t Buf[65536];
  size_t N;
  while ((N = std::fread(Buf, 1, sizeof Buf, F)) > 0)
    H.update(Buf, N);
  bool Failed = std::ferror(F);
  std::fclose(F);
  return Failed ? "" : H.hex();
}

} // namespace twochains::format
