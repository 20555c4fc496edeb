//===- Isa.h - The instruction sets jams are built for, by name and number ===//
//
// The one list of instruction sets: a manifest's and pkg-gen's --isa name
// ("x86_64", "aarch64"), jamlink's targets, and the number a handshake
// offer carries (docs/heterogeneous.md). A new ISA is added here first.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_FORMAT_ISA_H
#define TWOCHAINS_FORMAT_ISA_H

#include <cstdint>
#include <string_view>

namespace twochains::format {

/// As offers carry them; 0 is none.
enum Isa : uint32_t { IsaX86_64 = 1, IsaAArch64 = 2 };
constexpr Isa KnownIsas[] = {IsaX86_64, IsaAArch64};

/// The name of an ISA (manifests, --isa), or nullptr for an unknown number.
constexpr const char *isaName(uint32_t I) {
  return I == IsaX86_64 ? "x86_64" : I == IsaAArch64 ? "aarch64" : nullptr;
}

/// The ISA a name means, or 0.
constexpr uint32_t isaOf(std::string_view Name) {
  for (Isa I : KnownIsas)
    if (Name == isaName(I))
      return I;
  return 0;
}

/// The names, for messages: "x86_64 or aarch64".
constexpr const char *KnownIsaNames = "x86_64 or aarch64";

/// This machine's.
constexpr Isa hostIsa() {
#if defined(__aarch64__)
  return IsaAArch64;
#else
  return IsaX86_64;
#endif
}

} // namespace twochains::format

#endif
