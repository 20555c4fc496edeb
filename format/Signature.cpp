//===- Signature.cpp - Ed25519 manifest signatures and trusted signers ----===//
#include "Signature.h"
#include "JamImageFormat.h"

#include <algorithm>
#include <memory>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

namespace twochains::format {

namespace {

int hexDigit(char C) {
  if (C >= '0' && C <= '9')
    return C - '0';
  if (C >= 'a' && C <= 'f')
    return C - 'a' + 10;
  if (C >= 'A' && C <= 'F')
    return C - 'A' + 10;
  return -1;
}

/// Exactly 2 * N hex digits, either case, into Out.
bool fromHex(const std::string &S, uint8_t *Out, size_t N) {
  if (S.size() != 2 * N)
    return false;
  for (size_t I = 0; I < N; ++I) {
    int Hi = hexDigit(S[2 * I]), Lo = hexDigit(S[2 * I + 1]);
    if (Hi < 0 || Lo < 0)
      return false;
    Out[I] = uint8_t(Hi << 4 | Lo);
  }
  return true;
}

std::string toHex(const uint8_t *P, size_t N) {
  static const char Digits[] = "0123456789abcdef";
  std::string S;
  S.reserve(2 * N);
  for (size_t I = 0; I < N; ++I) {
    S.push_back(Digits[P[I] >> 4]);
    S.push_back(Digits[P[I] & 0xf]);
  }
  return S;
}

/// For messages: a word as typed, but never a screenful.
std::string quoted(const std::string &S) {
  return "'" + (S.size() > 40 ? S.substr(0, 37) + "..." : S) + "'";
}

/// The lines of Text, each without its '\n' (and a '\r' before it); a last
/// line without '\n' counts. Error names the first line longer than
/// MaxLine or holding a control character other than a tab.
bool splitLines(const std::string &Text, size_t MaxLine, std::vector<std::string> &Lines,
                size_t &BadLine, std::string &Why) {
  size_t Pos = 0;
  while (Pos < Text.size()) {
    size_t NL = Text.find('\n', Pos);
    size_t End = NL == std::string::npos ? Text.size() : NL;
    BadLine = Lines.size() + 1;
    if (End - Pos > MaxLine) {
      Why = "line is longer than the limit of " + std::to_string(MaxLine) + " bytes";
      return false;
    }
    std::string Line = Text.substr(Pos, End - Pos);
    if (!Line.empty() && Line.back() == '\r')
      Line.pop_back();
    for (unsigned char C : Line)
      if ((C < 0x20 && C != '\t') || C == 0x7f) {
        Why = "control character " + std::to_string(unsigned(C)) + " in the line";
        return false;
      }
    Lines.push_back(std::move(Line));
    Pos = NL == std::string::npos ? Text.size() : NL + 1;
  }
  return true;
}

bool isBlank(char C) { return C == ' ' || C == '\t'; }

/// The next blank-separated word of Line from Pos, or "" at its end.
std::string nextWord(const std::string &Line, size_t &Pos) {
  while (Pos < Line.size() && isBlank(Line[Pos]))
    ++Pos;
  size_t Begin = Pos;
  while (Pos < Line.size() && !isBlank(Line[Pos]))
    ++Pos;
  return Line.substr(Begin, Pos - Begin);
}

/// "tc-ed25519 <64 hex>" at the start of Line, into Key; Pos after it.
bool keyOfLine(const std::string &Line, size_t &Pos, std::array<uint8_t, 32> &Key,
               std::string &Why) {
  std::string Type = nextWord(Line, Pos);
  if (Type != Ed25519KeyType) {
    Why = "unknown key type " + quoted(Type) + ": expected " + Ed25519KeyType;
    return false;
  }
  std::string Hex = nextWord(Line, Pos);
  if (!fromHex(Hex, Key.data(), Key.size())) {
    Why = "the public key " + quoted(Hex) + " is not " + std::to_string(2 * Key.size()) +
          " hex digits";
    return false;
  }
  return true;
}

struct PkeyFree {
  void operator()(EVP_PKEY *K) const { EVP_PKEY_free(K); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX *C) const { EVP_MD_CTX_free(C); }
};
struct BioFree {
  void operator()(BIO *B) const { BIO_free(B); }
};
struct PkeyCtxFree {
  void operator()(EVP_PKEY_CTX *C) const { EVP_PKEY_CTX_free(C); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;
using MdCtx = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;

/// libcrypto's reason for its last failure, for messages; empties the
/// thread's error queue, so no failure is reported twice.
std::string cryptoReason() {
  unsigned long Code = ERR_peek_last_error();
  ERR_clear_error();
  if (!Code)
    return "";
  const char *Reason = ERR_reason_error_string(Code);
  return Reason ? Reason : "error " + std::to_string(Code);
}

/// Never asks: a build must not wait on a terminal for a passphrase.
int refusePassphrase(char *, int, int, void *Asked) {
  *static_cast<bool *>(Asked) = true;
  return -1;
}

/// The PEM key in Path: private if it holds one, else (Public) a public
/// one. Error names the file and says how to make a usable key.
FormatError readKey(const std::string &Path, bool AllowPublic, Pkey &Out, std::string &Error) {
  const std::string HowTo = "make one with: openssl genpkey -algorithm ed25519 -out " + Path;
  std::vector<uint8_t> Bytes;
  std::string Why;
  if (!readFileBytes(Path, Bytes, Why, SigningKeyMaxBytes)) {
    Error = Path + ": " + Why;
    return FormatError::Io;
  }
  auto Read = [&](bool Private, bool &Asked) {
    std::unique_ptr<BIO, BioFree> Bio(BIO_new_mem_buf(Bytes.data(), int(Bytes.size())));
    if (!Bio)
      return Pkey();
    return Pkey(Private ? PEM_read_bio_PrivateKey(Bio.get(), nullptr, refusePassphrase, &Asked)
                        : PEM_read_bio_PUBKEY(Bio.get(), nullptr, refusePassphrase, &Asked));
  };
  bool Asked = false;
  Pkey Key = Read(true, Asked);
  // libcrypto's reasons ("unsupported", "no start line") say less than
  // what follows.
  cryptoReason();
  if (!Key && Asked) {
    Error = Path + ": the key is encrypted; signing needs it unencrypted (" + HowTo + ")";
    return FormatError::BadKey;
  }
  if (!Key) {
    bool PublicAsked = false;
    Pkey Public = Read(false, PublicAsked);
    cryptoReason();
    if (Public && !AllowPublic) {
      Error = Path + ": a public key; signing needs the private key";
      return FormatError::BadKey;
    }
    if (!Public) {
      Error = Path + ": not a PEM " + (AllowPublic ? "private or public" : "private") + " key; " +
              HowTo;
      return FormatError::BadKey;
    }
    Key = std::move(Public);
  }
  if (EVP_PKEY_get_base_id(Key.get()) != EVP_PKEY_ED25519) {
    const char *Type = EVP_PKEY_get0_type_name(Key.get());
    Error = Path + ": key type " + (Type ? Type : "unknown") + ", not Ed25519; " + HowTo;
    return FormatError::BadKey;
  }
  Out = std::move(Key);
  return FormatError::None;
}

bool rawPublicKey(EVP_PKEY *Key, std::array<uint8_t, 32> &Out) {
  size_t Size = Out.size();
  bool OK = EVP_PKEY_get_raw_public_key(Key, Out.data(), &Size) == 1 && Size == Out.size();
  cryptoReason();
  return OK;
}

} // namespace

std::string hexOfKey(const std::array<uint8_t, 32> &Key) { return toHex(Key.data(), Key.size()); }

FormatError parseManifestSignature(const std::string &Text, const std::string &Name,
                                   ManifestSignature &Out, std::string &Error) {
  size_t LineNo = 0;
  auto Fail = [&](const std::string &Msg) {
    Error = Name + (LineNo ? ":" + std::to_string(LineNo) : "") + ": " + Msg;
    return FormatError::BadSignature;
  };
  if (Text.size() > ManifestSignatureMaxBytes)
    return Fail("signature file of " + std::to_string(Text.size()) +
                " bytes is larger than the limit of " + std::to_string(ManifestSignatureMaxBytes));
  std::vector<std::string> Lines;
  std::string Why;
  if (!splitLines(Text, ManifestSignatureMaxBytes, Lines, LineNo, Why))
    return Fail(Why);
  LineNo = 0;
  if (Lines.empty())
    return Fail(std::string("empty; expected one line '") + Ed25519KeyType +
                " <public key> <signature>'");
  for (size_t I = 1; I < Lines.size(); ++I)
    if (!Lines[I].empty()) {
      LineNo = I + 1;
      return Fail("a signature file has one line");
    }
  LineNo = 1;
  ManifestSignature S;
  size_t Pos = 0;
  if (!keyOfLine(Lines[0], Pos, S.PublicKey, Why))
    return Fail(Why);
  std::string Hex = nextWord(Lines[0], Pos);
  if (!fromHex(Hex, S.Signature.data(), S.Signature.size()))
    return Fail("the signature " + quoted(Hex) + " is not " +
                std::to_string(2 * S.Signature.size()) + " hex digits");
  std::string Extra = nextWord(Lines[0], Pos);
  if (!Extra.empty())
    return Fail("unexpected " + quoted(Extra) + " after the signature");
  Out = S;
  return FormatError::None;
}

FormatError readManifestSignatureFile(const std::string &Path, ManifestSignature &Out,
                                      std::string &Error) {
  std::vector<uint8_t> Bytes;
  std::string Why;
  if (!readFileBytes(Path, Bytes, Why, ManifestSignatureMaxBytes)) {
    Error = Path + ": " + Why;
    return FormatError::Io;
  }
  return parseManifestSignature(std::string(Bytes.begin(), Bytes.end()), Path, Out, Error);
}

std::string manifestSignatureText(const ManifestSignature &S) {
  return std::string(Ed25519KeyType) + " " + hexOfKey(S.PublicKey) + " " +
         toHex(S.Signature.data(), S.Signature.size()) + "\n";
}

FormatError parseTrustedSigners(const std::string &Text, const std::string &Name,
                                std::vector<TrustedSigner> &Out, std::string &Error) {
  size_t LineNo = 0;
  auto Fail = [&](const std::string &Msg) {
    Error = Name + (LineNo ? ":" + std::to_string(LineNo) : "") + ": " + Msg;
    return FormatError::BadSignature;
  };
  if (Text.size() > TrustedSignersMaxBytes)
    return Fail("trusted-signers file of " + std::to_string(Text.size()) +
                " bytes is larger than the limit of " + std::to_string(TrustedSignersMaxBytes));
  std::vector<std::string> Lines;
  std::string Why;
  if (!splitLines(Text, TrustedSignersMaxLine, Lines, LineNo, Why))
    return Fail(Why);
  std::vector<TrustedSigner> Signers;
  std::vector<size_t> LineOf;
  for (LineNo = 1; LineNo <= Lines.size(); ++LineNo) {
    const std::string &Line = Lines[LineNo - 1];
    size_t Pos = 0;
    while (Pos < Line.size() && isBlank(Line[Pos]))
      ++Pos;
    if (Pos == Line.size() || Line[Pos] == '#')
      continue;
    TrustedSigner S;
    if (!keyOfLine(Line, Pos, S.PublicKey, Why))
      return Fail(Why);
    while (Pos < Line.size() && isBlank(Line[Pos]))
      ++Pos;
    size_t End = Line.size();
    while (End > Pos && isBlank(Line[End - 1]))
      --End;
    S.Comment = Line.substr(Pos, End - Pos);
    for (size_t I = 0; I < Signers.size(); ++I)
      if (Signers[I].PublicKey == S.PublicKey)
        return Fail("the key of line " + std::to_string(LineOf[I]) + " again");
    Signers.push_back(std::move(S));
    LineOf.push_back(LineNo);
  }
  Out = std::move(Signers);
  return FormatError::None;
}

FormatError readTrustedSignersFile(const std::string &Path, std::vector<TrustedSigner> &Out,
                                   std::string &Error) {
  std::vector<uint8_t> Bytes;
  std::string Why;
  if (!readFileBytes(Path, Bytes, Why, TrustedSignersMaxBytes)) {
    Error = Path + ": " + Why;
    return FormatError::Io;
  }
  return parseTrustedSigners(std::string(Bytes.begin(), Bytes.end()), Path, Out, Error);
}

bool verifyEd25519(const uint8_t PublicKey[32], const void *Data, size_t Size,
                   const uint8_t Signature[64]) {
  static const uint8_t Nothing = 0;
  Pkey Key(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, PublicKey, Ed25519KeySize));
  MdCtx Ctx(EVP_MD_CTX_new());
  bool OK = Key && Ctx &&
            EVP_DigestVerifyInit(Ctx.get(), nullptr, nullptr, nullptr, Key.get()) == 1 &&
            EVP_DigestVerify(Ctx.get(), Signature, Ed25519SignatureSize,
                             Size ? static_cast<const uint8_t *>(Data) : &Nothing, Size) == 1;
  // A bad signature is an answer, not an error to leave in the queue.
  ERR_clear_error();
  return OK;
}

namespace {

/// Ed25519's private scalar as X25519 takes it: the first half of the
/// SHA-512 of the key's 32-byte seed (X25519 clamps it as Ed25519 does).
Pkey agreementKey(EVP_PKEY *Signing) {
  uint8_t Seed[32], Hash[64];
  size_t Size = sizeof Seed;
  unsigned HashSize = 0;
  Pkey Out;
  if (EVP_PKEY_get_raw_private_key(Signing, Seed, &Size) == 1 && Size == sizeof Seed &&
      EVP_Digest(Seed, sizeof Seed, Hash, &HashSize, EVP_sha512(), nullptr) == 1 &&
      HashSize == sizeof Hash)
    Out.reset(EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, nullptr, Hash, 32));
  OPENSSL_cleanse(Seed, sizeof Seed);
  OPENSSL_cleanse(Hash, sizeof Hash);
  return Out;
}

struct BnFree {
  void operator()(BIGNUM *B) const { BN_free(B); }
};
struct BnCtxFree {
  void operator()(BN_CTX *C) const { BN_CTX_free(C); }
};
using Bn = std::unique_ptr<BIGNUM, BnFree>;

/// The Montgomery u of an Ed25519 public key, u = (1 + y) / (1 - y) mod
/// 2^255 - 19 (RFC 7748, section 4.1), y its encoding without the sign
/// bit; false for y = 1, the identity, which has none.
bool montgomeryOfEdwards(const uint8_t Edwards[32], uint8_t U[32]) {
  uint8_t Y[32];
  std::copy(Edwards, Edwards + 32, Y);
  Y[31] &= 0x7f;
  std::unique_ptr<BN_CTX, BnCtxFree> Ctx(BN_CTX_new());
  Bn P(BN_new()), Yn(BN_lebin2bn(Y, 32, nullptr)), One(BN_new()), Num(BN_new()), Den(BN_new()),
      Out(BN_new());
  if (!Ctx || !P || !Yn || !One || !Num || !Den || !Out || !BN_set_bit(P.get(), 255) ||
      !BN_sub_word(P.get(), 19) || !BN_one(One.get()) ||
      !BN_mod_add(Num.get(), One.get(), Yn.get(), P.get(), Ctx.get()) ||
      !BN_mod_sub(Den.get(), One.get(), Yn.get(), P.get(), Ctx.get()) || BN_is_zero(Den.get()) ||
      !BN_mod_inverse(Den.get(), Den.get(), P.get(), Ctx.get()) ||
      !BN_mod_mul(Out.get(), Num.get(), Den.get(), P.get(), Ctx.get()))
    return false;
  return BN_bn2lebinpad(Out.get(), U, 32) == 32;
}

} // namespace

Ed25519KeyPair::~Ed25519KeyPair() {
  EVP_PKEY_free(Key);
  EVP_PKEY_free(Agreement);
}

bool Ed25519KeyPair::generate() {
  EVP_PKEY_free(Key);
  EVP_PKEY_free(Agreement);
  Key = Agreement = nullptr;
  Public = {};
  Pkey Made(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"));
  std::array<uint8_t, 32> Half;
  bool OK = Made && rawPublicKey(Made.get(), Half);
  Pkey Agreeing = OK ? agreementKey(Made.get()) : Pkey();
  ERR_clear_error();
  if (!OK || !Agreeing)
    return false;
  Key = Made.release();
  Agreement = Agreeing.release();
  Public = Half;
  return true;
}

bool Ed25519KeyPair::agree(const uint8_t Peer[32], uint8_t Out[32]) const {
  uint8_t U[32];
  size_t Size = 32;
  bool OK = false;
  if (Agreement && montgomeryOfEdwards(Peer, U)) {
    Pkey PeerKey(EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, nullptr, U, sizeof U));
    std::unique_ptr<EVP_PKEY_CTX, PkeyCtxFree> Ctx(EVP_PKEY_CTX_new(Agreement, nullptr));
    // libcrypto refuses a secret of zeros (a peer point of small order).
    OK = PeerKey && Ctx && EVP_PKEY_derive_init(Ctx.get()) == 1 &&
         EVP_PKEY_derive_set_peer(Ctx.get(), PeerKey.get()) == 1 &&
         EVP_PKEY_derive(Ctx.get(), Out, &Size) == 1 && Size == 32;
  }
  ERR_clear_error();
  if (!OK)
    std::fill(Out, Out + 32, uint8_t(0));
  return OK;
}

bool Ed25519KeyPair::sign(const void *Data, size_t Size, uint8_t Out[64]) const {
  static const uint8_t Nothing = 0;
  MdCtx Ctx(EVP_MD_CTX_new());
  size_t Made = Ed25519SignatureSize;
  bool OK = Key && Ctx && EVP_DigestSignInit(Ctx.get(), nullptr, nullptr, nullptr, Key) == 1 &&
            EVP_DigestSign(Ctx.get(), Out, &Made,
                           Size ? static_cast<const uint8_t *>(Data) : &Nothing, Size) == 1 &&
            Made == Ed25519SignatureSize;
  ERR_clear_error();
  if (!OK)
    std::fill(Out, Out + Ed25519SignatureSize, uint8_t(0));
  return OK;
}

FormatError signManifest(const std::string &KeyPath, const std::string &ManifestText,
                         ManifestSignature &Out, std::string &Error) {
  Pkey Key;
  if (FormatError E = readKey(KeyPath, false, Key, Error); E != FormatError::None)
    return E;
  ManifestSignature S;
  MdCtx Ctx(EVP_MD_CTX_new());
  size_t Size = S.Signature.size();
  if (!rawPublicKey(Key.get(), S.PublicKey) || !Ctx ||
      EVP_DigestSignInit(Ctx.get(), nullptr, nullptr, nullptr, Key.get()) != 1 ||
      EVP_DigestSign(Ctx.get(), S.Signature.data(), &Size,
                     reinterpret_cast<const uint8_t *>(ManifestText.data()),
                     ManifestText.size()) != 1 ||
      Size != S.Signature.size()) {
    std::string Reason = cryptoReason();
    Error = KeyPath + ": cannot sign with the key" + (Reason.empty() ? "" : ": " + Reason);
    return FormatError::BadKey;
  }
  Out = S;
  return FormatError::None;
}

FormatError signerLine(const std::string &KeyPath, const std::string &Comment, std::string &Line,
                       std::string &Error) {
  for (unsigned char C : Comment)
    if (C < 0x20 || C == 0x7f) {
      Error = "the comment for " + KeyPath + " must be one line without control characters";
      return FormatError::BadKey;
    }
  if (Comment.size() > TrustedSignersMaxLine - 100) {
    Error = "the comment for " + KeyPath + " is longer than " +
            std::to_string(TrustedSignersMaxLine - 100) + " bytes";
    return FormatError::BadKey;
  }
  Pkey Key;
  if (FormatError E = readKey(KeyPath, true, Key, Error); E != FormatError::None)
    return E;
  std::array<uint8_t, 32> Public;
  if (!rawPublicKey(Key.get(), Public)) {
    Error = KeyPath + ": cannot read the public key";
    return FormatError::BadKey;
  }
  Line = std::string(Ed25519KeyType) + " " + hexOfKey(Public);
  size_t B = 0, E = Comment.size();
  while (B < E && isBlank(Comment[B]))
    ++B;
  while (E > B && isBlank(Comment[E - 1]))
    --E;
  if (E > B)
    Line += " " + Comment.substr(B, E - B);
  return FormatError::None;
}

} // namespace twochains::format
