//===- JamImage.h - A jam image: the bytes that travel, and their facts ---===//
//
// On disk (docs/jam-image-format.md) an image is an ELF64 container of type
// ET_NONE whose sections llvm-readelf can list:
//
//   .tc.image    the bytes that travel: the text part (GOTP, code,
//                trampolines, rodata, GOT slots) and the data part's
//                initial bytes, each a whole number of 64-byte lines; the
//                bss only by its size
//   .tc.jam      NUL-terminated key=value facts
//   .tc.imports  NUL-terminated import names, in table order
//   .tc.fixups   TcFixup records, applied on arrival
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_JAMLINK_JAMIMAGE_H
#define TWOCHAINS_JAMLINK_JAMIMAGE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace twochains {

constexpr unsigned JamImageFormatVersion = 2;
constexpr unsigned JamImageLine = 64;

enum TcFixupKind : uint32_t {
  /// *(uint64_t *)(base + offset) += base: the image was linked at 0.
  TC_FIXUP_IMAGE64 = 1,
  /// *(uint64_t *)(base + offset) = imports[symbol] + addend.
  TC_FIXUP_IMPORT64 = 2,
};

struct TcFixup {
  uint32_t Offset;
  uint32_t Kind;
  uint32_t Symbol;   // import index for TC_FIXUP_IMPORT64, else 0
  uint32_t Reserved;
  int64_t Addend;
};
static_assert(sizeof(TcFixup) == 24, "on-disk layout");

struct JamImage {
  std::string Element;
  std::string ISA;          // "x86_64" or "aarch64"
  uint16_t Machine = 0;     // EM_*
  std::string EntrySymbol;
  uint64_t EntryOffset = 0;
  uint64_t GOTPOffset = 0;
  uint64_t Align = 8;       // the image's base must be aligned to this
  uint64_t CodeSize = 0;    // GOTP excluded; trampolines included
  uint64_t ReadOnlySize = 0; // GOT slots included
  uint64_t TextSize = 0;    // GOTP to the end of the GOT, in whole lines
  uint64_t DataSize = 0;    // stored after the text, in whole lines
  uint64_t ZeroFillSize = 0; // whole lines; not stored
  std::vector<uint8_t> Bytes;
  std::vector<std::string> Imports;
  std::vector<TcFixup> Fixups;
  std::string Hash;         // SHA-256 of bytes, imports and fixups
  std::string Source;       // object it was linked from

  /// Every key=value fact recorded in .tc.jam, in order.
  std::vector<std::pair<std::string, std::string>> facts() const;
  std::string computeHash() const;
};

/// The container's bytes, as writeJamImage writes them.
std::vector<uint8_t> serializeJamImage(const JamImage &Image);
llvm::Error writeJamImage(const JamImage &Image, llvm::StringRef Path);
llvm::Expected<JamImage> readJamImage(llvm::StringRef Path);

} // namespace twochains

#endif
