//===- Target.cpp ---------------------------------------------------------===//
#include "Target.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Support/Endian.h"

namespace twochains::jamlink {

std::unique_ptr<TargetInfo> createTarget(uint16_t Machine, bool Sandboxed) {
  switch (Machine) {
  case llvm::ELF::EM_X86_64: return createX86_64Target(Sandboxed);
  case llvm::ELF::EM_AARCH64: return createAArch64Target(Sandboxed);
  default:
    return nullptr;
  }
}

std::string checkSignedRange(int64_t V, unsigned Bits) {
  int64_t Min = -(int64_t(1) << (Bits - 1));
  int64_t Max = (int64_t(1) << (Bits - 1)) - 1;
  if (V < Min || V > Max)
    return "value " + std::to_string(V) + " is out of range [" +
           std::to_string(Min) + ", " + std::to_string(Max) + "]";
  return "";
}

void write32le(uint8_t *P, uint32_t V) {
  llvm::support::endian::write32le(P, V);
}
uint32_t read32le(const uint8_t *P) {
  return llvm::support::endian::read32le(P);
}
void write64le(uint8_t *P, uint64_t V) {
  llvm::support::endian::write64le(P, V);
}

} // namespace twochains::jamlink
