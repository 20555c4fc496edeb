//===- CodeCache.cpp ------------------------------------------------------===//
#include "CodeCache.h"

#include <cerrno>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

namespace twochains::rt {

CodeArena::~CodeArena() {
  if (Write)
    munmap(Write, Size);
  if (Exec)
    munmap(const_cast<uint8_t *>(Exec), Size);
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
  void *W = MAP_FAILED, *X = MAP_FAILED;
  if (ftruncate(Fd, off_t(N)) == 0) {
    W = mmap(nullptr, N, PROT_READ | PROT_WRITE, MAP_SHARED, Fd, 0);
    X = mmap(nullptr, N, PROT_READ | PROT_EXEC, MAP_SHARED, Fd, 0);
  }
  int Saved = errno;
  close(Fd); // the mappings keep the memory
  if (W == MAP_FAILED || X == MAP_FAILED) {
    if (W != MAP_FAILED)
      munmap(W, N);
    if (X != MAP_FAILED)
      munmap(X, N);
    Error = std::string("cannot map the code cache's memory: ") + std::strerror(Saved);
    return TC_ERR_NO_MEMORY;
  }
  Write = static_cast<uint8_t *>(W);
  Exec = static_cast<uint8_t *>(X);
  Size = N;
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

bool CodeCache::allocate(size_t Lines, uint32_t *Offset) {
  size_t Bytes = Lines * Line;
  for (auto It = Free.begin(); It != Free.end(); ++It) {
    if (It->second < Bytes)
      continue;
    *Offset = It->first;
    uint32_t Rest = uint32_t(It->second - Bytes);
    uint32_t At = uint32_t(It->first + Bytes);
    Free.erase(It);
    if (Rest)
      Free[At] = Rest;
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

void CodeCache::evictOne() {
  int32_t Oldest = -1;
  for (size_t I = 0; I < Entries.size(); ++I)
    if (Entries[I].Size &&
        (Oldest < 0 || Entries[I].LastUse < Entries[size_t(Oldest)].LastUse))
      Oldest = int32_t(I);
  if (Oldest < 0)
    return;
  CachedCode &C = Entries[size_t(Oldest)];
  unlink(Oldest);
  release(C.Offset, (C.Size + Line - 1) / Line);
  // The bytes stay in the arena until reused; nothing can reach them.
  C = CachedCode();
  FreeEntries.push_back(Oldest);
  --Live;
}

CachedCode *CodeCache::reserve(uint64_t Key, uint64_t Package, uint32_t Element,
                               uint32_t Size, unsigned *Evicted) {
  size_t Lines = (size_t(Size) + Line - 1) / Line;
  if (Size == 0 || Lines * Line > Capacity)
    return nullptr;
  uint32_t Offset;
  unsigned N = 0;
  while (!allocate(Lines, &Offset)) {
    evictOne();
    ++N;
  }
  if (Evicted)
    *Evicted = N;
  int32_t Index;
  if (!FreeEntries.empty()) {
    Index = FreeEntries.back();
    FreeEntries.pop_back();
  } else {
    Index = int32_t(Entries.size());
    Entries.emplace_back();
  }
  CachedCode &C = Entries[size_t(Index)];
  C = {Key, Package, Element, Size, Offset, ++Clock};
  size_t Mask = Table.size() - 1;
  size_t I = mix(Key, Package, Element) & Mask;
  while (Table[I] >= 0)
    I = (I + 1) & Mask;
  Table[I] = Index;
  ++Live;
  return &C;
}

} // namespace twochains::rt
