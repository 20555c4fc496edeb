//===- Sha256.h - SHA-256, for the hashes in images and manifests ---------===//
//
// The runtime checks the content hashes jamlink and pkg-gen record, without
// depending on LLVM or a crypto library.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_SHA256_H
#define TWOCHAINS_RUNTIME_SHA256_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace twochains::rt {

class Sha256 {
public:
  Sha256();
  void update(const void *Data, size_t Size);
  void update(const std::string &S) { update(S.data(), S.size()); }
  /// Lower-case hex of the digest; the object is spent afterwards.
  std::string hex();

private:
  uint32_t State[8];
  uint8_t Block[64];
  size_t Used = 0;
  uint64_t Length = 0;
  void compress(const uint8_t *Chunk);
};

/// Hex SHA-256 of a file's bytes, or "" if it cannot be read.
std::string sha256File(const std::string &Path);

} // namespace twochains::rt

#endif
