//===- CodeCache.cpp ------------------------------------------------------===//
#include "image/CodeCache.h"
#include "wire/Formats.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

namespace twochains::rt {

CodeArena::~CodeArena() {
  if (Write)
    munmap(Write, Size);
  if (Exec)
    munmap(const_cast<uint8_t *>(Exec), Reserved);
}

tc_status_t CodeArena::create(size_t Bytes, std::string &Error) {
  size_t Page = size_t(sysconf(_SC_PAGESIZE));
  size_t N = (Bytes + Page - 1) / Page * Page;
  int Fd = memfd_create("twochains-code", MFD_CLOEXEC);
  if (Fd < 0) {
    Error = std::string("cannot create the code cache's memory (memfd_create): ") +
            std::strerror(errno);
    return TC_ERR_NO_MEMORY;
  }
  if (N > JamDataDistance) {
    close(Fd);
    Error = "a code arena of " + std::to_string(N) + " bytes is larger than the " +
            std::to_string(JamDataDistance) + " bytes between a jam's code and its data";
    return TC_ERR_INVALID_PARAM;
  }
  // One reservation holds the executable alias and, JamDataDistance on, the
  // data arena; the gap stays inaccessible.
  size_t Total = JamDataDistance + N;
  void *W = MAP_FAILED, *X = MAP_FAILED, *D = MAP_FAILED;
  void *R = mmap(nullptr, Total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (R != MAP_FAILED && ftruncate(Fd, off_t(N)) == 0) {
    W = mmap(nullptr, N, PROT_READ | PROT_WRITE, MAP_SHARED, Fd, 0);
    X = mmap(R, N, PROT_READ | PROT_EXEC, MAP_SHARED | MAP_FIXED, Fd, 0);
    D = mmap(static_cast<uint8_t *>(R) + JamDataDistance, N, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  }
  int Saved = errno;
  close(Fd); // the mappings keep the memory
  if (R == MAP_FAILED || W == MAP_FAILED || X == MAP_FAILED || D == MAP_FAILED) {
    if (W != MAP_FAILED)
      munmap(W, N);
    if (R != MAP_FAILED)
      munmap(R, Total);
    Error = std::string("cannot map the code cache's memory: ") + std::strerror(Saved);
    return TC_ERR_NO_MEMORY;
  }
  Write = static_cast<uint8_t *>(W);
  Exec = static_cast<uint8_t *>(X);
  Data = static_cast<uint8_t *>(D);
  Size = N;
  Reserved = Total;
  return TC_OK;
}

tc_status_t CodeCache::create(size_t Bytes, std::string &Error) {
  if (tc_status_t St = Arena.create(Bytes, Error); St != TC_OK)
    return St;
  // At most one entry per line; twice as many table slots keeps probes short.
  size_t MaxEntries = Arena.size() / Line;
  size_t Slots = 1;
  while (Slots < 2 * MaxEntries)
    Slots <<= 1;
  Table.assign(Slots, -1);
  // The arena is whole pages; the cache holds what was asked for.
  Capacity = (Bytes + Line - 1) / Line * Line;
  Free[0] = uint32_t(Capacity);
  return TC_OK;
}

size_t CodeCache::bytesFree() const {
  size_t N = 0;
  for (auto &[Offset, Bytes] : Free)
    N += Bytes;
  return N;
}

bool CodeCache::allocate(size_t Lines, size_t Align, uint32_t *Offset) {
  size_t Bytes = Lines * Line;
  for (auto It = Free.begin(); It != Free.end(); ++It) {
    size_t Start = (size_t(It->first) + Align - 1) / Align * Align;
    size_t Skip = Start - It->first;
    if (It->second < Skip || It->second - Skip < Bytes)
      continue;
    uint32_t RunStart = It->first, RunBytes = It->second;
    Free.erase(It);
    if (Skip)
      Free[RunStart] = uint32_t(Skip);
    if (size_t Rest = RunBytes - Skip - Bytes)
      Free[uint32_t(Start + Bytes)] = uint32_t(Rest);
    *Offset = uint32_t(Start);
    return true;
  }
  return false;
}

void CodeCache::release(uint32_t Offset, size_t Lines) {
  uint32_t Bytes = uint32_t(Lines * Line);
  auto Next = Free.lower_bound(Offset);
  if (Next != Free.end() && Next->first == Offset + Bytes) {
    Bytes += Next->second;
    Next = Free.erase(Next);
  }
  if (Next != Free.begin()) {
    auto Prev = std::prev(Next);
    if (Prev->first + Prev->second == Offset) {
      Prev->second += Bytes;
      return;
    }
  }
  Free[Offset] = Bytes;
}

void CodeCache::unlink(int32_t Index) {
  // Backward-shift deletion keeps every remaining key reachable from its
  // home slot without tombstones.
  const CachedCode &C = Entries[size_t(Index)];
  size_t Mask = Table.size() - 1;
  size_t I = mix(C.Key, C.Package, C.Element) & Mask;
  while (Table[I] != Index)
    I = (I + 1) & Mask;
  for (size_t J = (I + 1) & Mask; Table[J] >= 0; J = (J + 1) & Mask) {
    const CachedCode &D = Entries[size_t(Table[J])];
    size_t Home = mix(D.Key, D.Package, D.Element) & Mask;
    // D may move into the hole at I if its home is not in (I, J].
    if (((J - Home) & Mask) >= ((J - I) & Mask)) {
      Table[I] = Table[J];
      I = J;
    }
  }
  Table[I] = -1;
}

bool CodeCache::evictOne() {
  int32_t Oldest = -1;
  for (size_t I = 0; I < Entries.size(); ++I)
    if (Entries[I].Size && !Entries[I].Pinned &&
        (Oldest < 0 || Entries[I].LastUse < Entries[size_t(Oldest)].LastUse))
      Oldest = int32_t(I);
  if (Oldest < 0)
    return false;
  CachedCode &C = Entries[size_t(Oldest)];
  unlink(Oldest);
  if (LastFound == Oldest)
    LastFound = -1;
  release(C.Offset, (C.Size + Line - 1) / Line);
  // The bytes stay in the arena until reused; nothing can reach them.
  C = CachedCode();
  FreeEntries.push_back(Oldest);
  --Live;
  return true;
}

CachedCode *CodeCache::reserve(uint64_t Key, uint64_t Package, uint32_t Element,
                               uint32_t Size, uint32_t Align, bool Pinned, unsigned *Evicted) {
  size_t Lines = (size_t(Size) + Line - 1) / Line;
  Align = std::max<uint32_t>(Align, Line);
  if (Size == 0 || Lines * Line > Capacity || (Align & (Align - 1)))
    return nullptr;
  uint32_t Offset;
  unsigned N = 0;
  bool Room;
  while (!(Room = allocate(Lines, Align, &Offset)) && evictOne())
    ++N;
  if (Evicted)
    *Evicted = N;
  if (!Room)
    return nullptr;
  int32_t Index;
  if (!FreeEntries.empty()) {
    Index = FreeEntries.back();
    FreeEntries.pop_back();
  } else {
    Index = int32_t(Entries.size());
    Entries.emplace_back();
  }
  CachedCode &C = Entries[size_t(Index)];
  C = {Key, Package, Element, Size, Offset, ++Clock, Pinned};
  size_t Mask = Table.size() - 1;
  size_t I = mix(Key, Package, Element) & Mask;
  while (Table[I] >= 0)
    I = (I + 1) & Mask;
  Table[I] = Index;
  ++Live;
  return &C;
}

} // namespace twochains::rt
