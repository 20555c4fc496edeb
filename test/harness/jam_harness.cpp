//===- jam_harness.cpp - Run a jam image the way a receiver would ---------===//
//
//   jam-harness --image x.jam --local libpkg_local.so [--lib libried.so]...
//               [--state SYMBOL:BYTES]... --payload-hex HEX | --payload-file F
//
// Maps the image twice, each time at a random 64-byte line of fresh
// executable memory (never page-aligned), fills its import table from dlsym,
// points GOTP at it, applies the fixups, and calls the entry on a copy of
// the payload. Then calls the same element from the Local-Function library.
// The payload bytes and every --state region must end up identical in all
// three runs (state is restored before each run). Prints MATCH or the first
// difference; exits non-zero on any difference or error.
//
// Depends on libc and libdl only, so it can be built for aarch64 and run
// under qemu-user.
//
//===----------------------------------------------------------------------===//
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>
#include <vector>

#include "JamImageReader.h"
#include "twochains/local_vector.h"

namespace {

[[noreturn]] void die(const std::string &Msg) {
  std::fprintf(stderr, "jam-harness: error: %s\n", Msg.c_str());
  std::exit(2);
}

using twochains::rt::JamImageData;

std::vector<uint8_t> readFile(const std::string &Path) {
  std::vector<uint8_t> Data;
  std::string Error;
  if (!twochains::rt::readFileBytes(Path, Data, Error))
    die(Path + ": " + Error);
  return Data;
}

/// The runtime's reader: it checks everything, the hash included.
JamImageData loadImage(const std::string &Path) {
  JamImageData Img;
  std::string Error;
  if (twochains::rt::readJamImageFile(Path, Img, Error) != TC_OK)
    die(Path + ": " + Error);
  return Img;
}

using EntryFn = void (*)(void *, void *, size_t);

struct Placed {
  uint8_t *Map = nullptr;
  size_t MapSize = 0;
  uint8_t *Base = nullptr;
  std::vector<void *> Table;
};

Placed place(const JamImageData &Img) {
  Placed P;
  uint32_t R = 0;
  if (getrandom(&R, sizeof R, 0) != sizeof R)
    R = uint32_t(getpid());
  size_t Page = size_t(sysconf(_SC_PAGESIZE));
  // A random line in the first page, never the page start, so the image
  // lands where no page-relative address could be right by luck.
  size_t Line = 64 * (1 + R % (Page / 64 - 1));
  P.MapSize = (Line + Img.Bytes.size() + Page - 1) / Page * Page;
  void *M = mmap(nullptr, P.MapSize, PROT_READ | PROT_WRITE | PROT_EXEC,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (M == MAP_FAILED)
    die("mmap of executable memory failed");
  P.Map = static_cast<uint8_t *>(M);
  P.Base = P.Map + Line;
  if (reinterpret_cast<uintptr_t>(P.Base) % Img.Align)
    die("image alignment " + std::to_string(Img.Align) + " exceeds a line");
  std::memcpy(P.Base, Img.Bytes.data(), Img.Bytes.size());

  for (const std::string &Name : Img.Imports) {
    dlerror();
    void *Addr = dlsym(RTLD_DEFAULT, Name.c_str());
    if (!Addr)
      die("import '" + Name + "' of jam '" + Img.Element + "' is not defined in this process");
    P.Table.push_back(Addr);
  }
  void *TableAddr = P.Table.data();
  std::memcpy(P.Base + Img.GOTP, &TableAddr, sizeof TableAddr);
  for (const twochains::rt::ImageFixup &F : Img.Fixups) {
    uint64_t V;
    std::memcpy(&V, P.Base + F.Offset, 8);
    if (F.Kind == 1)
      V += reinterpret_cast<uintptr_t>(P.Base);
    else if (F.Kind == 2)
      V = reinterpret_cast<uintptr_t>(P.Table[F.Symbol]) + uint64_t(F.Addend);
    else
      die("unknown fixup kind");
    std::memcpy(P.Base + F.Offset, &V, 8);
  }
  __builtin___clear_cache(reinterpret_cast<char *>(P.Base),
                          reinterpret_cast<char *>(P.Base + Img.Bytes.size()));
  return P;
}

struct StateRegion {
  std::string Name;
  uint8_t *Addr;
  size_t Size;
};


std::vector<uint8_t> parseHex(const std::string &Hex) {
  std::vector<uint8_t> Out;
  for (size_t I = 0; I + 1 < Hex.size(); I += 2)
    Out.push_back(uint8_t(std::stoul(Hex.substr(I, 2), nullptr, 16)));
  return Out;
}

} // namespace

int main(int Argc, char **Argv) {
  std::string ImagePath, LocalPath;
  std::vector<std::string> Libs, States;
  std::vector<uint8_t> Payload;
  for (int I = 1; I < Argc; ++I) {
    std::string A = Argv[I];
    auto Next = [&]() -> std::string {
      if (I + 1 >= Argc)
        die("missing value after " + A);
      return Argv[++I];
    };
    if (A == "--image") ImagePath = Next();
    else if (A == "--local") LocalPath = Next();
    else if (A == "--lib") Libs.push_back(Next());
    else if (A == "--state") States.push_back(Next());
    else if (A == "--payload-hex") Payload = parseHex(Next());
    else if (A == "--payload-file") Payload = readFile(Next());
    else die("unknown argument " + A);
  }
  if (ImagePath.empty() || LocalPath.empty())
    die("usage: jam-harness --image X.jam --local LIB.so [--lib L.so]... "
        "[--state SYM:BYTES]... --payload-hex HEX");

  for (const std::string &L : Libs)
    if (!dlopen(L.c_str(), RTLD_NOW | RTLD_GLOBAL))
      die(std::string("dlopen ") + L + ": " + dlerror());
  std::vector<StateRegion> Regions;
  for (const std::string &S : States) {
    size_t Colon = S.find(':');
    std::string Name = S.substr(0, Colon);
    void *Addr = dlsym(RTLD_DEFAULT, Name.c_str());
    if (!Addr)
      die("state symbol " + Name + " not found");
    Regions.push_back({Name, static_cast<uint8_t *>(Addr),
                       size_t(std::stoul(S.substr(Colon + 1)))});
  }

  JamImageData Img = loadImage(ImagePath);
  void *Local = dlopen(LocalPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!Local)
    die(std::string("dlopen ") + LocalPath + ": " + dlerror());
  auto *Vec = static_cast<const tc_local_vector *>(dlsym(Local, TC_LOCAL_VECTOR_SYMBOL));
  if (!Vec)
    die(LocalPath + " has no tc_local_vector");
  EntryFn LocalEntry = nullptr;
  for (uint32_t I = 0; I < Vec->count; ++I)
    if (Vec->elements[I].name && Img.Element == Vec->elements[I].name)
      LocalEntry = reinterpret_cast<EntryFn>(Vec->elements[I].entry);
  if (!LocalEntry)
    die("element " + Img.Element + " is not in " + LocalPath);

  std::vector<std::vector<uint8_t>> Initial;
  for (const StateRegion &R : Regions)
    Initial.emplace_back(R.Addr, R.Addr + R.Size);

  struct Outcome {
    std::vector<uint8_t> Payload;
    std::vector<std::vector<uint8_t>> State;
  };
  auto Run = [&](EntryFn Fn, const char *How) {
    for (size_t I = 0; I < Regions.size(); ++I)
      std::memcpy(Regions[I].Addr, Initial[I].data(), Regions[I].Size);
    Outcome O;
    O.Payload = Payload;
    std::printf("--- %s\n", How);
    std::fflush(stdout);
    int Ctx = 0;
    Fn(&Ctx, O.Payload.data(), O.Payload.size());
    std::fflush(stdout);
    for (const StateRegion &R : Regions)
      O.State.emplace_back(R.Addr, R.Addr + R.Size);
    return O;
  };

  std::vector<Outcome> Results;
  std::vector<Placed> Places;
  for (int K = 0; K < 2; ++K) {
    Places.push_back(place(Img));
    Placed &P = Places.back();
    Results.push_back(Run(reinterpret_cast<EntryFn>(P.Base + Img.Entry),
                          K == 0 ? "injected" : "injected, elsewhere"));
  }
  Results.push_back(Run(LocalEntry, "local"));

  int Status = 0;
  for (size_t K = 1; K < Results.size(); ++K) {
    if (Results[K].Payload != Results[0].Payload) {
      std::printf("MISMATCH: payload differs between run 1 and run %zu\n", K + 1);
      Status = 1;
    }
    for (size_t I = 0; I < Regions.size(); ++I)
      if (Results[K].State[I] != Results[0].State[I]) {
        std::printf("MISMATCH: %s differs between run 1 and run %zu\n",
                    Regions[I].Name.c_str(), K + 1);
        Status = 1;
      }
  }
  bool Changed = Results[0].Payload != Payload;
  for (size_t I = 0; I < Regions.size(); ++I)
    Changed |= Results[0].State[I] != Initial[I];
  if (!Status)
    std::printf("MATCH (%s; %zu bytes image, %zu imports, %zu fixups)\n",
                Changed ? "effects identical" : "no visible effect",
                Img.Bytes.size(), Img.Imports.size(), Img.Fixups.size());
  for (Placed &P : Places)
    munmap(P.Map, P.MapSize);
  return Status;
}
