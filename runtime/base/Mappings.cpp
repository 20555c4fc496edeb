//===- Mappings.cpp - What this process maps, as the kernel tells it ------===//
#include "base/Mappings.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace twochains::rt {

std::mutex &sharedMappingLock() {
  static std::mutex Lock;
  return Lock;
}

std::vector<SharedMapping> sharedMappings() {
  std::vector<SharedMapping> Out;
  std::FILE *Maps = std::fopen("/proc/self/maps", "re");
  if (!Maps)
    return Out;
  char Line[512];
  while (std::fgets(Line, sizeof Line, Maps)) {
    // "start-end perms offset major:minor inode path", parsed by hand:
    // sscanf was most of the cost with thousands of mappings.
    char *At = Line;
    unsigned long long Start = std::strtoull(At, &At, 16);
    if (*At++ != '-')
      continue;
    unsigned long long End = std::strtoull(At, &At, 16);
    if (*At++ != ' ' || std::strlen(At) < 5 || At[1] != 'w' || At[3] != 's' || At[4] != ' ')
      continue;
    At += 5;
    std::strtoull(At, &At, 16); // offset
    std::strtoul(At, &At, 16);  // major
    if (*At++ != ':')
      continue;
    std::strtoul(At, &At, 16); // minor
    char *Before = At;
    unsigned long long Inode = std::strtoull(At, &At, 10);
    if (At != Before)
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
  // A process with thousands of peers maps thousands of segments: sorted,
  // not compared pair by pair (which took most of a handshake at 1500).
  auto Less = [](const SharedMapping &A, const SharedMapping &B) {
    return A.Begin != B.Begin ? A.Begin < B.Begin
           : A.End != B.End   ? A.End < B.End
                              : A.Inode < B.Inode;
  };
  std::vector<SharedMapping> Sorted(Before);
  std::sort(Sorted.begin(), Sorted.end(), Less);
  std::vector<SharedMapping> Out;
  for (const SharedMapping &M : After)
    if (!std::binary_search(Sorted.begin(), Sorted.end(), M, Less))
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
