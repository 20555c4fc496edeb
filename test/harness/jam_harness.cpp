//===- jam_harness.cpp - Run a jam image the way a receiver would ---------===//
//
//   jam-harness --image x.jam --local libpkg_local.so [--lib libried.so]...
//               [--state SYMBOL:BYTES]... [--repeat N] [--sandbox]
//               --payload-hex HEX | --payload-file F
//
// Installs the image twice with the runtime's own installer
// (runtime/image/ImageInstall.h) into a code cache like a receiver's, each time
// at a random 64-byte line (never page-aligned unless the image asks for
// pages): text through the writable alias and run from the executable one,
// statics in the data arena, import table filled from dlsym. Calls each
// installation's entry N times (default 1) on one copy of the payload, so
// statics carry over between the calls as on a receiver; then the same
// element from the Local-Function library. The payload bytes and every
// --state region must end up identical in all three runs (state is
// restored before each run). Prints MATCH or the first difference; exits
// non-zero on any difference or error.
//
// --time: prints each run's nanoseconds a call (the Repeat calls timed
// together; a region's run includes the payload's copy in and out).
//
// --sandbox: the image is a sandboxed one (jamlink --sandbox); the injected
// runs install it twice in one sandbox region and once in another
// (runtime/sandbox/Region.h), each install verified as installed, and run
// it there (aarch64).
//
// Depends on libc and libdl only, so it can be built for aarch64 and run
// under qemu-user.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>
#include <memory>
#include <time.h>
#include <vector>

#include "image/CodeCache.h"
#include "image/ImageInstall.h"
#include "sandbox/Region.h"
#include "JamImageFormat.h"
#include "twochains/local_vector.h"

namespace {

[[noreturn]] void die(const std::string &Msg) {
  std::fprintf(stderr, "jam-harness: error: %s\n", Msg.c_str());
  std::exit(2);
}

using twochains::format::JamImageData;

std::vector<uint8_t> readFile(const std::string &Path) {
  std::vector<uint8_t> Data;
  std::string Error;
  if (!twochains::format::readFileBytes(Path, Data, Error))
    die(Path + ": " + Error);
  return Data;
}

/// The runtime's reader: it checks everything, the hash included.
JamImageData loadImage(const std::string &Path) {
  JamImageData Img;
  std::string Error;
  if (twochains::format::readJamImageFile(Path, Img, Error) !=
      twochains::format::FormatError::None)
    die(Path + ": " + Error);
  return Img;
}

using EntryFn = void (*)(void *, void *, size_t);

using twochains::rt::CachedCode;
using twochains::rt::CodeCache;

struct Placed {
  const uint8_t *Base = nullptr;
  std::vector<void *> Table;
};

Placed place(CodeCache &Cache, const JamImageData &Img, uint64_t Key) {
  Placed P;
  uint32_t R = 0;
  if (getrandom(&R, sizeof R, 0) != sizeof R)
    R = uint32_t(getpid());
  // A filler of 1 to 63 lines first, so the image lands where no
  // page-relative address could be right by luck.
  if (!Cache.reserve(Key + 1000, 1, 0, 64 * (1 + R % 63), 64, true, nullptr))
    die("the harness's code cache is full");
  const CachedCode *C = Cache.reserve(Key, 1, 1, uint32_t(twochains::rt::installedSize(Img)),
                                      uint32_t(Img.Align), true, nullptr);
  if (!C)
    die("the image does not fit in the harness's code cache");
  for (const std::string &Name : Img.Imports) {
    dlerror();
    void *Addr = dlsym(RTLD_DEFAULT, Name.c_str());
    if (!Addr)
      die("import '" + Name + "' of jam '" + Img.Element + "' is not defined in this process");
    P.Table.push_back(Addr);
  }
  P.Base = Cache.executableCode(*C);
  twochains::rt::installImage(Cache.writableCode(*C), P.Base, Cache.dataArea(*C), Img,
                              P.Table.data());
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

static uint64_t nowNs() {
  timespec T;
  clock_gettime(CLOCK_MONOTONIC, &T);
  return uint64_t(T.tv_sec) * 1000000000u + uint64_t(T.tv_nsec);
}

static void printTime(bool Time, uint64_t Ns, int Repeat) {
  if (Time)
    std::printf("time: %.1f ns a call (%d calls)\n", double(Ns) / Repeat, Repeat);
}

int main(int Argc, char **Argv) {
  std::string ImagePath, LocalPath;
  std::vector<std::string> Libs, States;
  std::vector<uint8_t> Payload;
  int Repeat = 1;
  bool Time = false;
  bool Sandboxed = false;
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
    else if (A == "--repeat") Repeat = std::max(1, std::atoi(Next().c_str()));
    else if (A == "--time")
      Time = true;
    else if (A == "--sandbox")
      Sandboxed = true;
    else die("unknown argument " + A);
  }
  if (ImagePath.empty() || (LocalPath.empty() && !Sandboxed))
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
  EntryFn LocalEntry = nullptr;
  if (!LocalPath.empty()) { // optional with --sandbox: the two regions' runs are compared
    void *Local = dlopen(LocalPath.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!Local)
      die(std::string("dlopen ") + LocalPath + ": " + dlerror());
    auto *Vec = static_cast<const tc_local_vector *>(dlsym(Local, TC_LOCAL_VECTOR_SYMBOL));
    if (!Vec)
      die(LocalPath + " has no tc_local_vector");
    for (uint32_t I = 0; I < Vec->count; ++I)
      if (Vec->elements[I].name && Img.Element == Vec->elements[I].name)
        LocalEntry = reinterpret_cast<EntryFn>(Vec->elements[I].entry);
    if (!LocalEntry)
      die("element " + Img.Element + " is not in " + LocalPath);
  }

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
    uint64_t Start = nowNs();
    for (int K = 0; K < Repeat; ++K)
      Fn(&Ctx, O.Payload.data(), O.Payload.size());
    printTime(Time, nowNs() - Start, Repeat);
    std::fflush(stdout);
    for (const StateRegion &R : Regions)
      O.State.emplace_back(R.Addr, R.Addr + R.Size);
    return O;
  };

  std::vector<Outcome> Results;
  std::vector<Placed> Places;
  CodeCache Cache;
  std::string CacheError;
  if (Cache.create(2 * (twochains::rt::installedSize(Img) + Img.Align + 4096), CacheError) !=
      TC_OK)
    die(CacheError);
  // --sandbox: the image twice in one region (two places, statics apart),
  // once in another region.
  std::vector<std::unique_ptr<twochains::rt::SandboxRegion>> Regions2;
  static const char *const Where[] = {"sandboxed", "sandboxed, same region, second place",
                                      "sandboxed, another region"};
  for (int K = 0; Sandboxed && K < 3; ++K) {
    if (K != 1)
      Regions2.push_back(std::make_unique<twochains::rt::SandboxRegion>());
    twochains::rt::SandboxRegion &S = *Regions2.back();
    std::string Error;
    twochains::rt::SandboxedImage Installed;
    if ((K != 1 && S.create(Error) != TC_OK) || S.install(Img, Installed, Error) != TC_OK)
      die(Error);
    for (size_t I = 0; I < Regions.size(); ++I)
      std::memcpy(Regions[I].Addr, Initial[I].data(), Regions[I].Size);
    Outcome O;
    O.Payload = Payload;
    std::printf("--- %s\n", Where[K]);
    std::fflush(stdout);
    auto Hold = twochains::rt::SandboxRegion::hold();
    uint64_t Start = nowNs();
    for (int R = 0; R < Repeat; ++R)
      if (S.run(Installed, nullptr, O.Payload.data(), O.Payload.size(), Error) != TC_OK)
        die(Error);
    printTime(Time, nowNs() - Start, Repeat);
    for (const StateRegion &R : Regions)
      O.State.emplace_back(R.Addr, R.Addr + R.Size);
    Results.push_back(std::move(O));
  }
  for (int K = 0; !Sandboxed && K < 2; ++K) {
    Places.push_back(place(Cache, Img, uint64_t(K + 1)));
    Placed &P = Places.back();
    Results.push_back(Run(reinterpret_cast<EntryFn>(const_cast<uint8_t *>(P.Base) + Img.Entry),
                          K == 0 ? "injected" : "injected, elsewhere"));
  }
  if (LocalEntry)
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
  if (!Status) {
    // What the jam left in the payload, for tests that check the values.
    std::printf("payload:");
    for (size_t I = 0; I < std::min<size_t>(Results[0].Payload.size(), 64); ++I)
      std::printf("%s%02x", I % 4 ? "" : " ", Results[0].Payload[I]);
    std::printf("\n");
  }
  return Status;
}
