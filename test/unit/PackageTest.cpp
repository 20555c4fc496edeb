//===- PackageTest.cpp - Loading packages, import tables, running jams ----===//
#include "Package.h"

#include <gtest/gtest.h>
#include <cstring>
#include <dlfcn.h>
#include <sys/mman.h>
#include <vector>

using namespace twochains::rt;

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

  // The image, placed on a line that is not a page start, as in a mailbox.
  size_t MapSize = 4096 + E.Image.Bytes.size();
  void *Map = mmap(nullptr, MapSize, PROT_READ | PROT_WRITE | PROT_EXEC,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(Map, MAP_FAILED);
  uint8_t *Base = static_cast<uint8_t *>(Map) + 192;
  std::memcpy(Base, E.Image.Bytes.data(), E.Image.Bytes.size());
  prepareInjected(Base, Base, E);
  __builtin___clear_cache(reinterpret_cast<char *>(Base),
                          reinterpret_cast<char *>(Base + E.Image.Bytes.size()));
  IndirectPut Injected = {2, {{9, 99}, {5, -5}}};
  reinterpret_cast<JamEntry>(Base + E.Image.Entry)(nullptr, &Injected, sizeof Injected);
  EXPECT_EQ(Array[9], 99);
  EXPECT_EQ(Array[5], -5);
  munmap(Map, MapSize);
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
  P.isa = "aarch64"; // built for x86_64 only in this tree
  EXPECT_EQ(tc_package_load(&P, &Pkg), TC_ERR_UNKNOWN_PACKAGE);
  std::string Err = testing::internal::GetCapturedStderr();
  EXPECT_NE(Err.find("package 'stdlib' was not built for aarch64"), std::string::npos) << Err;
  EXPECT_EQ(Pkg, nullptr);
}

} // namespace
