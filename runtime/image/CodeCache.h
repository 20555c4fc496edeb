//===- CodeCache.h - Installed injected code, never writable and executable ===//
//
// Code that arrived in a frame and passed validation is installed once and
// run from then on without being shipped or rewritten again
// (docs/code-cache.md).
//
// CodeArena is the memory: a memfd mapped twice, a read+write alias the
// runtime installs through and a read+execute alias code runs from, so no
// page is ever writable and executable at once, and stores that install
// code never land on a page the executing thread runs from through the
// same mapping. JamDataDistance past the executable alias lies the data
// arena, read+write and never executable, of the same size: an image
// installed at offset O of the arena has its statics at offset O +
// TextSize of the data arena, where its code, linked for that distance,
// finds them (runtime/ImageInstall.h).
//
// CodeCache keys installed images by the first 8 bytes of their SHA-256
// together with the package and element they belong to: an open-addressing
// table looked up in constant time on the hot path. It holds at most its
// arena's bytes and evicts the least recently run images to make room.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_CODECACHE_H
#define TWOCHAINS_RUNTIME_CODECACHE_H

#include "twochains/status.h"
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace twochains::rt {

class CodeArena {
public:
  CodeArena() = default;
  CodeArena(const CodeArena &) = delete;
  CodeArena &operator=(const CodeArena &) = delete;
  ~CodeArena();

  /// Maps Size bytes (rounded up to pages) twice. TC_ERR_NO_MEMORY (and
  /// Error says why) if the kernel refuses.
  tc_status_t create(size_t Size, std::string &Error);

  uint8_t *writable() const { return Write; }
  const uint8_t *executable() const { return Exec; }
  /// executable() + JamDataDistance: read+write, never executable.
  uint8_t *data() const { return Data; }
  size_t size() const { return Size; }

private:
  uint8_t *Write = nullptr;
  uint8_t *Exec = nullptr;
  uint8_t *Data = nullptr;
  size_t Size = 0;
  size_t Reserved = 0; // the executable alias, the gap and the data arena
};

/// What a cache entry is, and how to reach its code.
struct CachedCode {
  uint64_t Key = 0;        // first 8 bytes of the image's SHA-256
  uint64_t Package = 0;    // package tag
  uint32_t Element = 0;
  uint32_t Size = 0;       // bytes taken: text, data and bss
  uint32_t Offset = 0;     // in the arena
  uint64_t LastUse = 0;
  /// Holds a jam's statics, which live as long as the context: never
  /// evicted (docs/code-cache.md, "Static data").
  bool Pinned = false;
};

class CodeCache {
public:
  /// Lines of 64 bytes are the unit of allocation: images are whole lines.
  static constexpr size_t Line = 64;

  tc_status_t create(size_t Bytes, std::string &Error);

  /// The entry for this key, package and element, or null. Marks it used.
  const CachedCode *find(uint64_t Key, uint64_t Package, uint32_t Element) {
    // The entry found last first: a stream's frames name one image.
    if (LastFound >= 0) {
      CachedCode &C = Entries[size_t(LastFound)];
      if (C.Key == Key && C.Package == Package && C.Element == Element) {
        C.LastUse = ++Clock;
        return &C;
      }
    }
    size_t Mask = Table.size() - 1;
    for (size_t I = mix(Key, Package, Element) & Mask;; I = (I + 1) & Mask) {
      int32_t E = Table[I];
      if (E < 0)
        return nullptr;
      CachedCode &C = Entries[size_t(E)];
      if (C.Key == Key && C.Package == Package && C.Element == Element) {
        C.LastUse = ++Clock;
        LastFound = E;
        return &C;
      }
    }
  }

  /// Reserves room for Size bytes under this key at an offset that is a
  /// multiple of Align (a power of two, at least a line), evicting the least
  /// recently used unpinned entries if needed; *Evicted counts them. The
  /// entry is findable at once: the caller installs the code through
  /// writableCode() before anything else looks it up (one executor). Null
  /// if no room can be made: larger than the cache, or what is left is
  /// pinned.
  CachedCode *reserve(uint64_t Key, uint64_t Package, uint32_t Element, uint32_t Size,
                      uint32_t Align, bool Pinned, unsigned *Evicted);

  uint8_t *writableCode(const CachedCode &C) const { return Arena.writable() + C.Offset; }
  const uint8_t *executableCode(const CachedCode &C) const {
    return Arena.executable() + C.Offset;
  }
  /// The data arena at the entry's offset (add the image's TextSize).
  uint8_t *dataArea(const CachedCode &C) const { return Arena.data() + C.Offset; }

  size_t entries() const { return Live; }
  size_t bytesFree() const;
  size_t capacity() const { return Capacity; }

private:
  static size_t mix(uint64_t Key, uint64_t Package, uint32_t Element) {
    uint64_t H = Key ^ (Package * 0x9e3779b97f4a7c15ull) ^ (uint64_t(Element) << 32);
    H ^= H >> 29;
    return size_t(H * 0xbf58476d1ce4e5b9ull >> 32);
  }
  bool allocate(size_t Lines, size_t Align, uint32_t *Offset);
  void release(uint32_t Offset, size_t Lines);
  bool evictOne();
  void unlink(int32_t Index);

  CodeArena Arena;
  std::vector<CachedCode> Entries;   // slots of entries; Size 0 = free
  std::vector<int32_t> FreeEntries;
  std::vector<int32_t> Table;        // open addressing; -1 empty
  std::map<uint32_t, uint32_t> Free; // free runs of the arena: offset -> bytes
  size_t Capacity = 0;
  size_t Live = 0;
  uint64_t Clock = 0;
  int32_t LastFound = -1; // an entry of Entries, live (evictOne forgets it)
};

} // namespace twochains::rt

#endif
