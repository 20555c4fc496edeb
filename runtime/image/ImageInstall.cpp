//===- ImageInstall.cpp ---------------------------------------------------===//
#include "image/ImageInstall.h"

#include <cstring>

namespace twochains::rt {

static void syncInstructions(const uint8_t *Code, size_t Size) {
  // aarch64: DC CVAU / DSB / IC IVAU / DSB / ISB over the range; x86: the
  // executing thread wrote nothing it runs through this alias, and code is
  // never modified while another thread runs it, so nothing is needed.
  auto *C = reinterpret_cast<char *>(const_cast<uint8_t *>(Code));
  __builtin___clear_cache(C, C + Size);
}

void installImage(uint8_t *Write, const uint8_t *Run, uint8_t *Data, const JamImageData &Image,
                  void *const *Table, bool WithData) {
  const uint8_t *Bytes = Image.Bytes.data();
  uint8_t *Statics = Data + Image.TextSize;
  std::memcpy(Write, Bytes, Image.TextSize);
  if (WithData && Image.hasData()) {
    std::memcpy(Statics, Bytes + Image.TextSize, Image.DataSize);
    std::memset(Statics + Image.DataSize, 0, Image.ZeroFillSize);
  }
  std::memcpy(Write + Image.GOTP, &Table, sizeof Table);
  for (const ImageFixup &F : Image.Fixups) {
    bool InText = F.Offset < Image.TextSize;
    if (!InText && !WithData)
      continue;
    uint8_t *At = InText ? Write + F.Offset : Statics + (F.Offset - Image.TextSize);
    uint64_t V;
    std::memcpy(&V, At, 8);
    if (F.Kind == FixupImage64)
      V += reinterpret_cast<uintptr_t>(Run);
    else
      V = reinterpret_cast<uintptr_t>(Table[F.Symbol]) + uint64_t(F.Addend);
    std::memcpy(At, &V, 8);
  }
  syncInstructions(Run, Image.TextSize);
}

} // namespace twochains::rt
