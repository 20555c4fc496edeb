//===- Signature.h - Ed25519 manifest signatures and trusted signers ------===//
//
// Under the `signed` code-trust policy a receiver runs only packages whose
// manifest is signed by a key it trusts (docs/packages.md, "Signing"). The
// manifest names the SHA-256 of every image and library of the package, so
// a signature over its exact bytes covers the whole package:
//
//   manifest.tcm.sig   beside manifest.tcm, one line
//                      "tc-ed25519 <64 hex public key> <128 hex signature>"
//   trusted signers    a file like ssh's authorized_keys: one signer a line,
//                      "tc-ed25519 <64 hex public key> [comment]"
//
// pkg-gen signs (--sign-key) with a key made by
// `openssl genpkey -algorithm ed25519`; the runtime and
// `twochains-pkg-gen --check-manifest --trusted-signers` verify. Ed25519
// is OpenSSL's libcrypto's. The readers trust nothing: sizes are bounded,
// every message names the file and line.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_FORMAT_SIGNATURE_H
#define TWOCHAINS_FORMAT_SIGNATURE_H

#include "FormatError.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

struct evp_pkey_st; // OpenSSL's EVP_PKEY

namespace twochains::format {

constexpr size_t Ed25519KeySize = 32, Ed25519SignatureSize = 64;

/// The key type's name in both files.
constexpr const char Ed25519KeyType[] = "tc-ed25519";
/// The largest signature file (its one line has 205 bytes), trusted-signers
/// file and line (a key and a comment), and signing key file a reader
/// accepts.
constexpr size_t ManifestSignatureMaxBytes = 4096;
constexpr size_t TrustedSignersMaxBytes = size_t(1) << 20;
constexpr size_t TrustedSignersMaxLine = 4096;
constexpr size_t SigningKeyMaxBytes = size_t(64) << 10;

/// manifest.tcm.sig: one line "tc-ed25519 <64 hex public key> <128 hex signature>\n".
struct ManifestSignature {
  std::array<uint8_t, 32> PublicKey;
  std::array<uint8_t, 64> Signature;
};

/// Parses a signature file's Text; Name (its path) starts every message.
/// Out is set only on success.
FormatError parseManifestSignature(const std::string &Text, const std::string &Name,
                                   ManifestSignature &Out, std::string &Error);

/// Reads Path (at most ManifestSignatureMaxBytes) and parses it.
FormatError readManifestSignatureFile(const std::string &Path, ManifestSignature &Out,
                                      std::string &Error);

/// The signature file's text, as pkg-gen writes it.
std::string manifestSignatureText(const ManifestSignature &S);

/// Trusted signers file, like ssh's authorized_keys: one signer per line
/// "tc-ed25519 <64 hex public key> [comment]", '#' comments and blank lines allowed.
struct TrustedSigner {
  std::array<uint8_t, 32> PublicKey;
  std::string Comment;
};

/// Parses a trusted-signers file's Text; a key listed twice is refused.
/// Out is set only on success (and may be empty: then no one is trusted).
FormatError parseTrustedSigners(const std::string &Text, const std::string &Name,
                                std::vector<TrustedSigner> &Out, std::string &Error);

/// Reads Path (at most TrustedSignersMaxBytes) and parses it.
FormatError readTrustedSignersFile(const std::string &Path, std::vector<TrustedSigner> &Out,
                                   std::string &Error);

/// True if Signature is PublicKey's Ed25519 signature of the bytes.
bool verifyEd25519(const uint8_t PublicKey[32], const void *Data, size_t Size,
                   const uint8_t Signature[64]);

/// An Ed25519 key pair made in this process (a job rank's: runtime/job),
/// its private half held by libcrypto and freed with the object: it never
/// leaves the process.
class Ed25519KeyPair {
public:
  Ed25519KeyPair() = default;
  ~Ed25519KeyPair();
  Ed25519KeyPair(const Ed25519KeyPair &) = delete;
  Ed25519KeyPair &operator=(const Ed25519KeyPair &) = delete;
  /// A fresh pair from libcrypto's random generator, replacing any held;
  /// false (and none held) if libcrypto failed.
  bool generate();
  bool present() const { return Key != nullptr; }
  /// The public half (zeros if none is held).
  const std::array<uint8_t, 32> &publicKey() const { return Public; }
  /// The signature of the bytes into Out; false (Out zeroed) if no key is
  /// held or libcrypto failed.
  bool sign(const void *Data, size_t Size, uint8_t Out[64]) const;
  /// The X25519 secret this pair shares with the holder of the Ed25519
  /// public key Peer (each key taken to its Montgomery form, as RFC 7748
  /// relates the curves): the same bytes on both sides, made by no one
  /// else. A signature costs its checker about three times what this
  /// costs each side, and two ranks that agree a secret once can prove
  /// themselves to each other with a MAC. False (Out zeroed) if no key is
  /// held, Peer is no point of the curve's large subgroup's form (the
  /// identity, or a point of small order: the secret would be zero), or
  /// libcrypto failed.
  bool agree(const uint8_t Peer[32], uint8_t Out[32]) const;

private:
  evp_pkey_st *Key = nullptr;
  /// The X25519 form of the private key, made with it.
  evp_pkey_st *Agreement = nullptr;
  std::array<uint8_t, 32> Public = {};
};

/// Signs ManifestText with the Ed25519 private key in the PEM file KeyPath (as made by
/// `openssl genpkey -algorithm ed25519 -out key.pem`); Error names the file on failure.
FormatError signManifest(const std::string &KeyPath, const std::string &ManifestText,
                         ManifestSignature &Out, std::string &Error);

/// The trusted-signers line for the key in KeyPath (private or public PEM),
/// without a newline. Comment must be one line of printable characters.
FormatError signerLine(const std::string &KeyPath, const std::string &Comment, std::string &Line,
                       std::string &Error);

/// Lower-case hex of a key, as both files write it.
std::string hexOfKey(const std::array<uint8_t, 32> &Key);

} // namespace twochains::format

#endif
