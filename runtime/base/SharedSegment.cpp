//===- SharedSegment.cpp - Memory shared with a process of this host ------===//
#include "base/SharedSegment.h"
#include "base/Mappings.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

namespace twochains::rt {

static const char *kindName(SegmentKind Kind) {
  return Kind == SegmentKind::Mailbox ? "twochains-mailbox" : "twochains-doorbell";
}

static bool randomBytes(uint8_t *Out, size_t Size) {
  for (size_t Got = 0; Got < Size;) {
    ssize_t N = getrandom(Out + Got, Size - Got, 0);
    if (N < 0 && errno != EINTR)
      return false;
    if (N > 0)
      Got += size_t(N);
  }
  return true;
}

static std::string errnoText(const char *What) {
  return std::string(What) + ": " + std::strerror(errno);
}

bool createSharedSegment(SegmentKind Kind, size_t Length, size_t TokenAt, SharedSegment &Out,
                         std::string &Why) {
  if (TokenAt + SegmentTokenBytes > Length) {
    Why = "no room for the token";
    return false;
  }
  SharedSegment S;
  S.Length = Length;
  if (!randomBytes(S.Token, sizeof S.Token)) {
    Why = errnoText("getrandom");
    return false;
  }
  S.Fd = memfd_create(kindName(Kind), MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (S.Fd < 0) {
    Why = errnoText("memfd_create");
    return false;
  }
  if (ftruncate(S.Fd, off_t(Length)) != 0 ||
      fcntl(S.Fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    Why = errnoText("sizing and sealing it");
    close(S.Fd);
    return false;
  }
  void *Base = nullptr;
  {
    // Mapping shared memory is watched by whoever unpacks a UCX key
    // meanwhile (base/Mappings.h).
    std::lock_guard<std::mutex> Mapping(sharedMappingLock());
    Base = mmap(nullptr, Length, PROT_READ | PROT_WRITE, MAP_SHARED, S.Fd, 0);
  }
  if (Base == MAP_FAILED) {
    Why = errnoText("mmap");
    close(S.Fd);
    return false;
  }
  S.Base = static_cast<uint8_t *>(Base);
  S.File = fileIdOf(S.Fd);
  std::memcpy(S.Base + TokenAt, S.Token, sizeof S.Token);
  Out = S;
  return true;
}

void releaseSharedSegment(SharedSegment &Segment) {
  if (Segment.Base)
    munmap(Segment.Base, Segment.Length);
  if (Segment.Fd >= 0)
    close(Segment.Fd);
  Segment = SharedSegment();
}

bool attachSharedSegment(SegmentKind Kind, uint32_t Pid, int32_t Fd, uint64_t Length,
                         size_t TokenAt, const uint8_t Token[SegmentTokenBytes], uint8_t *&Base,
                         std::string &Why, FileId *File) {
  if (!Pid || Fd < 0 || !Length || Length > SIZE_MAX || TokenAt + SegmentTokenBytes > Length) {
    Why = "process " + std::to_string(Pid) + ", descriptor " + std::to_string(Fd) + ", " +
          std::to_string(Length) + " bytes";
    return false;
  }
  char Path[64];
  std::snprintf(Path, sizeof Path, "/proc/%u/fd/%d", Pid, Fd);
  // The link names the file without opening it: a descriptor of a device,
  // a pipe or a socket is refused here, never opened.
  char Target[128];
  ssize_t N = readlink(Path, Target, sizeof Target - 1);
  if (N < 0) {
    Why = errnoText(Path);
    return false;
  }
  Target[N] = 0;
  std::string Expected = std::string("/memfd:") + kindName(Kind) + " (deleted)";
  if (Expected != Target) {
    Why = std::string(Path) + " is " + Target + ", not a " + kindName(Kind) + " segment";
    return false;
  }
  int Own = open(Path, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (Own < 0) {
    Why = errnoText(Path);
    return false;
  }
  // Checked on what was opened: the descriptor may have changed since the
  // link was read.
  struct stat St;
  int Seals = fcntl(Own, F_GET_SEALS);
  if (fstat(Own, &St) != 0 || !S_ISREG(St.st_mode) || Seals < 0 || !(Seals & F_SEAL_SHRINK) ||
      uint64_t(St.st_size) != Length) {
    Why = std::string(Path) + " is not a memory file of " + std::to_string(Length) +
          " bytes sealed against shrinking";
    close(Own);
    return false;
  }
  void *Mapped = nullptr;
  {
    std::lock_guard<std::mutex> Mapping(sharedMappingLock());
    Mapped = mmap(nullptr, size_t(Length), PROT_READ | PROT_WRITE, MAP_SHARED, Own, 0);
  }
  close(Own);
  if (Mapped == MAP_FAILED) {
    Why = errnoText("mmap");
    return false;
  }
  auto *Bytes = static_cast<uint8_t *>(Mapped);
  uint8_t Differ = 0;
  for (size_t I = 0; I < SegmentTokenBytes; ++I)
    Differ |= uint8_t(Bytes[TokenAt + I] ^ Token[I]);
  if (Differ) {
    munmap(Mapped, size_t(Length));
    Why = std::string(Path) + " does not hold the segment's token";
    return false;
  }
  Base = Bytes;
  if (File)
    *File = {uint64_t(St.st_dev), uint64_t(St.st_ino)};
  return true;
}

const uint8_t *hostIdentity() {
  static const struct Identity {
    uint8_t Bytes[SegmentHostBytes] = {};
    Identity() {
      // "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx": 32 hex digits.
      char Text[64] = {};
      if (FILE *F = std::fopen("/proc/sys/kernel/random/boot_id", "r")) {
        if (!std::fgets(Text, sizeof Text, F))
          Text[0] = 0;
        std::fclose(F);
      }
      size_t Digit = 0;
      for (const char *C = Text; *C && Digit < 2 * SegmentHostBytes; ++C) {
        int V = *C >= '0' && *C <= '9' ? *C - '0' : *C >= 'a' && *C <= 'f' ? *C - 'a' + 10 : -1;
        if (V < 0)
          continue;
        Bytes[Digit / 2] = uint8_t(Bytes[Digit / 2] << 4 | V);
        ++Digit;
      }
    }
  } Host;
  return Host.Bytes;
}

} // namespace twochains::rt
