//===- Auth.cpp -----------------------------------------------------------===//
#include "wire/Auth.h"
#include "wire/Formats.h"
#include "twochains/twochains.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
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

void hmacSha256(const JobKey &Key, std::initializer_list<MacPart> Parts, uint8_t Out[MacSize]) {
  uint8_t Block[64] = {};
  if (Key.Bytes.size() > sizeof Block) {
    Sha256 H;
    H.update(Key.Bytes.data(), Key.Bytes.size());
    H.digest(Block);
  } else if (!Key.Bytes.empty()) {
    std::memcpy(Block, Key.Bytes.data(), Key.Bytes.size());
  }
  uint8_t Pad[64];
  for (size_t I = 0; I < sizeof Pad; ++I)
    Pad[I] = Block[I] ^ 0x36;
  Sha256 Inner;
  Inner.update(Pad, sizeof Pad);
  for (const MacPart &P : Parts)
    Inner.update(P.Data, P.Size);
  uint8_t InnerDigest[32];
  Inner.digest(InnerDigest);
  for (size_t I = 0; I < sizeof Pad; ++I)
    Pad[I] = Block[I] ^ 0x5c;
  Sha256 Outer;
  Outer.update(Pad, sizeof Pad);
  Outer.update(InnerDigest, sizeof InnerDigest);
  Outer.digest(Out);
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
