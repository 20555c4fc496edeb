//===- JamImage.cpp - Image files for the tools ---------------------------===//
#include "JamImage.h"

#include "llvm/Support/FileOutputBuffer.h"

using namespace llvm;

namespace twochains {

Error writeJamImage(const JamImage &Image, StringRef Path) {
  std::vector<uint8_t> Bytes = format::serializeJamImage(Image);
  auto Out = FileOutputBuffer::create(Path, Bytes.size());
  if (!Out)
    return createStringError(inconvertibleErrorCode(),
                             "cannot write " + Path + ": " + toString(Out.takeError()));
  std::copy(Bytes.begin(), Bytes.end(), (*Out)->getBufferStart());
  return (*Out)->commit();
}

Expected<JamImage> readJamImage(StringRef Path) {
  JamImage Image;
  std::string Error;
  if (format::readJamImageFile(Path.str(), Image, Error) != format::FormatError::None)
    return createStringError(inconvertibleErrorCode(), Path + ": " + Error);
  return Image;
}

} // namespace twochains
