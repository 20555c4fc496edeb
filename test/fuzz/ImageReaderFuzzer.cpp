//===- ImageReaderFuzzer.cpp - parseJamImage on any bytes -----------------===//
//
// The reader must refuse, with a message, anything it does not accept; and
// what it accepts, the runtime must be able to use without leaving the
// image: the code digest and prepareInjected (GOTP and every fixup) are
// run on a buffer of exactly the image's size, so ASan sees any write
// outside it.
//
//===----------------------------------------------------------------------===//
#include "JamImageReader.h"
#include "Package.h"

#include <cstdio>
#include <cstdlib>
#include <memory>

using namespace twochains::rt;

[[noreturn]] static void broken(const char *What) {
  std::fprintf(stderr, "fuzz-image-reader: accepted an image that %s\n", What);
  std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  JamImageData Image;
  std::string Error;
  if (parseJamImage(Data, Size, Image, Error) != TC_OK) {
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
  PackageElement E;
  E.Present = E.IsJam = true;
  E.Image = Image;
  static int Target;
  E.ImportTable.assign(Image.Imports.size(), &Target);
  std::unique_ptr<uint8_t[]> Placed(new uint8_t[N]);
  std::copy(Image.Bytes.begin(), Image.Bytes.end(), Placed.get());
  prepareInjected(Placed.get(), Placed.get(), E);
  return 0;
}
