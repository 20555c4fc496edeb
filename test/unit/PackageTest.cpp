//===- PackageTest.cpp - Loading packages, import tables, running jams ----===//
#include "image/CodeCache.h"
#include "image/ImageInstall.h"
#include "package/Package.h"
#include "ManifestFormat.h"

#include <gtest/gtest.h>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/mman.h>
#include <vector>

using namespace twochains::rt;
using namespace twochains::format;

namespace {

tc_package_params_t params(const char *Prefix, const char *Name, uint32_t Roles) {
  tc_package_params_t P = {};
  P.version = TC_PACKAGE_PARAMS_VERSION;
  P.roles = Roles;
  P.prefix = Prefix;
  P.name = Name;
  return P;
}

struct IndirectPut {
  uint32_t Count;
  struct { uint32_t Index; int32_t Value; } Item[2];
};

TEST(Package, ReceiverRunsAJamLocallyAndInjected) {
  tc_package_params_t P = params(TC_TEST_STDLIB_PREFIX, "stdlib",
                                 TC_PACKAGE_SENDER | TC_PACKAGE_RECEIVER);
  tc_package_t *Pkg = nullptr;
  ASSERT_EQ(tc_package_load(&P, &Pkg), TC_OK);
  EXPECT_EQ(std::strlen(tc_package_identity(Pkg)), 64u);
  uint32_t ID = 999;
  ASSERT_EQ(tc_package_find(Pkg, "indirect_put", &ID), TC_OK);
  const PackageElement &E = Pkg->Elements[ID];
  ASSERT_TRUE(E.IsJam);
  ASSERT_NE(E.LocalEntry, nullptr);
  ASSERT_NE(E.PayloadInit, nullptr) << "sender-side helpers come from the library";
  ASSERT_EQ(E.ImportTable.size(), E.Image.Imports.size());

  auto *Array = static_cast<int32_t *>(dlsym(RTLD_DEFAULT, "tc_stdlib_array"));
  ASSERT_NE(Array, nullptr) << "the ried was loaded RTLD_GLOBAL";

  IndirectPut Local = {2, {{5, 55}, {7, 77}}};
  E.LocalEntry(nullptr, &Local, sizeof Local);
  EXPECT_EQ(Array[5], 55);
  EXPECT_EQ(Array[7], 77);

  // The image, installed as a receiver installs it, on a line that is not
  // a page start.
  CodeCache Cache;
  std::string Error;
  ASSERT_EQ(Cache.create(1 << 16, Error), TC_OK) << Error;
  ASSERT_NE(Cache.reserve(1, 1, 1, 192, 64, false, nullptr), nullptr);
  const CachedCode *C = Cache.reserve(2, 1, 1, uint32_t(installedSize(E.Image)), 64, true,
                                      nullptr);
  ASSERT_NE(C, nullptr);
  const uint8_t *Base = Cache.executableCode(*C);
  installImage(Cache.writableCode(*C), Base, Cache.dataArea(*C), E.Image, E.ImportTable.data());
  IndirectPut Injected = {2, {{9, 99}, {5, -5}}};
  reinterpret_cast<JamEntry>(const_cast<uint8_t *>(Base) + E.Image.Entry)(nullptr, &Injected,
                                                                           sizeof Injected);
  EXPECT_EQ(Array[9], 99);
  EXPECT_EQ(Array[5], -5);
  tc_package_unload(Pkg);
}

TEST(Package, MissingImportNamesTheSymbolAndTheJam) {
  tc_package_params_t P = params(TC_TEST_MISSING_PREFIX, "unitmissing", TC_PACKAGE_RECEIVER);
  tc_package_t *Pkg = reinterpret_cast<tc_package_t *>(0x1);
  testing::internal::CaptureStderr();
  EXPECT_EQ(tc_package_load(&P, &Pkg), TC_ERR_MISSING_IMPORT);
  std::string Err = testing::internal::GetCapturedStderr();
  EXPECT_NE(Err.find("jam 'lonely' imports 'tc_unit_test_nowhere'"), std::string::npos) << Err;
  EXPECT_EQ(Pkg, reinterpret_cast<tc_package_t *>(0x1)) << "outputs are set only on success";
}

TEST(Package, SenderSideNeedsNoImports) {
  tc_package_params_t P = params(TC_TEST_MISSING_PREFIX, "unitmissing", TC_PACKAGE_SENDER);
  tc_package_t *Pkg = nullptr;
  ASSERT_EQ(tc_package_load(&P, &Pkg), TC_OK);
  uint32_t ID;
  ASSERT_EQ(tc_package_find(Pkg, "lonely", &ID), TC_OK);
  EXPECT_EQ(ID, 0u);
  EXPECT_TRUE(Pkg->Elements[ID].ImportTable.empty());
  EXPECT_EQ(tc_package_find(Pkg, "nobody", &ID), TC_ERR_UNKNOWN_ELEMENT);
  tc_package_unload(Pkg);
}

TEST(Package, RefusesBadRequests) {
  tc_package_t *Pkg = nullptr;
  tc_package_params_t P = params(TC_TEST_STDLIB_PREFIX, "stdlib", TC_PACKAGE_SENDER);
  P.version = 99;
  EXPECT_EQ(tc_package_load(&P, &Pkg), TC_ERR_INVALID_PARAM);
  P = params(TC_TEST_STDLIB_PREFIX, "stdlib", 0);
  EXPECT_EQ(tc_package_load(&P, &Pkg), TC_ERR_INVALID_PARAM);
  testing::internal::CaptureStderr();
  P = params(TC_TEST_STDLIB_PREFIX, "nosuchpackage", TC_PACKAGE_SENDER);
  EXPECT_EQ(tc_package_load(&P, &Pkg), TC_ERR_IO);
  P = params(TC_TEST_STDLIB_PREFIX, "stdlib", TC_PACKAGE_SENDER);
  P.isa = "riscv64"; // built for x86_64 (and aarch64) only
  EXPECT_EQ(tc_package_load(&P, &Pkg), TC_ERR_UNKNOWN_PACKAGE);
  std::string Err = testing::internal::GetCapturedStderr();
  EXPECT_NE(Err.find("package 'stdlib' was not built for riscv64"), std::string::npos) << Err;
  EXPECT_EQ(Pkg, nullptr);
}

/// A copy of the standard package under a fresh prefix, whose manifest
/// the test may rewrite: the loader sees exactly what a damaged install
/// would give it.
class PackageCopy {
public:
  PackageCopy() {
    char Template[] = "/tmp/tc-package-test-XXXXXX";
    Prefix = mkdtemp(Template);
    std::filesystem::path Dest = Prefix + "/lib/twochains/packages/stdlib";
    std::filesystem::create_directories(Dest.parent_path());
    std::filesystem::copy(std::string(TC_TEST_STDLIB_PREFIX) + "/lib/twochains/packages/stdlib",
                          Dest, std::filesystem::copy_options::recursive);
    Manifest = (Dest / "manifest.tcm").string();
  }
  ~PackageCopy() { std::filesystem::remove_all(Prefix); }

  std::string read() const {
    std::ifstream In(Manifest);
    std::stringstream S;
    S << In.rdbuf();
    return S.str();
  }
  void write(const std::string &Text) const { std::ofstream(Manifest) << Text; }
  /// Gives the first jam line the ID text ID.
  /// The first jam this machine loads (the package is built for more
  /// instruction sets where the cross libraries are).
  void setFirstJamID(const std::string &ID) const {
    std::string Text = read();
    size_t Line = Text.find("\njam ");
    while (Line != std::string::npos &&
           Text.substr(Line, Text.find('\n', Line + 1) - Line).find(" isa=x86_64 ") ==
               std::string::npos)
      Line = Text.find("\njam ", Line + 1);
    ASSERT_NE(Line, std::string::npos);
    size_t Start = Line + 5, End = Text.find(' ', Start);
    write(Text.substr(0, Start) + ID + Text.substr(End));
  }

  std::string Prefix, Manifest;
};

/// tc_package_load's status, with what it logged.
tc_status_t load(const PackageCopy &Copy, std::string &Log, tc_package_t **Out = nullptr) {
  tc_package_params_t P = params(Copy.Prefix.c_str(), "stdlib", TC_PACKAGE_SENDER);
  tc_package_t *Pkg = nullptr;
  testing::internal::CaptureStderr();
  tc_status_t St = tc_package_load(&P, &Pkg);
  Log = testing::internal::GetCapturedStderr();
  if (Out)
    *Out = Pkg;
  else if (St == TC_OK)
    tc_package_unload(Pkg);
  return St;
}

// 4294967295 used to pass the reader and wrap ID + 1 to 0 in the loader's
// resize, which then wrote past the table; 100000000 asked for gigabytes.
TEST(Package, ElementIDsAreBoundedBeforeTheTableIsSized) {
  PackageCopy Copy;
  std::string Log;
  for (const char *ID : {"4294967295", "100000000", "65536"}) {
    Copy.setFirstJamID(ID);
    EXPECT_EQ(load(Copy, Log), TC_ERR_BAD_MANIFEST) << ID;
    EXPECT_NE(Log.find(std::string("bad element ID '") + ID + "'"), std::string::npos) << Log;
    Copy.setFirstJamID("0");
  }
  // The highest ID below the limit loads, with a table of ElementIDLimit
  // (without the Local-Function library, whose vector has the old IDs).
  std::string Text = Copy.read();
  size_t ISA = Text.find("\nisa x86_64 ") + 11;
  Copy.write(Text.substr(0, ISA) + Text.substr(Text.find('\n', ISA)));
  Copy.setFirstJamID(std::to_string(ElementIDLimit - 1));
  tc_package_t *Pkg = nullptr;
  ASSERT_EQ(load(Copy, Log, &Pkg), TC_OK) << Log;
  EXPECT_EQ(Pkg->Elements.size(), size_t(ElementIDLimit));
  EXPECT_TRUE(Pkg->Elements[ElementIDLimit - 1].Present);
  tc_package_unload(Pkg);
}

// A line of vertical tabs and form feeds: trim() kept them, istringstream
// skipped them, and the reader indexed the first word of none.
TEST(Package, ALineOfControlCharactersIsAnError) {
  PackageCopy Copy;
  Copy.write(Copy.read() + "\v\f\n");
  std::string Log;
  EXPECT_EQ(load(Copy, Log), TC_ERR_BAD_MANIFEST);
  EXPECT_NE(Log.find("control character 11"), std::string::npos) << Log;
}

// The in-memory parser is the one readManifestFile uses: the same text
// gives the same result through either, and the file callbacks are what
// decides whether the files are right.
TEST(Package, ManifestParsesFromMemoryWithTheFilesGiven) {
  PackageCopy Copy;
  std::string Text = Copy.read(), Error;
  ManifestData FromFile, FromMemory;
  ASSERT_EQ(statusOf(readManifestFile(Copy.Manifest, FromFile, Error)), TC_OK) << Error;
  std::string Dir = Copy.Manifest.substr(0, Copy.Manifest.rfind('/'));
  ASSERT_EQ(statusOf(parseManifest(Text, "m.tcm", Dir, manifestFilesOnDisk(), FromMemory, Error)),
            TC_OK)
      << Error;
  EXPECT_EQ(FromMemory.Identity, FromFile.Identity);
  ASSERT_EQ(FromMemory.Elements.size(), FromFile.Elements.size());

  ManifestFiles None;
  None.HashFile = [](const std::string &) { return std::string(); };
  None.ReadImage = [](const std::string &, JamImageData &, std::string &Why) {
    Why = "not here";
    return FormatError::Io;
  };
  ManifestData Untouched;
  Untouched.Package = "untouched";
  EXPECT_EQ(statusOf(parseManifest(Text, "m.tcm", Dir, None, Untouched, Error)), TC_ERR_BAD_IMAGE);
  EXPECT_EQ(Untouched.Package, "untouched") << "Out is set only on success";
  EXPECT_NE(Error.find("m.tcm:"), std::string::npos) << Error;
}

// The format library's outcomes reach the runtime's callers as its own
// statuses (statusOf), and read as those statuses do.
TEST(Package, FormatErrorsMapToStatuses) {
  struct {
    FormatError Error;
    tc_status_t Status;
  } Map[] = {{FormatError::None, TC_OK},
             {FormatError::BadImage, TC_ERR_BAD_IMAGE},
             {FormatError::BadManifest, TC_ERR_BAD_MANIFEST},
             {FormatError::Io, TC_ERR_IO}};
  for (const auto &M : Map) {
    EXPECT_EQ(statusOf(M.Error), M.Status);
    EXPECT_STREQ(formatErrorString(M.Error), tc_status_string(M.Status));
  }
}

TEST(Package, ManifestSizeAndLinesAreBounded) {
  std::string Error;
  ManifestData M;
  std::string Huge(ManifestMaxBytes + 1, '#');
  EXPECT_EQ(statusOf(parseManifest(Huge, "m.tcm", ".", manifestFilesOnDisk(), M, Error)),
            TC_ERR_BAD_MANIFEST);
  EXPECT_NE(Error.find("larger than the limit"), std::string::npos) << Error;
  std::string Long = "twochains-manifest 1\n#" + std::string(ManifestMaxLine, 'x') + "\n";
  EXPECT_EQ(statusOf(parseManifest(Long, "m.tcm", ".", manifestFilesOnDisk(), M, Error)),
            TC_ERR_BAD_MANIFEST);
  EXPECT_NE(Error.find("m.tcm:2: line is longer than the limit"), std::string::npos) << Error;
}

} // namespace
