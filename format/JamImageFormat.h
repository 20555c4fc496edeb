//===- JamImageFormat.h - Reading, checking and writing jam images --------===//
//
// The one definition of the image container (docs/jam-image-format.md):
// jamlink writes images with it, the runtime loads them with it, jamlink
// --dump and pkg-gen check them with it. The reader trusts nothing: every
// offset, count and index is checked, and the content hash recomputed.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_FORMAT_JAMIMAGEREADER_H
#define TWOCHAINS_FORMAT_JAMIMAGEREADER_H

#include "FormatError.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace twochains::format {

/// The largest .tc.image a reader accepts. A frame carries at most 65535
/// lines (4 MiB), so no image beyond that can travel; the bound leaves room
/// for Local-only use and keeps every offset inside 32 bits (fixups record
/// 32-bit offsets).
constexpr uint64_t JamImageMaxBytes = uint64_t(16) << 20;
/// A jam's data part (writable statics, bss) is linked this far past its
/// text, so the receiver can map it read+write, never executable, beside
/// code that is never writable, and the code still reaches it PC-relatively
/// (x86_64 +-2 GiB, aarch64 ADRP +-4 GiB). The code cache's arena is at
/// most this large (runtime/ImageInstall.h).
constexpr uint64_t JamDataDistance = uint64_t(1) << 30;
/// The largest alignment an image may ask of its base: aarch64 images whose
/// code reaches their data by ADRP need whole 4 KiB pages.
constexpr uint64_t JamImageMaxAlign = 4096;
/// The container format version this reader reads: 2 split the image into
/// a text part and a data part (docs/jam-image-format.md).
constexpr unsigned JamImageVersion = 2;
/// The largest container file: the image plus imports, facts and fixups.
constexpr uint64_t JamImageMaxFileBytes = uint64_t(64) << 20;

/// The sandbox scheme a sandboxed image keeps (docs/sandbox.md), recorded
/// as the fact sandbox=<scheme>; 0 (no fact): not sandboxed.
constexpr uint32_t JamSandboxScheme = 1;

struct ImageFixup {
  uint32_t Offset, Kind, Symbol, Reserved;
  int64_t Addend;
};
static_assert(sizeof(ImageFixup) == 24, "on-disk layout");

enum : uint32_t { FixupImage64 = 1, FixupImport64 = 2 };

struct JamImageData {
  std::string Element, ISA, EntrySymbol, Hash, Source;
  uint16_t Machine = 0;
  uint64_t Entry = 0, GOTP = 0, Align = 8;
  uint64_t CodeSize = 0, ReadOnlySize = 0;
  /// Bytes = TextSize bytes of text, then DataSize of data; ZeroFillSize of
  /// bss follow the data on the receiver. All whole 64-byte lines.
  uint64_t TextSize = 0, DataSize = 0, ZeroFillSize = 0;
  /// JamSandboxScheme for an image built for the verified sandbox: its
  /// text is code only (read-only data lies in the data part; on x86_64
  /// the GOTP cell too, first there, and the text is padded with int3).
  uint32_t Sandbox = 0;
  bool hasData() const { return DataSize || ZeroFillSize; }
  /// Where the code starts: after the GOTP cell at 0, or at 0 when the
  /// cell lies in the data part.
  uint64_t codeStart() const { return GOTP == 0 ? 8 : 0; }
  std::vector<uint8_t> Bytes;
  std::vector<std::string> Imports;
  std::vector<ImageFixup> Fixups;
};

/// The content hash jamlink records: SHA-256 over the bytes, the import
/// names, the fixup records, the entry and GOTP offsets and the ISA.
std::string jamImageHash(const JamImageData &Image);

/// Parses and checks a container held in memory. On failure Error says
/// what is wrong (without a file name) and Out is untouched.
FormatError parseJamImage(const uint8_t *Data, size_t Size, JamImageData &Out,
                          std::string &Error);
FormatError readJamImageFile(const std::string &Path, JamImageData &Out,
                             std::string &Error);

/// Every key=value fact an image records in .tc.jam, in order.
std::vector<std::pair<std::string, std::string>> jamImageFacts(const JamImageData &Image);
/// The container's bytes: the ELF64 file readJamImageFile reads.
std::vector<uint8_t> serializeJamImage(const JamImageData &Image);

/// A whole file's bytes; false (and Error set) if it cannot be read or is
/// larger than MaxSize (checked before anything is allocated).
bool readFileBytes(const std::string &Path, std::vector<uint8_t> &Out, std::string &Error,
                   uint64_t MaxSize = UINT64_MAX);

} // namespace twochains::format

#endif
