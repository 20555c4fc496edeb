//===- forge_jam.cpp - A hostile build of a sandboxed package -------------===//
//
//   tc-forge-jam PREFIX PACKAGE ISA JAM WORD...
//
// What a deployer that does not play by the rules sends: the installed
// package PACKAGE under PREFIX, its jam JAM for ISA with the instruction
// words WORD (hex) written over its code from its entry on, the image's
// hash (in the image and the manifest) and the package's identity made to
// match again (the signature, if any, removed). The image still
// says it is sandboxed; only the receiver's verifier stands between it and
// running (test/e2e/run-verified.sh).
//
//===----------------------------------------------------------------------===//
#include "JamImageFormat.h"
#include "ManifestFormat.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

using namespace twochains::format;

static int fail(const std::string &Why) {
  std::fprintf(stderr, "tc-forge-jam: %s\n", Why.c_str());
  return 1;
}

static bool readText(const std::string &Path, std::string &Out) {
  std::ifstream In(Path, std::ios::binary);
  std::stringstream S;
  S << In.rdbuf();
  Out = S.str();
  return bool(In);
}

static bool writeBytes(const std::string &Path, const void *Data, size_t Size) {
  std::ofstream Out(Path, std::ios::binary | std::ios::trunc);
  Out.write(static_cast<const char *>(Data), std::streamsize(Size));
  return bool(Out);
}

/// The value of Key=... in Line, or "".
static std::string field(const std::string &Line, const std::string &Key) {
  size_t At = Line.find(" " + Key + "=");
  if (At == std::string::npos)
    return "";
  At += Key.size() + 2;
  return Line.substr(At, Line.find(' ', At) - At);
}

int main(int Argc, char **Argv) {
  if (Argc < 6)
    return fail("usage: tc-forge-jam PREFIX PACKAGE ISA JAM WORD...");
  std::string Dir = std::string(Argv[1]) + "/lib/twochains/packages/" + Argv[2];
  std::string ManifestPath = Dir + "/manifest.tcm", Isa = Argv[3], Jam = Argv[4];
  std::string Text;
  if (!readText(ManifestPath, Text))
    return fail("cannot read " + ManifestPath);
  // The jam's line: "jam ID NAME isa=ISA image=PATH hash=HEX ...".
  std::string Prefix = " " + Jam + " isa=" + Isa + " ";
  size_t Line = std::string::npos;
  for (size_t At = 0; At < Text.size();) {
    size_t End = Text.find('\n', At);
    std::string L = Text.substr(At, End - At);
    if (L.rfind("jam ", 0) == 0 && L.find(Prefix) != std::string::npos)
      Line = At;
    At = End == std::string::npos ? Text.size() : End + 1;
  }
  if (Line == std::string::npos)
    return fail("no jam '" + Jam + "' for " + Isa + " in " + ManifestPath);
  std::string JamLine = Text.substr(Line, Text.find('\n', Line) - Line);
  std::string ImagePath = Dir + "/" + field(JamLine, "image"), OldHash = field(JamLine, "hash");
  JamImageData Image;
  std::string Error;
  if (readJamImageFile(ImagePath, Image, Error) != FormatError::None)
    return fail(ImagePath + ": " + Error);
  for (int I = 5; I < Argc; ++I) {
    uint32_t Word = uint32_t(std::strtoul(Argv[I], nullptr, 16));
    uint64_t At = Image.Entry + 4 * uint64_t(I - 5);
    if (At + 4 > Image.TextSize)
      return fail("the words run past the text");
    for (int B = 0; B < 4; ++B)
      Image.Bytes[At + B] = uint8_t(Word >> (8 * B));
  }
  Image.Hash = jamImageHash(Image);
  std::vector<uint8_t> File = serializeJamImage(Image);
  if (!writeBytes(ImagePath, File.data(), File.size()))
    return fail("cannot write " + ImagePath);
  // The manifest names an image by its content hash (jamImageHash).
  std::string NewHash = Image.Hash;
  Text.replace(Text.find("hash=" + OldHash, Line) + 5, OldHash.size(), NewHash);
  ManifestData M;
  if (parseManifest(Text, ManifestPath, Dir, manifestFilesOnDisk(), M, Error) != FormatError::None)
    return fail(Error);
  size_t Id = Text.find("\nidentity ");
  if (Id == std::string::npos)
    return fail("no identity line in " + ManifestPath);
  Text.replace(Id + 10, M.Identity.size(), manifestIdentity(M));
  if (!writeBytes(ManifestPath, Text.data(), Text.size()))
    return fail("cannot write " + ManifestPath);
  std::remove((ManifestPath + ".sig").c_str());
  std::printf("forged jam '%s' (%s): %d words at its entry\n", Jam.c_str(), Isa.c_str(), Argc - 5);
  return 0;
}
