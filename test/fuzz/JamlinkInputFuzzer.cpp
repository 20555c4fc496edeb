//===- JamlinkInputFuzzer.cpp - jamlink's reading and linking -------------===//
//
// The input is a relocatable object in memory, named jam_fuzz.o (so an
// object without the plugin's .tc.jam is element "fuzz", entry
// "fuzz_main"). InputObject::create reads it and linkImage links it, as
// `jamlink jam_fuzz.o -o x.jam` does, then links it beside a copy of
// itself as one jam of two objects (jamlink jam_fuzz.o lib_fuzz.o). Every
// refusal must be an error; and an image jamlink links, the runtime's
// reader must accept.
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

/// An image jamlink linked must be one the runtime's reader accepts.
static void checkLinked(Expected<JamImage> Image) {
  if (!Image) {
    consumeError(Image.takeError());
    return;
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
}

static Expected<std::unique_ptr<InputObject>> read(StringRef Bytes, StringRef Name) {
  return InputObject::create(MemoryBuffer::getMemBufferCopy(Bytes, Name), Name);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  StringRef Bytes(reinterpret_cast<const char *>(Data), Size);
  auto Obj = read(Bytes, "jam_fuzz.o");
  if (!Obj) {
    consumeError(Obj.takeError());
    return 0;
  }
  checkLinked(linkImage(**Obj, {}));
  // The same object twice, as a jam of two objects: every global name is
  // met again across objects (a link marks its objects: fresh ones).
  auto A = read(Bytes, "jam_fuzz.o"), B = read(Bytes, "lib_fuzz.o");
  if (!A || !B) {
    std::fprintf(stderr, "fuzz-jamlink-input: an object read once is refused the next time\n");
    std::abort();
  }
  InputObject *Pair[] = {A->get(), B->get()};
  checkLinked(linkImage(Pair, {}));
  return 0;
}
