//===- ImageReaderFuzzer.cpp - parseJamImage on any bytes -----------------===//
//
// The reader must refuse, with a message, anything it does not accept; and
// what it accepts, the runtime must be able to use without leaving the
// image: the code digest and installImage (GOTP, every fixup, the data and
// the bss) are run on buffers of exactly the text's and the statics' sizes,
// so ASan sees any write outside them.
//
//===----------------------------------------------------------------------===//
#include "JamImageFormat.h"
#include "image/ImageInstall.h"
#include "package/Package.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

using namespace twochains::rt;
using namespace twochains::format;

[[noreturn]] static void broken(const char *What) {
  std::fprintf(stderr, "fuzz-image-reader: accepted an image that %s\n", What);
  std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  JamImageData Image;
  std::string Error;
  if (parseJamImage(Data, Size, Image, Error) != FormatError::None) {
    if (Error.empty())
      broken("it refused without saying why");
    return 0;
  }
  size_t N = Image.Bytes.size();
  if (N == 0 || N % 64 || N > JamImageMaxBytes)
    broken("is not a whole number of lines within the limit");
  if (Image.Entry >= N || Image.GOTP > N - 8)
    broken("has its entry or GOTP outside");
  if (jamImageHash(Image) != Image.Hash)
    broken("does not hash to its hash");

  (void)codeDigest(Image.Bytes.data(), N, Image.GOTP);
  if (Image.TextSize + Image.DataSize != N)
    broken("has text and data that do not make up its bytes");
  static int Target;
  std::vector<void *> Table(Image.Imports.size(), &Target);
  std::unique_ptr<uint8_t[]> Text(new uint8_t[Image.TextSize]);
  size_t StaticBytes = Image.DataSize + Image.ZeroFillSize;
  std::unique_ptr<uint8_t[]> Statics(new uint8_t[StaticBytes ? StaticBytes : 1]);
  // Data is the data arena at the image's offset: its statics begin
  // TextSize bytes on (pointer arithmetic only; nothing below is touched).
  uint8_t *DataArena = Statics.get() - Image.TextSize;
  installImage(Text.get(), Text.get(), DataArena, Image, Table.data());
  return 0;
}
