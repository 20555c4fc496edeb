//===- SignatureTest.cpp - Ed25519 manifest signatures, trusted signers ---===//
#include "Signature.h"

#include <gtest/gtest.h>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace twochains::format;

namespace {

// Keys made by `openssl genpkey` (test keys, for nothing but these tests).
const char KeyA[] = "-----BEGIN PRIVATE KEY-----\n"
                    "MC4CAQAwBQYDK2VwBCIEIITkn5hBSaKgMO7PqN9dYZDRad1acQ8ZVzgweUqoJbuG\n"
                    "-----END PRIVATE KEY-----\n";
const char PublicA[] = "-----BEGIN PUBLIC KEY-----\n"
                       "MCowBQYDK2VwAyEAWi9qis8uQ0VQe7DmAWCyFX/grQhqUmnMrbMXH3NT/DM=\n"
                       "-----END PUBLIC KEY-----\n";
const char HexA[] = "5a2f6a8acf2e4345507bb0e60160b2157fe0ad086a5269ccadb3171f7353fc33";
const char KeyB[] = "-----BEGIN PRIVATE KEY-----\n"
                    "MC4CAQAwBQYDK2VwBCIEIFhck4ru8bEOd+ZnFmcphFp0nfdUiFT1swgD6o0nsCoS\n"
                    "-----END PRIVATE KEY-----\n";
// -algorithm ec -pkeyopt ec_paramgen_curve:P-256
const char KeyEc[] = "-----BEGIN PRIVATE KEY-----\n"
                     "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgvT+uyc5yjoJUfrwp\n"
                     "ahX2t7aWAnOCfeUoQYN1UFvhNqChRANCAASz/kb2IZrUDjQD1/hg0spsVw1AiN2z\n"
                     "na2jVrEePd4SKQjXAtgQjFI2yimnQVQUYr30cr0ID3Sc5t0d+b8SGp5+\n"
                     "-----END PRIVATE KEY-----\n";
// -algorithm ed25519 -aes-128-cbc -pass pass:secret
const char KeyEncrypted[] = "-----BEGIN ENCRYPTED PRIVATE KEY-----\n"
                            "MIGbMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAhjvuhVz5xfSAICCAAw\n"
                            "DAYIKoZIhvcNAgkFADAdBglghkgBZQMEAQIEEFTJAZbgNNAxllSYqUYW6bAEQHdN\n"
                            "me4/gvvKsdOApZC3gu9GPcW0wSx2Z4R8phHR3q+vvgEv7V0YXcSpKwAAAwr4Dm+j\n"
                            "nuIrYR2ThzqAgpjKJGw=\n"
                            "-----END ENCRYPTED PRIVATE KEY-----\n";

const char Manifest[] = "twochains-manifest 1\npackage shop\nidentity 00\n";

struct TempDir {
  std::string Path;
  TempDir() {
    char Template[] = "/tmp/tc-signature-XXXXXX";
    Path = mkdtemp(Template);
  }
  ~TempDir() { std::system(("rm -rf '" + Path + "'").c_str()); }
  std::string file(const std::string &Name, const std::string &Text) {
    std::string P = Path + "/" + Name;
    std::ofstream(P) << Text;
    return P;
  }
};

std::array<uint8_t, 32> keyFromHex(const std::string &Hex) {
  std::array<uint8_t, 32> K{};
  for (size_t I = 0; I < K.size(); ++I)
    K[I] = uint8_t(std::stoul(Hex.substr(2 * I, 2), nullptr, 16));
  return K;
}

template <size_t N> std::array<uint8_t, N> bytesFromHex(const std::string &Hex) {
  std::array<uint8_t, N> B{};
  for (size_t I = 0; I < N; ++I)
    B[I] = uint8_t(std::stoul(Hex.substr(2 * I, 2), nullptr, 16));
  return B;
}

} // namespace

// RFC 8032, section 7.1, tests 1 and 2: libcrypto's Ed25519 as the
// standard has it, and nothing else verifies.
TEST(Ed25519, Rfc8032Vectors) {
  auto Pk1 = keyFromHex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
  auto Sig1 = bytesFromHex<64>("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555f"
                               "b8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b");
  EXPECT_TRUE(verifyEd25519(Pk1.data(), "", 0, Sig1.data()));
  auto Pk2 = keyFromHex("3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c");
  auto Sig2 = bytesFromHex<64>("92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da08"
                               "5ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00");
  const uint8_t Msg2 = 0x72;
  EXPECT_TRUE(verifyEd25519(Pk2.data(), &Msg2, 1, Sig2.data()));
  EXPECT_FALSE(verifyEd25519(Pk2.data(), "", 0, Sig1.data()));
  EXPECT_FALSE(verifyEd25519(Pk1.data(), &Msg2, 1, Sig2.data()));
  const uint8_t Other = 0x73;
  EXPECT_FALSE(verifyEd25519(Pk2.data(), &Other, 1, Sig2.data()));
}

TEST(Ed25519, SignedManifestVerifies) {
  TempDir D;
  ManifestSignature S;
  std::string Error;
  ASSERT_EQ(signManifest(D.file("a.pem", KeyA), Manifest, S, Error), FormatError::None) << Error;
  EXPECT_EQ(hexOfKey(S.PublicKey), HexA);
  EXPECT_TRUE(verifyEd25519(S.PublicKey.data(), Manifest, sizeof Manifest - 1, S.Signature.data()));
  // Ed25519 is deterministic: the same key signs the same bytes the same way.
  ManifestSignature Again;
  ASSERT_EQ(signManifest(D.file("a.pem", KeyA), Manifest, Again, Error), FormatError::None);
  EXPECT_EQ(Again.Signature, S.Signature);
}

// Every byte of the manifest counts: changing any one of them (a hash the
// manifest names, say) breaks the signature.
TEST(Ed25519, TamperedManifestFails) {
  TempDir D;
  ManifestSignature S;
  std::string Error;
  ASSERT_EQ(signManifest(D.file("a.pem", KeyA), Manifest, S, Error), FormatError::None) << Error;
  std::string Text = Manifest;
  for (size_t I = 0; I < Text.size(); ++I) {
    std::string Tampered = Text;
    Tampered[I] ^= 1;
    EXPECT_FALSE(
        verifyEd25519(S.PublicKey.data(), Tampered.data(), Tampered.size(), S.Signature.data()))
        << "byte " << I;
  }
  EXPECT_FALSE(verifyEd25519(S.PublicKey.data(), Text.data(), Text.size() - 1, S.Signature.data()));
  std::string Longer = Text + "\n";
  EXPECT_FALSE(verifyEd25519(S.PublicKey.data(), Longer.data(), Longer.size(), S.Signature.data()));
  auto Sig = S.Signature;
  Sig[10] ^= 0x40;
  EXPECT_FALSE(verifyEd25519(S.PublicKey.data(), Text.data(), Text.size(), Sig.data()));
}

// A signature made by another key does not verify under the trusted key,
// nor does the trusted key's signature under another.
TEST(Ed25519, UnknownKeyFails) {
  TempDir D;
  ManifestSignature A, B;
  std::string Error;
  ASSERT_EQ(signManifest(D.file("a.pem", KeyA), Manifest, A, Error), FormatError::None) << Error;
  ASSERT_EQ(signManifest(D.file("b.pem", KeyB), Manifest, B, Error), FormatError::None) << Error;
  EXPECT_NE(A.PublicKey, B.PublicKey);
  EXPECT_FALSE(
      verifyEd25519(A.PublicKey.data(), Manifest, sizeof Manifest - 1, B.Signature.data()));
  EXPECT_FALSE(
      verifyEd25519(B.PublicKey.data(), Manifest, sizeof Manifest - 1, A.Signature.data()));
}

/// A job's ranks prove themselves to each other with a MAC under the
/// secret their published keys agree (runtime/wireup/RankProof.cpp): each
/// side gets the same bytes, and no third key gets them.
TEST(Ed25519, KeyPairsAgreeASecretOnlyWithEachOther) {
  Ed25519KeyPair A, B, C;
  ASSERT_TRUE(A.generate() && B.generate() && C.generate());
  uint8_t AB[32], BA[32], AC[32], CB[32];
  ASSERT_TRUE(A.agree(B.publicKey().data(), AB));
  ASSERT_TRUE(B.agree(A.publicKey().data(), BA));
  ASSERT_TRUE(A.agree(C.publicKey().data(), AC));
  ASSERT_TRUE(C.agree(B.publicKey().data(), CB));
  EXPECT_EQ(std::vector<uint8_t>(AB, AB + 32), std::vector<uint8_t>(BA, BA + 32));
  EXPECT_NE(std::vector<uint8_t>(AB, AB + 32), std::vector<uint8_t>(AC, AC + 32));
  EXPECT_NE(std::vector<uint8_t>(AB, AB + 32), std::vector<uint8_t>(CB, CB + 32));
  EXPECT_NE(std::vector<uint8_t>(AB, AB + 32), std::vector<uint8_t>(32, 0));
}

/// Points that would make the secret known without either private key
/// are refused: the identity (y = 1) and the point of order 2 (y = -1,
/// whose secret is zero), and the secret is left zero.
TEST(Ed25519, KeysOfSmallOrderAgreeNothing) {
  Ed25519KeyPair A, NoKey;
  ASSERT_TRUE(A.generate());
  uint8_t Identity[32] = {1}, OrderTwo[32], Out[32];
  std::fill(OrderTwo, OrderTwo + 32, uint8_t(0xff));
  OrderTwo[0] = 0xec; // 2^255 - 20: y = -1
  OrderTwo[31] = 0x7f;
  EXPECT_FALSE(A.agree(Identity, Out));
  EXPECT_EQ(std::vector<uint8_t>(Out, Out + 32), std::vector<uint8_t>(32, 0));
  EXPECT_FALSE(A.agree(OrderTwo, Out));
  EXPECT_EQ(std::vector<uint8_t>(Out, Out + 32), std::vector<uint8_t>(32, 0));
  EXPECT_FALSE(NoKey.agree(A.publicKey().data(), Out));
}

TEST(Ed25519, KeysThatCannotSign) {
  TempDir D;
  ManifestSignature S;
  std::string Error;
  auto Sign = [&](const std::string &Path) { return signManifest(Path, Manifest, S, Error); };
  EXPECT_EQ(Sign(D.Path + "/none.pem"), FormatError::Io);
  EXPECT_NE(Error.find(D.Path + "/none.pem: cannot open"), std::string::npos) << Error;
  EXPECT_EQ(Sign(D.file("pub.pem", PublicA)), FormatError::BadKey);
  EXPECT_NE(Error.find("pub.pem: a public key; signing needs the private key"), std::string::npos)
      << Error;
  EXPECT_EQ(Sign(D.file("ec.pem", KeyEc)), FormatError::BadKey);
  EXPECT_NE(Error.find("ec.pem: key type EC, not Ed25519; make one with: openssl genpkey "
                       "-algorithm ed25519"),
            std::string::npos)
      << Error;
  EXPECT_EQ(Sign(D.file("enc.pem", KeyEncrypted)), FormatError::BadKey);
  EXPECT_NE(Error.find("enc.pem: the key is encrypted"), std::string::npos) << Error;
  EXPECT_EQ(Sign(D.file("junk.pem", "not a key\n")), FormatError::BadKey);
  EXPECT_NE(Error.find("junk.pem: not a PEM private key"), std::string::npos) << Error;
  EXPECT_EQ(Sign(D.file("big.pem", std::string(SigningKeyMaxBytes + 1, 'x'))), FormatError::Io);
  EXPECT_NE(Error.find("big.pem: larger than"), std::string::npos) << Error;
}

TEST(Ed25519, SignerLineFromPrivateOrPublicKey) {
  TempDir D;
  std::string Line, Error;
  ASSERT_EQ(signerLine(D.file("a.pem", KeyA), "release key 2025", Line, Error), FormatError::None)
      << Error;
  EXPECT_EQ(Line, std::string("tc-ed25519 ") + HexA + " release key 2025");
  ASSERT_EQ(signerLine(D.file("a.pub", PublicA), "", Line, Error), FormatError::None) << Error;
  EXPECT_EQ(Line, std::string("tc-ed25519 ") + HexA);
  // A comment of two lines would add a signer of the comment's choosing.
  EXPECT_EQ(signerLine(D.file("a.pem", KeyA), std::string("x\ntc-ed25519 ") + HexA, Line, Error),
            FormatError::BadKey);
  EXPECT_NE(Error.find("must be one line"), std::string::npos) << Error;
  EXPECT_EQ(signerLine(D.file("ec.pem", KeyEc), "", Line, Error), FormatError::BadKey);
  EXPECT_NE(Error.find("not Ed25519"), std::string::npos) << Error;
  // What it prints is what the signers file takes.
  ASSERT_EQ(signerLine(D.file("a.pem", KeyA), "  padded  ", Line, Error), FormatError::None);
  std::vector<TrustedSigner> Signers;
  ASSERT_EQ(parseTrustedSigners(Line + "\n", "s", Signers, Error), FormatError::None) << Error;
  ASSERT_EQ(Signers.size(), 1u);
  EXPECT_EQ(hexOfKey(Signers[0].PublicKey), HexA);
  EXPECT_EQ(Signers[0].Comment, "padded");
}

TEST(ManifestSignatureFile, RoundTrip) {
  TempDir D;
  ManifestSignature S, Read;
  std::string Error;
  ASSERT_EQ(signManifest(D.file("a.pem", KeyA), Manifest, S, Error), FormatError::None) << Error;
  std::string Text = manifestSignatureText(S);
  EXPECT_EQ(Text.size(), 11u + 64 + 1 + 128 + 1);
  EXPECT_EQ(Text.rfind(std::string("tc-ed25519 ") + HexA + " ", 0), 0u);
  ASSERT_EQ(parseManifestSignature(Text, "m.sig", Read, Error), FormatError::None) << Error;
  EXPECT_EQ(Read.PublicKey, S.PublicKey);
  EXPECT_EQ(Read.Signature, S.Signature);
  // Without its newline, with CRLF, upper-case hex: the same signature.
  for (std::string Variant :
       {Text.substr(0, Text.size() - 1), Text.substr(0, Text.size() - 1) + "\r\n"}) {
    ASSERT_EQ(parseManifestSignature(Variant, "m.sig", Read, Error), FormatError::None) << Error;
    EXPECT_EQ(Read.Signature, S.Signature);
  }
  std::string Upper = Text;
  for (size_t I = 11; I < Upper.size(); ++I)
    Upper[I] = char(toupper(Upper[I]));
  ASSERT_EQ(parseManifestSignature(Upper, "m.sig", Read, Error), FormatError::None) << Error;
  EXPECT_EQ(Read.Signature, S.Signature);
  ASSERT_EQ(readManifestSignatureFile(D.file("m.sig", Text), Read, Error), FormatError::None);
  EXPECT_EQ(Read.PublicKey, S.PublicKey);
}

TEST(ManifestSignatureFile, MalformedSaysWhereAndWhy) {
  const std::string Key(64, 'a'), Sig(128, 'b');
  struct Case {
    std::string Text, Message;
  } Cases[] = {
      {"", "m.sig: empty; expected one line 'tc-ed25519 <public key> <signature>'"},
      {"ssh-ed25519 " + Key + " " + Sig + "\n", "m.sig:1: unknown key type 'ssh-ed25519'"},
      {"tc-ed25519 " + Key.substr(2) + " " + Sig + "\n", "m.sig:1: the public key"},
      {"tc-ed25519 " + Key + " " + Sig.substr(1) + "g\n", "m.sig:1: the signature"},
      {"tc-ed25519 " + Key + " " + Sig.substr(2) + "\n", "is not 128 hex digits"},
      {"tc-ed25519 " + Key + "\n", "m.sig:1: the signature '' is not 128 hex digits"},
      {"tc-ed25519 " + Key + " " + Sig + " extra\n", "m.sig:1: unexpected 'extra'"},
      {"tc-ed25519 " + Key + " " + Sig + "\n\nsecond\n", "m.sig:3: a signature file has one line"},
      {"tc-ed25519 " + Key + " " + Sig + "\v\n", "m.sig:1: control character 11"},
      {"tc-ed25519 " + Key + " " + Sig + std::string(ManifestSignatureMaxBytes, '\n'),
       "m.sig: signature file of 4300 bytes is larger than the limit of 4096"},
  };
  for (const Case &C : Cases) {
    ManifestSignature S;
    std::string Error;
    EXPECT_EQ(parseManifestSignature(C.Text, "m.sig", S, Error), FormatError::BadSignature)
        << C.Text;
    EXPECT_NE(Error.find(C.Message), std::string::npos) << Error;
  }
  TempDir D;
  ManifestSignature S;
  std::string Error;
  EXPECT_EQ(readManifestSignatureFile(D.Path + "/none.sig", S, Error), FormatError::Io);
  EXPECT_NE(Error.find("none.sig: cannot open"), std::string::npos) << Error;
}

TEST(TrustedSignersFile, CommentsBlankLinesAndComments) {
  std::string KeyC(64, 'c');
  std::string Text = std::string("# who may sign packages this receiver runs\n"
                                 "\n"
                                 "tc-ed25519 ") +
                     HexA + " release key 2025 (build farm)\n" + "   \t\n" +
                     "  # indented comment\n" + "\ttc-ed25519 " + KeyC + "\r\n" + "tc-ed25519 " +
                     std::string(64, 'D') + "\tops  \n";
  std::vector<TrustedSigner> Signers;
  std::string Error;
  ASSERT_EQ(parseTrustedSigners(Text, "signers.txt", Signers, Error), FormatError::None) << Error;
  ASSERT_EQ(Signers.size(), 3u);
  EXPECT_EQ(hexOfKey(Signers[0].PublicKey), HexA);
  EXPECT_EQ(Signers[0].Comment, "release key 2025 (build farm)");
  EXPECT_EQ(hexOfKey(Signers[1].PublicKey), KeyC);
  EXPECT_EQ(Signers[1].Comment, "");
  EXPECT_EQ(hexOfKey(Signers[2].PublicKey), std::string(64, 'd'));
  EXPECT_EQ(Signers[2].Comment, "ops");
  ASSERT_EQ(parseTrustedSigners("# nobody yet\n", "signers.txt", Signers, Error),
            FormatError::None);
  EXPECT_TRUE(Signers.empty());
}

TEST(TrustedSignersFile, MalformedLinesSayWhichLine) {
  std::string Good = std::string("tc-ed25519 ") + HexA + " a\n";
  struct Case {
    std::string Text, Message;
  } Cases[] = {
      {"# ok\n" + Good + "ssh-ed25519 AAAA user@host\n",
       "signers.txt:3: unknown key type 'ssh-ed25519': expected tc-ed25519"},
      {"\n\n\ntc-ed25519 abc\n", "signers.txt:4: the public key 'abc' is not 64 hex digits"},
      {"tc-ed25519\n", "signers.txt:1: the public key '' is not 64 hex digits"},
      {"tc-ed25519 " + std::string(63, 'a') + "x comment\n", "signers.txt:1: the public key"},
      {Good + "# again\n" + Good, "signers.txt:3: the key of line 1 again"},
      {Good + "tc-ed25519 " + std::string(64, 'e') + " a\x01z\n",
       "signers.txt:2: control character 1 in the line"},
      {Good + Good.substr(0, Good.size() - 1) + std::string(TrustedSignersMaxLine, 'x') + "\n",
       "signers.txt:2: line is longer than the limit of 4096 bytes"},
      {std::string(TrustedSignersMaxBytes + 1, '#'),
       "signers.txt: trusted-signers file of 1048577 bytes is larger than the limit of 1048576"},
  };
  for (const Case &C : Cases) {
    std::vector<TrustedSigner> Signers;
    std::string Error;
    EXPECT_EQ(parseTrustedSigners(C.Text, "signers.txt", Signers, Error), FormatError::BadSignature)
        << C.Text.substr(0, 200);
    EXPECT_NE(Error.find(C.Message), std::string::npos) << Error;
    EXPECT_TRUE(Signers.empty());
  }
  TempDir D;
  std::vector<TrustedSigner> Signers;
  std::string Error;
  EXPECT_EQ(readTrustedSignersFile(D.Path + "/none.txt", Signers, Error), FormatError::Io);
  EXPECT_NE(Error.find("none.txt: cannot open"), std::string::npos) << Error;
  EXPECT_EQ(readTrustedSignersFile(D.file("s.txt", "x\n"), Signers, Error),
            FormatError::BadSignature);
  EXPECT_NE(Error.find("s.txt:1: unknown key type 'x'"), std::string::npos) << Error;
}
