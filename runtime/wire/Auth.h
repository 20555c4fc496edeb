//===- Auth.h - The job's secret and the MACs of the handshake ------------===//
//
// Peers prove to each other that they hold the job's secret before either
// parses what the other offers (docs/security.md):
//
//   client -> server  AUTH       client nonce Nc
//   server -> client  CHALLENGE  server nonce Ns, HMAC(K, "server" Nc Ns)
//   client -> server  HELLO      HMAC(K, "hello" Nc Ns offer), offer
//   server -> client  WELCOME    HMAC(K, "welcome" Nc Ns offer), offer
//
// Both nonces are fresh, so no message of one handshake is accepted in
// another; the labels differ, so no message can be reflected back as
// another. The secret itself never travels. Without a key the MACs are
// keyed with nothing: peers still agree, but prove nothing. The key proves
// membership, not which member: a job's rank proves its rank with a
// key of its own (wireup/RankProof.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_AUTH_H
#define TWOCHAINS_RUNTIME_AUTH_H

#include "twochains/status.h"
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

struct tc_context_params;

namespace twochains::rt {

constexpr size_t NonceSize = 32;
constexpr size_t MacSize = 32;
constexpr size_t MinKeySize = 16;
constexpr size_t MaxKeySize = 4096;

/// The per-job secret (empty: none was given).
struct JobKey {
  std::vector<uint8_t> Bytes;
  std::string Source; // where it came from, for messages: never the key
  bool present() const { return !Bytes.empty(); }
};

/// Finds the key: the parameters' key or key_file, else the file named by
/// TC_KEY_FILE, else the bytes of TC_KEY. A key file must be readable by
/// its owner alone. Error says what is wrong; Out is set only on TC_OK
/// (also when there is no key at all).
tc_status_t loadJobKey(const tc_context_params *Params, JobKey &Out, std::string &Error);

struct MacPart {
  const void *Data;
  size_t Size;
};

/// HMAC-SHA256 (RFC 2104) of the concatenated parts, by OpenSSL's
/// libcrypto. False if libcrypto failed: Out is then random, so it matches
/// no MAC a peer sends and no other failed one.
bool hmacSha256(const JobKey &Key, std::initializer_list<MacPart> Parts, uint8_t Out[MacSize]);

/// Compares without an early exit, so the time taken says nothing about
/// where a forged MAC first differs.
bool equalMacs(const uint8_t *A, const uint8_t *B);

/// Fresh random bytes from the kernel; false if it has none to give.
bool randomNonce(uint8_t Out[NonceSize]);

} // namespace twochains::rt

#endif
