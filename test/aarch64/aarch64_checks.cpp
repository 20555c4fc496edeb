//===- aarch64_checks.cpp - The runtime's aarch64 paths, run under qemu ----===//
//
//   aarch64-checks     built for aarch64 from the runtime's sources, run by
//                      qemu-aarch64 (CTest label aarch64)
//
// - SHA-256, libcrypto's, gives the known answer at every length that
//   matters to the block and padding logic: with the ARMv8 SHA2
//   instructions (libcrypto uses them when HWCAP reports them; qemu does)
//   and, run again with OPENSSL_armcap=0, with its portable code.
// - Ed25519, libcrypto's: RFC 8032's vector, a manifest signed and
//   verified, and a changed one refused.
// - Code installed through the code cache's writable alias runs from its
//   read+execute alias after the cache maintenance installImage does
//   (DC CVAU, IC IVAU by line as CTR_EL0 says, DSB, ISB: __clear_cache),
//   and new code installed at the same place runs the new instructions;
//   no mapping of the process is writable and executable.
// - The WFE waiter returns once another thread writes the watched word,
//   and on its own (the generic timer's event stream) when none does.
// Prints one line per check and "aarch64 checks: PASSED".
//
//===----------------------------------------------------------------------===//
#include "image/CodeCache.h"
#include "image/ImageInstall.h"
#include "Sha256.h"
#include "Signature.h"
#include "base/Wait.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <sys/auxv.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace twochains::rt;
using namespace twochains::format;

static int Failures = 0;

static void check(bool OK, const std::string &What) {
  std::printf("%s: %s\n", OK ? "ok" : "FAILED", What.c_str());
  Failures += !OK;
}

static std::string hexOf(const uint8_t *P, size_t N) {
  static const char D[] = "0123456789abcdef";
  std::string S;
  for (size_t I = 0; I < N; ++I)
    S += {D[P[I] >> 4], D[P[I] & 15]};
  return S;
}

static void checkSha256() {
#ifdef HWCAP_SHA2
  bool Reported = getauxval(AT_HWCAP) & HWCAP_SHA2;
#else
  bool Reported = false;
#endif
  const char *Cap = std::getenv("OPENSSL_armcap");
  std::string Path = Cap ? std::string("OPENSSL_armcap=") + Cap + ": libcrypto's portable code"
                         : std::string("HWCAP_SHA2 ") + (Reported ? "set" : "clear") +
                               ": libcrypto's ARMv8 SHA2 code where set";
  // The hashes of 225 lengths, hashed: Python's hashlib's answer.
  Sha256 All;
  std::vector<uint8_t> Bytes;
  int Lengths = 0;
  for (size_t N = 0; N <= 1100; N += (N < 200 ? 1 : 37), ++Lengths) {
    Bytes.resize(N);
    for (size_t I = 0; I < N; ++I)
      Bytes[I] = uint8_t(I * 31 + N);
    Sha256 H;
    H.update(Bytes.data(), Bytes.size());
    uint8_t D[32];
    H.digest(D);
    All.update(D, sizeof D);
  }
  check(All.hex() == "ad051bc039f1b281d36233a0757a1ef3fb5f00152731e78be8fc4ed4c6322579",
        "SHA-256 at " + std::to_string(Lengths) + " lengths matches the known answer (" + Path +
            ")");
  Sha256 Abc;
  Abc.update(std::string("abc"));
  check(Abc.hex() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        "SHA-256(\"abc\")");
}

/// RFC 8032's test 2, and a signature made and checked here: libcrypto's
/// Ed25519 for aarch64, as a receiver under `signed` verifies.
static void checkEd25519() {
  auto Bytes = [](const std::string &Hex) {
    std::vector<uint8_t> B;
    for (size_t I = 0; I + 1 < Hex.size(); I += 2)
      B.push_back(uint8_t(std::stoul(Hex.substr(I, 2), nullptr, 16)));
    return B;
  };
  auto Pk = Bytes("3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c");
  auto Sig = Bytes("92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da08"
                   "5ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00");
  const uint8_t Msg = 0x72, Other = 0x73;
  check(verifyEd25519(Pk.data(), &Msg, 1, Sig.data()) &&
            !verifyEd25519(Pk.data(), &Other, 1, Sig.data()),
        "Ed25519: RFC 8032 test 2 verifies, and not for another message");
  char Dir[] = "/tmp/tc-aarch64-XXXXXX";
  if (!mkdtemp(Dir)) {
    check(false, "Ed25519: a temporary folder");
    return;
  }
  std::string Key = std::string(Dir) + "/key.pem";
  std::ofstream(Key) << "-----BEGIN PRIVATE KEY-----\n"
                        "MC4CAQAwBQYDK2VwBCIEIITkn5hBSaKgMO7PqN9dYZDRad1acQ8ZVzgweUqoJbuG\n"
                        "-----END PRIVATE KEY-----\n";
  const std::string Manifest = "twochains-manifest 1\npackage p\n";
  ManifestSignature S;
  std::string Error;
  bool Signed = signManifest(Key, Manifest, S, Error) == FormatError::None;
  std::remove(Key.c_str());
  rmdir(Dir);
  check(
      Signed &&
          hexOf(S.PublicKey.data(), 32) ==
              "5a2f6a8acf2e4345507bb0e60160b2157fe0ad086a5269ccadb3171f7353fc33" &&
          verifyEd25519(S.PublicKey.data(), Manifest.data(), Manifest.size(), S.Signature.data()) &&
          !verifyEd25519(S.PublicKey.data(), Manifest.data(), Manifest.size() - 1,
                         S.Signature.data()),
      "Ed25519: a manifest signed here verifies, and not once changed" +
          (Error.empty() ? "" : " (" + Error + ")"));
}

/// An image of one function that returns Value: mov w0, #Value; ret; then
/// GOTP, in one line.
static JamImageData returnImage(uint16_t Value) {
  JamImageData Image;
  Image.Bytes.assign(64, 0);
  uint32_t Mov = 0x52800000u | (uint32_t(Value) << 5), Ret = 0xd65f03c0u;
  std::memcpy(Image.Bytes.data(), &Mov, 4);
  std::memcpy(Image.Bytes.data() + 4, &Ret, 4);
  Image.GOTP = 8;
  Image.TextSize = 64;
  Image.CodeSize = 8;
  return Image;
}

static int writableExecutableMappings() {
  std::ifstream Maps("/proc/self/maps");
  std::string Line;
  int N = 0;
  while (std::getline(Maps, Line)) {
    size_t Space = Line.find(' ');
    if (Space != std::string::npos && Line.compare(Space + 1, 4, "rwxp") == 0)
      ++N;
    else if (Space != std::string::npos && Line.compare(Space + 1, 4, "rwxs") == 0)
      ++N;
  }
  return N;
}

static void checkInstall() {
  CodeArena Arena;
  std::string Error;
  if (Arena.create(1 << 16, Error) != TC_OK) {
    check(false, "the code arena: " + Error);
    return;
  }
  void *Table[1] = {nullptr};
  const size_t At = 64 * 5; // not page-aligned
  using Fn = int (*)();
  auto Run = reinterpret_cast<Fn>(const_cast<uint8_t *>(Arena.executable() + At));
  installImage(Arena.writable() + At, Arena.executable() + At, Arena.data() + At,
               returnImage(42), Table, true);
  int First = Run();
  installImage(Arena.writable() + At, Arena.executable() + At, Arena.data() + At,
               returnImage(7), Table, true);
  int Second = Run();
  check(First == 42, "code installed through the writable alias runs (" +
                         std::to_string(First) + ")");
  // QEMU's user mode ignores IC IVAU and sees no write made through
  // another mapping of the page: it keeps running its old translation.
  // Real hardware runs the new code; under QEMU this is not checkable.
  if (std::getenv("TC_UNDER_QEMU"))
    std::printf("not checkable under qemu: code installed again in its place runs anew "
                "(qemu ran %d)\n", Second);
  else
    check(Second == 7, "code installed again in its place runs anew (" +
                           std::to_string(Second) + ")");
  check(writableExecutableMappings() == 0, "no mapping is writable and executable");
}

static void checkWfe() {
  std::unique_ptr<Waiter> W = createWaiter(TC_WAIT_LOWPOWER);
  check(W && std::strcmp(W->name(), "wfe") == 0,
        std::string("the low-power wait is ") + (W ? W->name() : "missing"));
  if (!W)
    return;
  alignas(64) static volatile uint64_t Word = 0;
  // Nothing writes: each wait still returns (the event stream bounds it).
  auto Start = std::chrono::steady_clock::now();
  for (int I = 0; I < 100; ++I)
    W->wait(&Word);
  double Idle = std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
  check(Idle < 10, "100 waits with no write return (" + std::to_string(Idle) + " s)");
  // Another thread writes: the waiting loop sees it.
  std::atomic<bool> Seen{false};
  std::thread Writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    Word = 1;
  });
  Start = std::chrono::steady_clock::now();
  while (!Word && std::chrono::steady_clock::now() - Start < std::chrono::seconds(10))
    W->wait(&Word);
  Seen = Word == 1;
  Writer.join();
  check(Seen.load(), "a wait on the word returns once another thread writes it");
}

int main() {
  checkSha256();
  checkEd25519();
  checkInstall();
  checkWfe();
  std::printf("aarch64 checks: %s\n", Failures ? "FAILED" : "PASSED");
  return Failures != 0;
}
