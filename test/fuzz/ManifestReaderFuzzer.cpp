//===- ManifestReaderFuzzer.cpp - parseManifest on any text ---------------===//
//
// The parser is the real one; only the files a manifest names are stood in for
// (the image reader has a fuzzer of its own). In the stand-in package folder
// every file and every image exists and has the hash StandInHash, except
// those whose path contains "missing", which cannot be read. The seeds are
// real manifests with their hashes replaced by StandInHash, so mutations get
// past the file checks to the lines after them.
//
// What the parser accepts must be what tc_package_load relies on.
//
//===----------------------------------------------------------------------===//
#include "ManifestFormat.h"

#include <cstdio>
#include <cstdlib>
#include <set>

using namespace twochains::format;

static const char StandInHash[] =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

[[noreturn]] static void broken(const char *What) {
  std::fprintf(stderr, "fuzz-manifest-reader: %s\n", What);
  std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  ManifestFiles Files;
  Files.HashFile = [](const std::string &Path) -> std::string {
    return Path.find("missing") == std::string::npos ? StandInHash : "";
  };
  Files.ReadImage = [](const std::string &Path, JamImageData &Out, std::string &Error) {
    if (Path.find("missing") != std::string::npos) {
      Error = "cannot open: No such file or directory";
      return FormatError::Io;
    }
    Out = JamImageData();
    Out.Hash = StandInHash;
    return FormatError::None;
  };
  ManifestData M;
  std::string Error;
  std::string Text(reinterpret_cast<const char *>(Data), Size);
  if (parseManifest(Text, "fuzz.tcm", "pkg", Files, M, Error) != FormatError::None) {
    if (Error.empty())
      broken("refused a manifest without saying why");
    return 0;
  }
  if (M.Package.empty() || M.Identity.size() != 64)
    broken("accepted a manifest that has no package name or a malformed identity");
  std::set<std::pair<std::string, unsigned>> IDs;
  for (const ManifestElement &E : M.Elements) {
    if (E.ID >= ElementIDLimit)
      broken("accepted a manifest that has an element ID beyond the limit");
    bool IsJam = E.Kind == "jam";
    if (!IsJam && E.Kind != "ried")
      broken("accepted a manifest that has an element of unknown kind");
    // Package.cpp reads these with map::at.
    if (!E.Fields.count("isa") || !E.Fields.count(IsJam ? "image" : "lib") ||
        !E.Fields.count("hash"))
      broken("accepted a manifest that lacks a field the loader reads");
    if (!M.ISAs.count(E.Fields.at("isa")))
      broken("accepted a manifest that has an element for an undeclared ISA");
    if (!IDs.insert({E.Fields.at("isa"), E.ID}).second)
      broken("accepted a manifest that has an ID twice for one ISA");
  }
  return 0;
}
