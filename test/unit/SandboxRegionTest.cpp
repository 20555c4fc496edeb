//===- SandboxRegionTest.cpp - Sandbox regions, laid out and installed ----===//
//
// What a region promises before any jam runs (docs/sandbox.md), checked on
// this machine's memory map: 4 GiB aligned, guard zones never accessible,
// the call table read-only and the gates verified and read+execute, an
// image's imports bound to their services' gates through a GOTP cell that
// decodes as two udf, code executable only once verified as installed,
// statics read+write, images of one region apart. The images are aarch64
// words written here; running them needs aarch64 (run-in-region.test,
// under qemu).
//
//===----------------------------------------------------------------------===//
#include "sandbox/Region.h"
#include "sandbox/Services.h"
#include "verify/Verify.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace twochains::rt;
using L = SandboxLayout;

namespace {

constexpr uint32_t Ret = 0xD65F03C0u;
constexpr uint32_t LoadThroughX1 = 0xF9400420u; // ldr x0, [x1, #8]: memory-base

/// A sandboxed aarch64 image: the GOTP cell, then Code, padded to a line.
JamImageData image(const std::vector<uint32_t> &Code, std::vector<std::string> Imports = {},
                   uint64_t DataSize = 0, uint64_t Bss = 0) {
  JamImageData I;
  I.Element = "probe";
  I.ISA = "aarch64";
  I.Sandbox = twochains::format::JamSandboxScheme;
  I.Entry = 8;
  I.Align = 4096;
  I.Bytes.assign(8, 0);
  for (uint32_t W : Code)
    for (int B = 0; B < 4; ++B)
      I.Bytes.push_back(uint8_t(W >> (8 * B)));
  I.CodeSize = I.Bytes.size() - 8;
  I.Bytes.resize((I.Bytes.size() + 63) / 64 * 64);
  I.TextSize = I.Bytes.size();
  I.DataSize = DataSize;
  I.Bytes.resize(I.Bytes.size() + DataSize, 0x5a);
  I.ZeroFillSize = Bss;
  I.Imports = std::move(Imports);
  return I;
}

/// The permissions /proc/self/maps gives the page at At ("r-xp"), or ""
/// if nothing is mapped there.
std::string permissionsAt(const void *At) {
  FILE *F = std::fopen("/proc/self/maps", "r");
  if (!F)
    return "?";
  char Line[512];
  std::string Found;
  while (std::fgets(Line, sizeof Line, F)) {
    unsigned long Begin, End;
    char Perms[8];
    if (std::sscanf(Line, "%lx-%lx %7s", &Begin, &End, Perms) == 3 && uintptr_t(At) >= Begin &&
        uintptr_t(At) < End) {
      Found = Perms;
      break;
    }
  }
  std::fclose(F);
  return Found;
}

class SandboxRegionTest : public ::testing::Test {
protected:
  void SetUp() override { ASSERT_EQ(Region.create(Error), TC_OK) << Error; }
  SandboxRegion Region;
  std::string Error;
};

TEST_F(SandboxRegionTest, IsFourGiBAlignedBetweenGuardsNoAccessReaches) {
  uint8_t *Base = Region.base();
  EXPECT_EQ(uintptr_t(Base) % L::RegionBytes, 0u);
  EXPECT_EQ(permissionsAt(Base - 1), "---p");
  EXPECT_EQ(permissionsAt(Base - L::GuardBytes), "---p");
  EXPECT_EQ(permissionsAt(Base + L::RegionBytes), "---p");
  EXPECT_EQ(permissionsAt(Base + L::RegionBytes + L::GuardBytes - 1), "---p");
  EXPECT_EQ(permissionsAt(Base), "r--p");               // the call table
  EXPECT_EQ(permissionsAt(Base + L::ExitGate), "r-xp"); // the gates
  EXPECT_EQ(permissionsAt(Base + L::Code), "---p");     // no image yet
  EXPECT_EQ(permissionsAt(Base + L::Stack), "rw-p");
}

TEST_F(SandboxRegionTest, ItsGatesVerifyAndCallTheirSlots) {
  twochains::verify::Violation V;
  EXPECT_TRUE(twochains::verify::verifyAArch64(Region.base() + L::ExitGate, 4096,
                                               twochains::verify::SandboxLayout(), V))
      << V.Detail;
  unsigned Memset = sandboxServiceSlot("memset");
  ASSERT_NE(Memset, 0u);
  uint32_t Load;
  std::memcpy(&Load, Region.base() + L::ExitGate + L::GateBytes * Memset + 4, 4);
  EXPECT_EQ(Load, 0xF940037Eu | (Memset << 10)); // ldr x30, [x27, #8*slot]
}

TEST_F(SandboxRegionTest, BindsImportsToTheirServicesThroughAGotpCellThatIsTwoUdf) {
  SandboxedImage Installed;
  ASSERT_EQ(Region.install(image({Ret}, {"memset", "memcpy"}), Installed, Error), TC_OK) << Error;
  uint64_t Cell;
  std::memcpy(&Cell, reinterpret_cast<const void *>(Installed.Code), 8);
  EXPECT_EQ(Cell >> 32 >> 16, 0u) << "the cell's high word is not a udf";
  EXPECT_EQ(uint32_t(Cell) >> 16, 0u) << "the cell's low word is not a udf";
  ASSERT_EQ(Cell & ~uint64_t(0xFFFF), uintptr_t(Region.base()));
  auto *Table = reinterpret_cast<uint8_t *const *>(Cell);
  EXPECT_EQ(Table[0], Region.base() + L::ExitGate + L::GateBytes * sandboxServiceSlot("memset"));
  EXPECT_EQ(Table[1], Region.base() + L::ExitGate + L::GateBytes * sandboxServiceSlot("memcpy"));
  EXPECT_EQ(permissionsAt(Table), "r--p");
  EXPECT_EQ(Installed.Entry, reinterpret_cast<const uint8_t *>(Installed.Code) + 8);
}

TEST_F(SandboxRegionTest, RefusesAnImportNoServiceServes) {
  SandboxedImage Installed;
  EXPECT_EQ(Region.install(image({Ret}, {"printf"}), Installed, Error), TC_ERR_MISSING_IMPORT);
  EXPECT_NE(Error.find("'printf', which the sandbox does not serve"), std::string::npos) << Error;
}

TEST_F(SandboxRegionTest, RefusesAnImageNotLinkedForTheSandbox) {
  JamImageData Plain = image({Ret});
  Plain.Sandbox = 0;
  SandboxedImage Installed;
  EXPECT_EQ(Region.install(Plain, Installed, Error), TC_ERR_BAD_IMAGE);
  EXPECT_NE(Error.find("not linked for the sandbox"), std::string::npos) << Error;
}

TEST_F(SandboxRegionTest, NeverMakesCodeThatBreaksARuleExecutable) {
  SandboxedImage Installed;
  EXPECT_EQ(Region.install(image({LoadThroughX1, Ret}), Installed, Error), TC_ERR_BAD_IMAGE);
  EXPECT_NE(Error.find("memory-base at text offset 8"), std::string::npos) << Error;
  EXPECT_EQ(permissionsAt(Region.base() + L::Code), "---p");
}

TEST_F(SandboxRegionTest, VerifiesTheTextAsInstalledWithItsFixups) {
  // ret, then 8 bytes that are zero as linked (two udf) and an address of
  // the image once its fixup is applied.
  JamImageData I = image({Ret, 0, 0, 0});
  I.Fixups.push_back({16, twochains::format::FixupImage64, 0, 0, 8});
  SandboxedImage Installed;
  EXPECT_EQ(Region.install(I, Installed, Error), TC_ERR_BAD_IMAGE);
  EXPECT_NE(Error.find("as installed breaks the sandbox's rule undecodable at text offset 16"),
            std::string::npos)
      << Error;
}

TEST_F(SandboxRegionTest, MakesCodeReadExecuteAndStaticsReadWrite) {
  SandboxedImage Installed;
  ASSERT_EQ(Region.install(image({Ret}, {}, 64, 4096), Installed, Error), TC_OK) << Error;
  EXPECT_EQ(permissionsAt(reinterpret_cast<void *>(Installed.Code)), "r-xp");
  EXPECT_EQ(Installed.Statics, Installed.Code + twochains::format::JamDataDistance + 64);
  EXPECT_EQ(Installed.StaticsEnd - Installed.Statics, 64u + 4096u);
  EXPECT_EQ(permissionsAt(reinterpret_cast<void *>(Installed.Statics)), "rw-p");
  EXPECT_EQ(permissionsAt(reinterpret_cast<void *>(Installed.StaticsEnd - 1)), "rw-p");
  EXPECT_EQ(*reinterpret_cast<const uint8_t *>(Installed.Statics), 0x5a);
}

TEST_F(SandboxRegionTest, KeepsTheImagesOfOneRegionApart) {
  std::vector<SandboxedImage> All;
  for (uint64_t Bss : {0u, 70000u, 3u << 20, 64u}) {
    SandboxedImage Installed;
    ASSERT_EQ(Region.install(image({Ret, Ret, Ret}, {"memcpy"}, 128, Bss), Installed, Error), TC_OK)
        << Error;
    All.push_back(Installed);
  }
  auto Apart = [](uintptr_t A, uintptr_t AEnd, uintptr_t B, uintptr_t BEnd) {
    return AEnd <= B || BEnd <= A;
  };
  uintptr_t Base = uintptr_t(Region.base());
  for (size_t I = 0; I < All.size(); ++I) {
    EXPECT_GE(All[I].Code, Base + L::Code);
    EXPECT_LE(All[I].StaticsEnd, Base + L::Stack);
    for (size_t J = 0; J < I; ++J) {
      EXPECT_TRUE(Apart(All[I].Code, All[I].CodeEnd, All[J].Code, All[J].CodeEnd));
      EXPECT_TRUE(Apart(All[I].Statics, All[I].StaticsEnd, All[J].Statics, All[J].StaticsEnd));
      EXPECT_TRUE(Apart(All[I].Code, All[I].CodeEnd, All[J].Statics, All[J].StaticsEnd));
    }
  }
}

#if defined(__x86_64__)
TEST_F(SandboxRegionTest, RunsNothingWhereTheIsaHasNoSandbox) {
  SandboxedImage Installed;
  ASSERT_EQ(Region.install(image({Ret}), Installed, Error), TC_OK) << Error;
  uint8_t Payload[8] = {};
  auto Hold = SandboxRegion::hold();
  EXPECT_EQ(Region.run(Installed, nullptr, Payload, sizeof Payload, Error), TC_ERR_REFUSED);
  EXPECT_NE(Error.find("sandboxed jams run on aarch64"), std::string::npos) << Error;
}
#endif

} // namespace
