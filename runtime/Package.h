//===- Package.h - A loaded package, as the runtime uses it ---------------===//
#ifndef TWOCHAINS_RUNTIME_PACKAGE_H
#define TWOCHAINS_RUNTIME_PACKAGE_H

#include "JamImageReader.h"
#include "twochains/package.h"

#include <cstdint>
#include <string>
#include <vector>

namespace twochains::rt {

using JamEntry = void (*)(void *Ctx, void *Payload, size_t PayloadSize);

struct PackageElement {
  bool Present = false;
  bool IsJam = false;
  std::string Name;
  JamImageData Image;              // jams
  std::vector<void *> ImportTable; // receiver: the addresses of Image.Imports
  JamEntry LocalEntry = nullptr;   // receiver: from the Local-Function library
  void *PayloadSize = nullptr;     // sender-side helpers, if the jam has them
  void *PayloadInit = nullptr;
};

} // namespace twochains::rt

struct tc_package {
  std::string Name;
  std::string Identity;
  uint64_t Tag = 0;        // identityTag(Identity): what frames carry
  std::string ISA;
  uint32_t Roles = 0;
  std::vector<twochains::rt::PackageElement> Elements; // by element ID
  std::vector<void *> Libraries;                       // dlopen handles
};

namespace twochains::rt {

/// Makes the image bytes at Base runnable: GOTP points at the element's
/// import table and every fixup is applied. Base holds Image.Bytes and is
/// aligned to Image.Align. The caller synchronises the instruction stream.
void prepareInjected(uint8_t *Base, const PackageElement &Element);

} // namespace twochains::rt

#endif
