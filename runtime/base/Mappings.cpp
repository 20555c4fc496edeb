//===- Mappings.cpp - What this process maps, as the kernel tells it ------===//
#include "base/Mappings.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace twochains::rt {

std::vector<SharedMapping> sharedMappings() {
  std::vector<SharedMapping> Out;
  std::FILE *Maps = std::fopen("/proc/self/maps", "re");
  if (!Maps)
    return Out;
  char Line[512];
  while (std::fgets(Line, sizeof Line, Maps)) {
    unsigned long long Start, End, Offset, Inode;
    char Perms[5];
    unsigned Major, Minor;
    if (std::sscanf(Line, "%llx-%llx %4s %llx %x:%x %llu", &Start, &End, Perms, &Offset, &Major,
                    &Minor, &Inode) == 7 &&
        Perms[1] == 'w' && Perms[3] == 's')
      Out.push_back({uintptr_t(Start), uintptr_t(End), Inode});
    // A line longer than the buffer: skip the rest of it.
    while (!std::strchr(Line, '\n') && std::fgets(Line, sizeof Line, Maps))
      ;
  }
  std::fclose(Maps);
  return Out;
}

std::vector<SharedMapping> newMappings(const std::vector<SharedMapping> &Before,
                                       const std::vector<SharedMapping> &After) {
  std::vector<SharedMapping> Out;
  for (const SharedMapping &M : After)
    if (std::find(Before.begin(), Before.end(), M) == Before.end())
      Out.push_back(M);
  return Out;
}

bool insideOneOf(const std::vector<SharedMapping> &Mappings, uintptr_t Begin, size_t Length) {
  if (Begin + Length < Begin)
    return false;
  return std::any_of(Mappings.begin(), Mappings.end(), [&](const SharedMapping &M) {
    return Begin >= M.Begin && Begin + Length <= M.End;
  });
}

bool backedByMemory(uintptr_t Begin, size_t Length) {
  if (!Length || Begin + Length < Begin)
    return false;
  int Pipe[2];
  if (pipe2(Pipe, O_CLOEXEC | O_NONBLOCK) != 0)
    return false;
  const uintptr_t Page = uintptr_t(sysconf(_SC_PAGESIZE));
  bool Backed = true;
  // One byte of each page, and the last byte: a page either loads or not.
  for (uintptr_t At = Begin; Backed; At = (At & ~(Page - 1)) + Page) {
    if (At >= Begin + Length)
      At = Begin + Length - 1;
    char Byte;
    Backed = write(Pipe[1], reinterpret_cast<const void *>(At), 1) == 1 &&
             read(Pipe[0], &Byte, 1) == 1;
    if (At == Begin + Length - 1)
      break;
  }
  close(Pipe[0]);
  close(Pipe[1]);
  return Backed;
}

} // namespace twochains::rt
