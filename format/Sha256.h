//===- Sha256.h - SHA-256, for the hashes in images and manifests ---------===//
//
// The content hashes jamlink and pkg-gen record and the runtime checks.
// OpenSSL's libcrypto computes them (issue 30: no cryptography by hand):
// it picks the CPU's SHA instructions itself (x86 SHA extensions, ARMv8
// SHA2), and it is on every node the runtime runs on. The header keeps
// OpenSSL's out of the runtime's and the tools' sources.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_FORMAT_SHA256_H
#define TWOCHAINS_FORMAT_SHA256_H

#include <cstddef>
#include <cstdint>
#include <string>

struct evp_md_ctx_st; // OpenSSL's EVP_MD_CTX

namespace twochains::format {

class Sha256 {
public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256 &) = delete;
  Sha256 &operator=(const Sha256 &) = delete;
  void update(const void *Data, size_t Size);
  void update(const std::string &S) { update(S.data(), S.size()); }
  /// The 32-byte digest; the object is spent afterwards. False (and Out
  /// zeroed) if libcrypto failed, which only a broken installation or no
  /// memory makes it do.
  bool digest(uint8_t Out[32]);
  /// Lower-case hex of the digest, or "" if libcrypto failed: no hash
  /// recorded anywhere is "", so a failure never passes for a match. The
  /// object is spent afterwards.
  std::string hex();

private:
  evp_md_ctx_st *Ctx;
  bool Failed = false;
};

/// Hex SHA-256 of a file's bytes, or "" if it cannot be read.
std::string sha256File(const std::string &Path);

} // namespace twochains::format

#endif
