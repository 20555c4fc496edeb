//===- crypto_bench.cpp - SHA-256 of images, the handshake's HMAC ---------===//
//
// What the runtime's cryptography costs where it is paid: the SHA-256 of a
// jam image (the code cache hashes every image it installs; 4 KiB and
// 64 KiB images, and a 200-byte one), and one handshake MAC (HMAC-SHA256
// of ~200 bytes: label, both nonces and an offer), and where the tree has
// them, the Ed25519 check a `signed` receiver makes of a package's
// manifest signature (once per package), and the X25519 agreement two
// ranks make once per pair (where the tree has it). Built from the sources
// of a tree, so bench/run-crypto-bench.sh builds it alike against this
// tree (OpenSSL's libcrypto) and an older one (the hand-written code) and
// compares (docs/security.md, "Cryptography").
//
//   crypto-bench [--ms N]   prints "<case> <median ns/op> <min ns/op>"
//
//===----------------------------------------------------------------------===//
#include "Sha256.h"
#include "wire/Auth.h"
#if __has_include("Signature.h")
#include "Signature.h" // not in trees from before Ed25519 signatures
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

using namespace twochains;
using Clock = std::chrono::steady_clock;

template <typename K, typename = void> struct HasAgree : std::false_type {};
template <typename K>
struct HasAgree<K, std::void_t<decltype(std::declval<const K &>().agree(nullptr, nullptr))>>
    : std::true_type {};

/// Keeps the compiler from dropping what is measured.
static volatile uint8_t Sink;

/// Median and minimum ns per call of Fn over 15 batches, each about Ms/15
/// milliseconds long.
static void measure(const char *Name, unsigned Ms, const std::function<void()> &Fn) {
  size_t PerBatch = 1;
  for (;;) { // batch size: a batch takes about Ms/15 ms
    auto T0 = Clock::now();
    for (size_t I = 0; I < PerBatch; ++I)
      Fn();
    double Took = std::chrono::duration<double, std::milli>(Clock::now() - T0).count();
    if (Took >= Ms / 15.0 || PerBatch > (size_t(1) << 30))
      break;
    PerBatch *= 2;
  }
  std::vector<double> Ns;
  for (int B = 0; B < 15; ++B) {
    auto T0 = Clock::now();
    for (size_t I = 0; I < PerBatch; ++I)
      Fn();
    Ns.push_back(std::chrono::duration<double, std::nano>(Clock::now() - T0).count() /
                 double(PerBatch));
  }
  std::sort(Ns.begin(), Ns.end());
  std::printf("%-22s %10.1f %10.1f\n", Name, Ns[Ns.size() / 2], Ns.front());
}

/// A pair key as two ranks agree it at their first handshake (each side
/// once per other rank): the X25519 secret with another rank's key. Only
/// where the tree's key pairs agree (a template, so that older trees build).
template <typename KeyPair> static void measureAgreement(unsigned Ms) {
  if constexpr (HasAgree<KeyPair>::value) {
    KeyPair Mine, Theirs;
    if (!Mine.generate() || !Theirs.generate()) {
      std::fprintf(stderr, "crypto-bench: cannot make Ed25519 keys\n");
      std::exit(1);
    }
    measure("x25519-agree", Ms, [&] {
      uint8_t Secret[32];
      Sink = Mine.agree(Theirs.publicKey().data(), Secret) ? Secret[0] : 0;
    });
  }
}

int main(int Argc, char **Argv) {
  unsigned Ms = 1500;
  for (int I = 1; I < Argc; ++I) {
    if (std::strcmp(Argv[I], "--ms") == 0 && I + 1 < Argc)
      Ms = unsigned(std::atoi(Argv[++I]));
    else {
      std::fprintf(stderr, "usage: crypto-bench [--ms N]\n");
      return 2;
    }
  }
  std::vector<uint8_t> Image(65536);
  for (size_t I = 0; I < Image.size(); ++I)
    Image[I] = uint8_t(I * 131 + 7);
  std::printf("%-22s %10s %10s\n", "case", "median_ns", "min_ns");
  for (size_t Size : {size_t(200), size_t(4096), size_t(65536)}) {
    std::string Name = "sha256-" + (Size >= 1024 ? std::to_string(Size / 1024) + "KiB"
                                                 : std::to_string(Size) + "B");
    measure(Name.c_str(), Ms, [&] {
      format::Sha256 H;
      H.update(Image.data(), Size);
      uint8_t D[32];
      H.digest(D);
      Sink = D[0];
    });
  }

  // A MAC as the handshake makes it: the job's 32-byte key, a label, the
  // two nonces and an offer's 130 bytes.
  rt::JobKey Key, Other;
  Key.Bytes.assign(32, 0x5a);
  Other.Bytes.assign(32, 0xa5);
  static const char Label[] = "hello";
  uint8_t Nc[rt::NonceSize], Ns[rt::NonceSize], Offer[130], Mac[rt::MacSize];
  std::memset(Nc, 1, sizeof Nc);
  std::memset(Ns, 2, sizeof Ns);
  std::memset(Offer, 3, sizeof Offer);
  auto MacWith = [&](const rt::JobKey &K) {
    rt::hmacSha256(
        K, {{Label, sizeof Label}, {Nc, sizeof Nc}, {Ns, sizeof Ns}, {Offer, sizeof Offer}}, Mac);
    Sink = Mac[0];
  };
  measure("hmac-200B", Ms, [&] { MacWith(Key); });
  // Two keys in turn: every MAC with a key other than the last one's.
  bool Flip = false;
  measure("hmac-200B-key-changes", Ms, [&] {
    MacWith(Flip ? Other : Key);
    Flip = !Flip;
  });
#if __has_include("Signature.h")
  // RFC 8032, section 7.1, test 1 (an empty message: the cost is the
  // curve arithmetic; hashing a manifest adds what SHA-512 of it costs).
  const uint8_t Pk[32] = {0xd7, 0x5a, 0x98, 0x01, 0x82, 0xb1, 0x0a, 0xb7, 0xd5, 0x4b, 0xfe,
                          0xd3, 0xc9, 0x64, 0x07, 0x3a, 0x0e, 0xe1, 0x72, 0xf3, 0xda, 0xa6,
                          0x23, 0x25, 0xaf, 0x02, 0x1a, 0x68, 0xf7, 0x07, 0x51, 0x1a};
  const uint8_t Sig[64] = {0xe5, 0x56, 0x43, 0x00, 0xc3, 0x60, 0xac, 0x72, 0x90, 0x86, 0xe2,
                           0xcc, 0x80, 0x6e, 0x82, 0x8a, 0x84, 0x87, 0x7f, 0x1e, 0xb8, 0xe5,
                           0xd9, 0x74, 0xd8, 0x73, 0xe0, 0x65, 0x22, 0x49, 0x01, 0x55, 0x5f,
                           0xb8, 0x82, 0x15, 0x90, 0xa3, 0x3b, 0xac, 0xc6, 0x1e, 0x39, 0x70,
                           0x1c, 0xf9, 0xb4, 0x6b, 0xd2, 0x5b, 0xf5, 0xf0, 0x59, 0x5b, 0xbe,
                           0x24, 0x65, 0x51, 0x41, 0x43, 0x8e, 0x7a, 0x10, 0x0b};
  if (!format::verifyEd25519(Pk, "", 0, Sig)) {
    std::fprintf(stderr, "crypto-bench: RFC 8032's test 1 does not verify\n");
    return 1;
  }
  measure("ed25519-verify", Ms, [&] { Sink = format::verifyEd25519(Pk, "", 0, Sig); });
#endif
#if __has_include("Signature.h")
  measureAgreement<format::Ed25519KeyPair>(Ms);
#endif
  return 0;
}
