//===- SandboxRegionTest.cpp - Sandbox regions, laid out and installed ----===//
//
// What a region promises before any jam runs (docs/sandbox.md), checked on
// this machine's memory map: 4 GiB aligned, guard zones never accessible,
// the call table read-only and the gates verified and read+execute, an
// image's imports bound to their services' gates through its GOTP cell
// (aarch64's in the text, decoding as two udf; x86-64's first in the data
// part), code executable only once verified as installed, statics
// read+write, images of one region apart. The images are this machine's
// code written here; on x86_64 one also runs (aarch64 runs under qemu in
// run-in-region.test).
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

using Code = std::vector<uint8_t>;

#if defined(__x86_64__)
/// x86-64 (SandboxX86.cpp): code from 0, the GOTP cell first in the data
/// part, the text padded with int3.
constexpr bool X86 = true;
constexpr uint64_t CodeStart = 0;
/// popq %r11 ; andl $-32, %r11d ; addq %gs:0, %r11 ; jmpq *%r11
const Code Ret = {0x41, 0x5b, 0x41, 0x83, 0xe3, 0xe0, 0x65, 0x4c, 0x03,
                  0x1c, 0x25, 0x00, 0x00, 0x00, 0x00, 0x41, 0xff, 0xe3};
const Code LoadThroughRegister = {0x48, 0x8b, 0x46, 0x08}; // movq 8(%rsi), %rax: memory-base
const Code Pad = {0xcc};                                   // int3
const char *const AddressRule = "";                        // an address's bytes decode as anything
#else
constexpr bool X86 = false;
constexpr uint64_t CodeStart = 8;
const Code Ret = {0xc0, 0x03, 0x5f, 0xd6};
const Code LoadThroughRegister = {0x20, 0x04, 0x40, 0xf9}; // ldr x0, [x1, #8]: memory-base
const Code Pad = {0, 0, 0, 0};                             // udf
const char *const AddressRule = "undecodable";             // an address's bytes
#endif

Code operator+(Code A, const Code &B) {
  A.insert(A.end(), B.begin(), B.end());
  return A;
}

/// A padded with traps to a bundle's end (x86-64: instructions never cross
/// one).
Code toBundleEnd(Code A) {
  while (X86 && (CodeStart + A.size()) % twochains::verify::X86BundleBytes)
    A = A + Pad;
  return A;
}

/// A sandboxed image of this machine's ISA: Code, padded to a line, and
/// DataSize bytes of 0x5a after the GOTP cell where that lies in the data
/// part.
JamImageData image(const Code &Text, std::vector<std::string> Imports = {}, uint64_t DataSize = 0,
                   uint64_t Bss = 0) {
  JamImageData I;
  I.Element = "probe";
  I.ISA = X86 ? "x86_64" : "aarch64";
  I.Sandbox = twochains::format::JamSandboxScheme;
  I.Entry = CodeStart;
  I.Align = 4096;
  I.Bytes.assign(CodeStart, 0);
  I.Bytes.insert(I.Bytes.end(), Text.begin(), Text.end());
  I.CodeSize = I.Bytes.size() - CodeStart;
  I.Bytes.resize((I.Bytes.size() + 63) / 64 * 64, X86 ? 0xcc : 0);
  I.TextSize = I.Bytes.size();
  if (X86) { // the GOTP cell, then the data
    I.GOTP = I.TextSize + twochains::format::JamDataDistance;
    I.Bytes.resize(I.Bytes.size() + 8, 0);
    DataSize = (DataSize + 8 + 63) / 64 * 64 - 8;
  }
  I.Bytes.resize(I.Bytes.size() + DataSize, 0x5a);
  I.DataSize = I.Bytes.size() - I.TextSize;
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
  EXPECT_TRUE(verifySandboxCode(Region.base() + L::ExitGate, 4096, L::ExitGate, V)) << V.Detail;
  unsigned Memset = sandboxServiceSlot("memset");
  ASSERT_NE(Memset, 0u);
  const uint8_t *Gate = Region.base() + L::ExitGate + L::GateStride * Memset;
  uint32_t Load;
  if (X86) {
    // callq *%gs:8*slot, ending the gate's first bundle.
    const uint8_t Call[] = {0x65, 0xff, 0x14, 0x25};
    EXPECT_EQ(std::memcmp(Gate + 24, Call, 4), 0);
    std::memcpy(&Load, Gate + 28, 4);
    EXPECT_EQ(Load, 8 * Memset);
    EXPECT_EQ(*reinterpret_cast<uint8_t *const *>(Region.base()), Region.base())
        << "the call table's first cell is not the region's base";
  } else {
    std::memcpy(&Load, Gate + 4, 4);
    EXPECT_EQ(Load, 0xF940037Eu | (Memset << 10)); // ldr x30, [x27, #8*slot]
  }
}

TEST_F(SandboxRegionTest, BindsImportsToTheirServicesThroughItsGotpCell) {
  SandboxedImage Installed;
  ASSERT_EQ(Region.install(image(Ret, {"memset", "memcpy"}), Installed, Error), TC_OK) << Error;
  uint64_t Cell;
  if (X86) {
    std::memcpy(&Cell, reinterpret_cast<const void *>(Installed.Statics), 8);
  } else {
    std::memcpy(&Cell, reinterpret_cast<const void *>(Installed.Code), 8);
    EXPECT_EQ(Cell >> 32 >> 16, 0u) << "the cell's high word is not a udf";
    EXPECT_EQ(uint32_t(Cell) >> 16, 0u) << "the cell's low word is not a udf";
  }
  ASSERT_EQ(Cell & ~uint64_t(0xFFFF), uintptr_t(Region.base()));
  auto *Table = reinterpret_cast<uint8_t *const *>(Cell);
  EXPECT_EQ(Table[0], Region.base() + L::ExitGate + L::GateStride * sandboxServiceSlot("memset"));
  EXPECT_EQ(Table[1], Region.base() + L::ExitGate + L::GateStride * sandboxServiceSlot("memcpy"));
  EXPECT_EQ(permissionsAt(Table), "r--p");
  EXPECT_EQ(Installed.Entry, reinterpret_cast<const uint8_t *>(Installed.Code) + CodeStart);
}

TEST_F(SandboxRegionTest, RefusesAnImportNoServiceServes) {
  SandboxedImage Installed;
  EXPECT_EQ(Region.install(image(Ret, {"printf"}), Installed, Error), TC_ERR_MISSING_IMPORT);
  EXPECT_NE(Error.find("'printf', which the sandbox does not serve"), std::string::npos) << Error;
}

TEST_F(SandboxRegionTest, RefusesAnImageNotLinkedForTheSandbox) {
  JamImageData Plain = image(Ret);
  Plain.Sandbox = 0;
  SandboxedImage Installed;
  EXPECT_EQ(Region.install(Plain, Installed, Error), TC_ERR_BAD_IMAGE);
  EXPECT_NE(Error.find("not linked for the sandbox"), std::string::npos) << Error;
}

TEST_F(SandboxRegionTest, NeverMakesCodeThatBreaksARuleExecutable) {
  SandboxedImage Installed;
  EXPECT_EQ(Region.install(image(LoadThroughRegister + Ret), Installed, Error), TC_ERR_BAD_IMAGE);
  EXPECT_NE(Error.find("memory-base at text offset " + std::to_string(CodeStart)),
            std::string::npos)
      << Error;
  EXPECT_EQ(permissionsAt(Region.base() + L::Code), "---p");
}

TEST_F(SandboxRegionTest, VerifiesTheTextAsInstalledWithItsFixups) {
  // A return, then traps to an 8-byte boundary and 8 bytes of traps as
  // linked (two udf, eight int3) that are an address of the image once its
  // fixup is applied.
  Code Text = Ret;
  while ((CodeStart + Text.size()) % 8)
    Text = Text + Pad;
  uint64_t At = CodeStart + Text.size();
  Text = Text + Pad + Pad;
  if (X86)
    Text = Text + Code(6, 0xcc);
  JamImageData I = image(Text);
  I.Fixups.push_back({At, twochains::format::FixupImage64, 0, 0, 8});
  SandboxedImage Installed;
  EXPECT_EQ(Region.install(I, Installed, Error), TC_ERR_BAD_IMAGE);
  if (X86) {
    // The address is added to the traps as linked: whatever it decodes
    // as, the first violation lies in its bytes.
    const std::string Lead = "as installed breaks the sandbox's rule ";
    size_t Where = Error.find(" at text offset ");
    ASSERT_NE(Error.find(Lead), std::string::npos) << Error;
    ASSERT_NE(Where, std::string::npos) << Error;
    uint64_t Offset = std::stoull(Error.substr(Where + 16));
    EXPECT_GE(Offset, At) << Error;
    EXPECT_LT(Offset, At + 8) << Error;
  } else {
    EXPECT_NE(Error.find(std::string("as installed breaks the sandbox's rule ") + AddressRule +
                         " at text offset " + std::to_string(At)),
              std::string::npos)
        << Error;
  }
}

TEST_F(SandboxRegionTest, MakesCodeReadExecuteAndStaticsReadWrite) {
  SandboxedImage Installed;
  ASSERT_EQ(Region.install(image(Ret, {}, 56, 4096), Installed, Error), TC_OK) << Error;
  uint64_t Data = X86 ? 64 : 56; // x86-64's GOTP cell comes first
  EXPECT_EQ(permissionsAt(reinterpret_cast<void *>(Installed.Code)), "r-xp");
  EXPECT_EQ(Installed.Statics, Installed.Code + twochains::format::JamDataDistance + 64);
  EXPECT_EQ(Installed.StaticsEnd - Installed.Statics, Data + 4096u);
  EXPECT_EQ(permissionsAt(reinterpret_cast<void *>(Installed.Statics)), "rw-p");
  EXPECT_EQ(permissionsAt(reinterpret_cast<void *>(Installed.StaticsEnd - 1)), "rw-p");
  EXPECT_EQ(*reinterpret_cast<const uint8_t *>(Installed.Statics + Data - 56), 0x5a);
}

TEST_F(SandboxRegionTest, KeepsTheImagesOfOneRegionApart) {
  std::vector<SandboxedImage> All;
  for (uint64_t Bss : {0u, 70000u, 3u << 20, 64u}) {
    SandboxedImage Installed;
    ASSERT_EQ(
        Region.install(image(toBundleEnd(Ret + Pad) + Ret, {"memcpy"}, 128, Bss), Installed, Error),
        TC_OK)
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
TEST_F(SandboxRegionTest, RunsAJamOnItsStackWithItsPayloadInside) {
  // movl $42, %gs:(%esi) ; movl %edx, %gs:4(%esi), then the masked return:
  // the payload copied in, changed through the region, copied back out.
  const Code Store = {0x65, 0x67, 0xc7, 0x06, 0x2a, 0x00, 0x00, 0x00, 0x65, 0x67, 0x89, 0x56, 0x04};
  SandboxedImage Installed;
  ASSERT_EQ(Region.install(image(Store + Ret), Installed, Error), TC_OK) << Error;
  uint8_t Payload[8] = {};
  auto Hold = SandboxRegion::hold();
  ASSERT_EQ(Region.run(Installed, nullptr, Payload, sizeof Payload, Error), TC_OK) << Error;
  uint32_t Words[2];
  std::memcpy(Words, Payload, sizeof Words);
  EXPECT_EQ(Words[0], 42u);
  EXPECT_EQ(Words[1], sizeof Payload);
}

TEST_F(SandboxRegionTest, AServiceWritingTheJamsStackCannotRedirectTheRuntimesReturn) {
  // memcpy(%rsp - 16, payload, 8) through the import table: the 8 bytes
  // land where the gate's `callq` pushed its return address, which the
  // runtime's service returned through once (a jump to 0x4141...).
  const Code Setup = {0x48, 0x8d, 0x7c, 0x24, 0xf0,                       // leaq -16(%rsp), %rdi
                      0xba, 0x08, 0x00, 0x00, 0x00,                       // movl $8, %edx
                      0x48, 0x8b, 0x05, 0,    0,    0, 0,                 // movq GOTP(%rip), %rax
                      0x65, 0x67, 0x48, 0x8b, 0x00,                       // movq %gs:(%eax), %rax
                      0x0f, 0x1f, 0x84, 0,    0,    0, 0, 0, 0x66, 0x90}; // nops to the bundle
  const Code Call = {0x0f, 0x1f, 0x84, 0,    0,    0,    0,    0,    0x0f, 0x1f, 0x84,
                     0,    0,    0,    0,    0,    0x66, 0x90, 0x83, 0xe0, 0xe0, // andl $-32, %eax
                     0x65, 0x48, 0x03, 0x04, 0x25, 0,    0,    0,    0,          // addq %gs:0, %rax
                     0xff, 0xd0};                                                // callq *%rax
  JamImageData I = image(Setup + Call + Ret, {"memcpy"});
  ASSERT_EQ(Setup.size(), 32u);
  ASSERT_EQ(Call.size(), 32u);
  uint32_t Disp = uint32_t(I.GOTP - 17);
  std::memcpy(I.Bytes.data() + 13, &Disp, 4);
  SandboxedImage Installed;
  ASSERT_EQ(Region.install(I, Installed, Error), TC_OK) << Error;
  uint8_t Payload[8];
  std::memset(Payload, 0x41, sizeof Payload);
  auto Hold = SandboxRegion::hold();
  EXPECT_EQ(Region.run(Installed, nullptr, Payload, sizeof Payload, Error), TC_OK) << Error;
}
#endif

} // namespace
