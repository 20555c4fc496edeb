//===- Mappings.cpp - What this process maps, as the kernel tells it ------===//
#include "base/Mappings.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

namespace twochains::rt {

std::mutex &sharedMappingLock() {
  static std::mutex Lock;
  return Lock;
}
static std::atomic<uint64_t> Lists{0};

uint64_t sharedMappingLists() { return Lists.load(std::memory_order_relaxed); }

std::vector<SharedMapping> sharedMappings() {
  Lists.fetch_add(1, std::memory_order_relaxed);
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
    unsigned long Major = std::strtoul(At, &At, 16);
    if (*At++ != ':')
      continue;
    unsigned long Minor = std::strtoul(At, &At, 16);
    char *Before = At;
    unsigned long long Inode = std::strtoull(At, &At, 10);
    if (At != Before)
      Out.push_back({uintptr_t(Start), uintptr_t(End), Inode,
                     uint64_t(makedev(unsigned(Major), unsigned(Minor)))});
    // A line longer than the buffer: skip the rest of it.
    while (!std::strchr(Line, '\n') && std::fgets(Line, sizeof Line, Maps))
      ;
  }
  std::fclose(Maps);
  return Out;
}

FileId fileIdOf(int Fd) {
  struct stat St;
  if (Fd < 0 || fstat(Fd, &St) != 0)
    return {};
  return {uint64_t(St.st_dev), uint64_t(St.st_ino)};
}

uint64_t virtualSize() {
  // Kept open: a count is one pread, not an open, a read and a close. A
  // forked child reopens it: the descriptor it inherited reads its parent.
  static std::mutex Lock;
  static int Statm = -1;
  static pid_t OpenedBy = 0;
  std::lock_guard<std::mutex> Guard(Lock);
  if (pid_t Self = getpid(); Self != OpenedBy) {
    if (Statm >= 0)
      close(Statm);
    Statm = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    OpenedBy = Self;
  }
  char Text[128];
  ssize_t Got = Statm < 0 ? -1 : pread(Statm, Text, sizeof Text - 1, 0);
  if (Got <= 0)
    return 0;
  Text[Got] = 0;
  return std::strtoull(Text, nullptr, 10) * uint64_t(sysconf(_SC_PAGESIZE));
}

bool madeAreAllNew(const std::vector<MadeMapping> &Made, uint64_t SizeBefore, uint64_t SizeAfter,
                   std::vector<SharedMapping> &Out) {
  Out.clear();
  const uint64_t Page = uint64_t(sysconf(_SC_PAGESIZE));
  uint64_t Pages = 0;
  for (const MadeMapping &M : Made) {
    // Another protection or sharing would not be one of the writable
    // shared mappings listed otherwise; MAP_FIXED may have replaced one,
    // and huge pages round differently: none of them is counted here.
    if (!(M.Prot & PROT_WRITE) || (M.Flags & MAP_TYPE) != MAP_SHARED ||
        (M.Flags & (MAP_FIXED | MAP_HUGETLB)) || !M.Length || M.Begin % Page ||
        M.Begin + M.Length < M.Begin)
      break;
    uint64_t Length = (uint64_t(M.Length) + Page - 1) / Page * Page;
    Out.push_back({M.Begin, uintptr_t(M.Begin + Length), M.Inode, M.Device});
    Pages += Length;
  }
  if (!SizeBefore || !SizeAfter || Out.size() != Made.size() || SizeAfter < SizeBefore ||
      SizeAfter - SizeBefore != Pages) {
    Out.clear();
    return false;
  }
  return true;
}

size_t attachNewMappings(const std::vector<SharedMapping> &New,
                         const std::vector<uintptr_t> &Locals,
                         std::vector<std::vector<SharedMapping>> &Attached) {
  Attached.assign(Locals.size(), {});
  std::vector<bool> Taken(New.size(), false);
  size_t Stray = 0, Strays = 0; // a key mapped here whose address lies in no new mapping
  for (size_t K = 0; K < Locals.size(); ++K) {
    if (!Locals[K])
      continue;
    for (size_t I = 0; I < New.size(); ++I)
      if (Locals[K] >= New[I].Begin && Locals[K] < New[I].End) {
        Attached[K].push_back(New[I]);
        Taken[I] = true;
      }
    if (Attached[K].empty()) {
      Stray = K;
      ++Strays;
    }
  }
  size_t Left = size_t(std::count(Taken.begin(), Taken.end(), false));
  if (Strays == 1 && Left == 1) {
    Attached[Stray].push_back(
        New[size_t(std::find(Taken.begin(), Taken.end(), false) - Taken.begin())]);
    Left = 0;
  }
  return Left;
}

std::vector<SharedMapping> newMappings(const std::vector<SharedMapping> &Before,
                                       const std::vector<SharedMapping> &After) {
  // A process with thousands of peers maps thousands of segments: sorted,
  // not compared pair by pair (which took most of a handshake at 1500).
  auto Less = [](const SharedMapping &A, const SharedMapping &B) {
    return A.Begin != B.Begin   ? A.Begin < B.Begin
           : A.End != B.End     ? A.End < B.End
           : A.Inode != B.Inode ? A.Inode < B.Inode
                                : A.Device < B.Device;
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

/// Whether the byte at At loads, copied by the kernel through a pipe (where
/// process_vm_readv is not allowed: some seccomp profiles refuse it).
static bool loadsThroughPipe(uintptr_t At) {
  int Pipe[2];
  if (pipe2(Pipe, O_CLOEXEC | O_NONBLOCK) != 0)
    return false;
  char Byte;
  bool Loads = write(Pipe[1], reinterpret_cast<const void *>(At), 1) == 1 &&
               read(Pipe[0], &Byte, 1) == 1;
  close(Pipe[0]);
  close(Pipe[1]);
  return Loads;
}

/// Whether the byte at At loads: the kernel copies it from this process's
/// own memory (one system call, no descriptor; a pipe costs five, in
/// every handshake).
static bool loads(uintptr_t At) {
  static std::atomic<bool> NoReadv{false};
  if (!NoReadv.load(std::memory_order_relaxed)) {
    char Byte;
    iovec Local = {&Byte, 1}, Remote = {reinterpret_cast<void *>(At), 1};
    if (process_vm_readv(getpid(), &Local, 1, &Remote, 1, 0) == 1)
      return true;
    if (errno != EPERM && errno != ENOSYS)
      return false;
    NoReadv.store(true, std::memory_order_relaxed);
  }
  return loadsThroughPipe(At);
}

bool backedByMemory(uintptr_t Begin, size_t Length) {
  if (!Length || Begin + Length < Begin)
    return false;
  const uintptr_t Page = uintptr_t(sysconf(_SC_PAGESIZE));
  // One byte of each page, and the last byte: a page either loads or not.
  for (uintptr_t At = Begin;; At = (At & ~(Page - 1)) + Page) {
    if (At >= Begin + Length)
      At = Begin + Length - 1;
    if (!loads(At))
      return false;
    if (At == Begin + Length - 1)
      return true;
  }
}

} // namespace twochains::rt
