//===- ImageInstall.h - Installing a jam image the one way it is run ------===//
//
// Every image that runs on a receiver is installed by installImage, and so
// is every image the loader harness runs (test/harness): there is no other
// way an image gets into executable memory.
//
//   text   copied through the arena's writable alias; GOTP set to the
//          import table, text fixups applied; run from the executable alias
//   data   copied into the data arena, JamDataDistance past the text, the
//          bss after it zeroed, data fixups applied; read+write, never
//          executable
//
// No page is writable and executable at once (docs/code-cache.md). The
// statics live where they were installed for as long as the installation:
// callers pin entries of images that have them.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_IMAGEINSTALL_H
#define TWOCHAINS_RUNTIME_IMAGEINSTALL_H

#include "wire/Formats.h"

#include <cstddef>
#include <cstdint>

namespace twochains::rt {

/// Bytes an installed image takes in an arena: text, data and bss.
inline size_t installedSize(const JamImageData &Image) {
  return Image.TextSize + Image.DataSize + Image.ZeroFillSize;
}

/// Installs Image: Write and Run are the writable and executable aliases of
/// the same arena offset, Data the data arena at that offset (so that
/// Run + JamDataDistance == Data). Table is the import table, one address
/// per Image.Imports entry. WithData false re-installs the text only,
/// leaving statics a previous installation left.
void installImage(uint8_t *Write, const uint8_t *Run, uint8_t *Data, const JamImageData &Image,
                  void *const *Table, bool WithData = true);

} // namespace twochains::rt

#endif
