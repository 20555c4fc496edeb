//===- JamlinkInputFuzzer.cpp - jamlink's reading and linking -------------===//
//
// The input is a relocatable object in memory, named jam_fuzz.o (so an
// object without the plugin's .tc.jam is element "fuzz", entry
// "fuzz_main"). InputObject::create reads it and linkImage links it, as
// `jamlink jam_fuzz.o -o x.jam` does. Every refusal must be an error;
// and an image jamlink links, the runtime's reader must accept.
//
//===----------------------------------------------------------------------===//
#include "InputObject.h"
#include "JamImage.h"
#include "JamImageFormat.h"
#include "Linker.h"

#include "llvm/Support/MemoryBuffer.h"
#include <cstdio>
#include <cstdlib>

using namespace llvm;
using namespace twochains;
using namespace twochains::jamlink;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  auto Buffer = MemoryBuffer::getMemBufferCopy(
      StringRef(reinterpret_cast<const char *>(Data), Size), "jam_fuzz.o");
  auto Obj = InputObject::create(std::move(Buffer), "jam_fuzz.o");
  if (!Obj) {
    consumeError(Obj.takeError());
    return 0;
  }
  auto Image = linkImage(**Obj, {});
  if (!Image) {
    consumeError(Image.takeError());
    return 0;
  }
  std::vector<uint8_t> Bytes = serializeJamImage(*Image);
  format::JamImageData Read;
  std::string Error;
  if (format::parseJamImage(Bytes.data(), Bytes.size(), Read, Error) !=
      format::FormatError::None) {
    std::fprintf(stderr, "fuzz-jamlink-input: jamlink linked an image the reader refuses: %s\n",
                 Error.c_str());
    std::abort();
  }
  return 0;
}
