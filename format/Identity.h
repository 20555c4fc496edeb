//===- Identity.h - The package identity as frames carry it ---------------===//
#ifndef TWOCHAINS_FORMAT_IDENTITY_H
#define TWOCHAINS_FORMAT_IDENTITY_H

#include <cstdint>
#include <string>

namespace twochains::format {

/// The first 8 bytes of a hex identity, as the frame header's package field.
inline uint64_t identityTag(const std::string &Hex) {
  uint64_t V = 0;
  for (size_t I = 0; I < 16 && I < Hex.size(); ++I) {
    char C = Hex[I];
    unsigned D = C >= '0' && C <= '9' ? C - '0' : C >= 'a' && C <= 'f' ? C - 'a' + 10 : 0;
    V = V << 4 | D;
  }
  return V;
}

} // namespace twochains::format

#endif
