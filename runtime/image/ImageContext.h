//===- ImageContext.h - The image layer's part of a context ---------------===//
//
// Where code that arrives is installed: the W^X code cache and the
// scratch arena. The code layer fills and reads them (code/InjectedCode.h);
// context/ makes them once the mailbox mode is known.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_IMAGE_IMAGECONTEXT_H
#define TWOCHAINS_RUNTIME_IMAGE_IMAGECONTEXT_H

#include "image/CodeCache.h"

#include <cstdint>
#include <memory>

namespace twochains::rt {

struct ImageContext {
  uint32_t CodeCacheSize = 1u << 20;
  /// Code-cache mode: injected images installed once, by content hash.
  std::unique_ptr<CodeCache> Cache;
  /// Where injected code that is not cached runs (no-cache mode, or an
  /// image larger than the cache): one slot's worth of W^X memory.
  std::unique_ptr<CodeArena> Scratch;
};

} // namespace twochains::rt

#endif
