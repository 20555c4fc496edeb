//===- Auth.cpp -----------------------------------------------------------===//
#include "wire/Auth.h"
#include "wire/Formats.h"
#include "twochains/twochains.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

namespace twochains::rt {

static tc_status_t keyFromFile(const std::string &Path, JobKey &Out, std::string &Error) {
  int Fd = open(Path.c_str(), O_RDONLY | O_CLOEXEC);
  if (Fd < 0) {
    Error = "key file " + Path + ": " + std::strerror(errno);
    return TC_ERR_AUTH;
  }
  struct stat St;
  if (fstat(Fd, &St) != 0 || !S_ISREG(St.st_mode)) {
    close(Fd);
    Error = "key file " + Path + ": not a regular file";
    return TC_ERR_AUTH;
  }
  if (St.st_mode & 077) {
    close(Fd);
    char Mode[8];
    std::snprintf(Mode, sizeof Mode, "%04o", unsigned(St.st_mode & 07777));
    Error = "key file " + Path + " is accessible by others (mode " + Mode +
            "): make it readable by its owner alone (chmod 600)";
    return TC_ERR_AUTH;
  }
  if (St.st_size > off_t(MaxKeySize) + 2) {
    close(Fd);
    Error = "key file " + Path + " holds " + std::to_string(St.st_size) +
            " bytes; a key has at most " + std::to_string(MaxKeySize);
    return TC_ERR_AUTH;
  }
  std::vector<uint8_t> Bytes(size_t(St.st_size));
  ssize_t N = Bytes.empty() ? 0 : read(Fd, Bytes.data(), Bytes.size());
  close(Fd);
  if (N != ssize_t(Bytes.size())) {
    Error = "key file " + Path + ": cannot read it";
    return TC_ERR_AUTH;
  }
  // One trailing newline, as `openssl rand -hex 32 > key` writes, is not key.
  while (!Bytes.empty() && (Bytes.back() == '\n' || Bytes.back() == '\r'))
    Bytes.pop_back();
  Out.Bytes = std::move(Bytes);
  Out.Source = "key file " + Path;
  return TC_OK;
}

tc_status_t loadJobKey(const tc_context_params *Params, JobKey &Out, std::string &Error) {
  JobKey Key;
  tc_status_t St = TC_OK;
  if (Params && Params->version >= 3 && Params->key_size) {
    if (!Params->key) {
      Error = "tc_context_params_t: key_size is set but key is NULL";
      return TC_ERR_INVALID_PARAM;
    }
    auto *P = static_cast<const uint8_t *>(Params->key);
    Key.Bytes.assign(P, P + Params->key_size);
    Key.Source = "the context parameters' key";
  } else if (Params && Params->version >= 3 && Params->key_file) {
    St = keyFromFile(Params->key_file, Key, Error);
  } else if (const char *File = std::getenv("TC_KEY_FILE"); File && *File) {
    St = keyFromFile(File, Key, Error);
  } else if (const char *Text = std::getenv("TC_KEY"); Text && *Text) {
    Key.Bytes.assign(Text, Text + std::strlen(Text));
    Key.Source = "TC_KEY";
  }
  if (St != TC_OK)
    return St;
  if (Key.present() && (Key.Bytes.size() < MinKeySize || Key.Bytes.size() > MaxKeySize)) {
    Error = Key.Source + " holds " + std::to_string(Key.Bytes.size()) +
            " bytes; a key has " + std::to_string(MinKeySize) + " to " +
            std::to_string(MaxKeySize) + " (for example: openssl rand -hex 32)";
    return TC_ERR_AUTH;
  }
  Out = std::move(Key);
  return TC_OK;
}

namespace {

/// Fetched once: EVP_MAC_fetch looks the implementation up in the
/// provider's tables.
EVP_MAC *hmacAlgorithm() {
  static EVP_MAC *Mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  return Mac;
}

/// This thread's HMAC-SHA256 context, keyed with the key of its last MAC.
/// A context keyed afresh costs three times what one re-initialised with
/// its key costs (docs/security.md, "Cryptography"), and a process MACs
/// with its job's one key. The context holds the key (as the job's
/// context does) until the thread MACs with another or ends.
struct KeyedMac {
  EVP_MAC_CTX *Ctx = nullptr;
  std::vector<uint8_t> Key;

  KeyedMac() = default;
  KeyedMac(const KeyedMac &) = delete;
  KeyedMac &operator=(const KeyedMac &) = delete;
  ~KeyedMac() { reset(); }

  void reset() {
    EVP_MAC_CTX_free(Ctx);
    Ctx = nullptr;
    OPENSSL_cleanse(Key.data(), Key.size());
    Key.clear();
  }

  EVP_MAC_CTX *keyedWith(const std::vector<uint8_t> &Bytes) {
    if (Ctx && Key == Bytes)
      return EVP_MAC_init(Ctx, nullptr, 0, nullptr) == 1 ? Ctx : nullptr;
    reset();
    Ctx = hmacAlgorithm() ? EVP_MAC_CTX_new(hmacAlgorithm()) : nullptr;
    if (!Ctx)
      return nullptr;
    char Digest[] = "SHA256";
    OSSL_PARAM Params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, Digest, 0),
                           OSSL_PARAM_construct_end()};
    // No key is a key of no bytes; OpenSSL wants a pointer even then.
    static const uint8_t None = 0;
    if (EVP_MAC_init(Ctx, Bytes.empty() ? &None : Bytes.data(), Bytes.size(), Params) != 1) {
      reset();
      return nullptr;
    }
    Key = Bytes;
    return Ctx;
  }
};

} // namespace

bool hmacSha256(const JobKey &Key, std::initializer_list<MacPart> Parts, uint8_t Out[MacSize]) {
  static thread_local KeyedMac Mac;
  EVP_MAC_CTX *Ctx = Mac.keyedWith(Key.Bytes);
  bool OK = Ctx != nullptr;
  for (const MacPart &P : Parts)
    OK = OK &&
         (P.Size == 0 || EVP_MAC_update(Ctx, static_cast<const uint8_t *>(P.Data), P.Size) == 1);
  size_t Size = 0;
  OK = OK && EVP_MAC_final(Ctx, Out, &Size, MacSize) == 1 && Size == MacSize;
  if (OK)
    return true;
  // Fail closed: the callers compare MACs and do not look at this result.
  // Two fresh random MACs never match each other or a peer's, so a
  // libcrypto that cannot MAC refuses every handshake rather than
  // accepting one on a MAC both sides left zero.
  static_assert(MacSize == NonceSize, "a MAC is filled like a nonce");
  if (!randomNonce(Out))
    std::abort();
  Mac.reset();
  return false;
}

bool equalMacs(const uint8_t *A, const uint8_t *B) {
  uint8_t D = 0;
  for (size_t I = 0; I < MacSize; ++I)
    D |= A[I] ^ B[I];
  return D == 0;
}

bool randomNonce(uint8_t Out[NonceSize]) {
  size_t Got = 0;
  while (Got < NonceSize) {
    ssize_t N = getrandom(Out + Got, NonceSize - Got, 0);
    if (N < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    Got += size_t(N);
  }
  return true;
}

} // namespace twochains::rt
