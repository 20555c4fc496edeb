//===- JamImage.h - A jam image: the bytes that travel, and their facts ---===//
//
// The image is format/JamImageFormat.h's JamImageData, the one definition
// jamlink, pkg-gen and the runtime share (docs/jam-image-format.md). This
// header adds the llvm::Error-returning file functions the tools use.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_JAMLINK_JAMIMAGE_H
#define TWOCHAINS_JAMLINK_JAMIMAGE_H

#include "JamAbi.h"
#include "JamImageFormat.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace twochains {

using JamImage = format::JamImageData;
using format::ImageFixup;

llvm::Error writeJamImage(const JamImage &Image, llvm::StringRef Path);
/// Reads and checks Path with the one reader, which trusts nothing.
llvm::Expected<JamImage> readJamImage(llvm::StringRef Path);

} // namespace twochains

#endif
