//===- Sha256.h - SHA-256, for the hashes in images and manifests ---------===//
//
// The runtime checks the content hashes jamlink and pkg-gen record, without
// depending on LLVM or a crypto library.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_FORMAT_SHA256_H
#define TWOCHAINS_FORMAT_SHA256_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace twochains::format {

class Sha256 {
public:
  Sha256();
  void update(const void *Data, size_t Size);
  void update(const std::string &S) { update(S.data(), S.size()); }
  /// The 32-byte digest; the object is spent afterwards.
  void digest(uint8_t Out[32]);
  /// Lower-case hex of the digest; the object is spent afterwards.
  std::string hex();

private:
  uint32_t State[8];
  uint8_t Block[64];
  size_t Used = 0;
  uint64_t Length = 0;
  void compress(const uint8_t *Chunk);
  void padTo56();
};

/// SHA-256's round constants, for the per-ISA block functions.
extern const uint32_t Sha256RoundConstants[64];

/// Compresses one 64-byte block into State.
using Sha256BlockFn = void (*)(uint32_t State[8], const uint8_t *Block);

/// This CPU's SHA-256 instructions (x86 SHA extensions, in Sha256X86.cpp),
/// or null: the portable code then does it (about ten times slower; the
/// code cache hashes every image it installs).
Sha256BlockFn sha256HardwareBlock();

/// Whether the portable code is forced (tests compare the two).
void sha256UsePortable(bool Portable);

/// Hex SHA-256 of a file's bytes, or "" if it cannot be read.
std::string sha256File(const std::string &Path);

} // namespace twochains::format

#endif
