//===- VerifierFuzzer.cpp - the sandbox's verifier on any code ------------===//
//
// The verifier must decide on any bytes without crashing; and what it
// accepts is checked against a second opinion, LLVM's aarch64 disassembler
// (every extension on): no accepted instruction may be one the sandbox
// forbids by name (system, exception, pointer authentication, memory tags,
// SVE), branch through a register other than x28 (or x30 right after a
// runtime call's load, or a return through x30), reach memory through a
// base other than x27, x28 or sp, or write x27, x28, sp or x30 other than
// in the forms the sandbox admits (x30: followed by its guard, or a runtime
// call's load followed by `blr x30`). A disagreement aborts with the word
// and both views of it.
//
//===----------------------------------------------------------------------===//
#include "verify/Verify.h"

#include "LlvmDisassembler.h"

#include "llvm/Support/TargetSelect.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <regex>
#include <string>
#include <vector>

using namespace llvm;
using namespace twochains::verify;

namespace {

/// LLVM's aarch64 disassembler, every extension on.
struct Disassembler : twochains::fuzz::LlvmDisassembler {
  Disassembler() : LlvmDisassembler((initialize(), "aarch64-linux-gnu"), "+all") {}
  static void initialize() {
    LLVMInitializeAArch64TargetInfo();
    LLVMInitializeAArch64TargetMC();
    LLVMInitializeAArch64Disassembler();
  }

  /// The instruction as text, or empty where LLVM does not decode it.
  std::string text(uint32_t W) {
    uint8_t B[4] = {uint8_t(W), uint8_t(W >> 8), uint8_t(W >> 16), uint8_t(W >> 24)};
    uint64_t Size;
    return LlvmDisassembler::text(ArrayRef<uint8_t>(B, 4), Size);
  }
};

[[noreturn]] void disagree(uint32_t W, const std::string &Text, const char *Why) {
  std::fprintf(stderr, "fuzz-verifier: accepted %08x `%s`, which %s\n", W, Text.c_str(), Why);
  std::abort();
}

bool startsWith(const std::string &S, const char *P) { return S.rfind(P, 0) == 0; }

/// The register an instruction writes as its first operand (or, for a
/// pair load, second), by LLVM's text: "x28", "sp", ... or empty.
std::vector<std::string> writtenRegisters(const std::string &T, const std::string &Mnemonic) {
  static const char *const Reads[] = {"st",    "cmp",   "cmn", "tst", "ccmp",  "ccmn",  "prfm",
                                      "prfum", "b",     "cb",  "tb",  "fcmp",  "fccmp", "msr",
                                      "ret",   "br",    "blr", "nop", "yield", "dmb",   "dsb",
                                      "isb",   "clrex", "udf", "sb"};
  bool Writes = true;
  for (const char *R : Reads)
    if (startsWith(Mnemonic, R))
      Writes = false;
  if (startsWith(Mnemonic, "stx") || startsWith(Mnemonic, "stlx"))
    Writes = true; // the status register
  std::vector<std::string> Out;
  if (!Writes)
    return Out;
  static const std::regex First(R"(^\S+ (x\d+|w\d+|sp|wsp)[, ])");
  static const std::regex Pair(R"(^ld\S*p \S+, (x\d+|w\d+),)");
  // LSE's ld<op> and swp name the register they read first, the one they
  // write second.
  static const char *const Atomics[] = {"ldadd",  "ldclr",  "ldeor",  "ldset", "ldsmax",
                                        "ldsmin", "ldumax", "ldumin", "swp"};
  bool Atomic = false;
  for (const char *A : Atomics)
    Atomic |= startsWith(Mnemonic, A);
  static const std::regex Second(R"(^\S+ \S+, (x\d+|w\d+|xzr|wzr),)");
  std::smatch M;
  if (Atomic ? std::regex_search(T, M, Second) : std::regex_search(T, M, First))
    Out.push_back(M[1]);
  if (std::regex_search(T, M, Pair))
    Out.push_back(M[1]);
  for (std::string &R : Out)
    if (R[0] == 'w' && R != "wsp")
      R[0] = 'x';
    else if (R == "wsp")
      R = "sp";
  return Out;
}

/// LLVM's view of one accepted word; Previous and Next are the words
/// around it (0 at the ends).
void secondOpinion(Disassembler &D, uint32_t W, uint32_t Previous, uint32_t Next) {
  std::string T = D.text(W);
  if (T.empty())
    return; // unallocated or undefined encodings trap
  std::string Mnemonic = T.substr(0, T.find(' '));
  static const char *const Forbidden[] = {
      "svc",  "hvc",  "smc",  "brk",   "hlt",   "dcps", "sys",  "dc ",  "ic ",   "at ",   "tlbi",
      "eret", "pac",  "aut",  "xpac",  "bti",   "ldg",  "stg",  "st2g", "stzg",  "irg",   "gmi",
      "subp", "ldtr", "sttr", "ld64b", "st64b", "wf",   "braa", "brab", "blraa", "retaa", "retab"};
  for (const char *F : Forbidden)
    if (startsWith(T, F))
      disagree(W, T, "the sandbox forbids");
  if ((Mnemonic == "mrs" || Mnemonic == "msr") && T.find("FPCR") == std::string::npos &&
      T.find("FPSR") == std::string::npos && T.find("NZCV") == std::string::npos)
    disagree(W, T, "touches a system register");
  if (T.find(" z") != std::string::npos && T.find(" p") != std::string::npos)
    disagree(W, T, "looks like SVE");
  if (Mnemonic == "br" || Mnemonic == "blr") {
    bool RuntimeCall = T == "blr x30" && (Previous & 0xFFC003FFu) == 0xF940037Eu;
    if (T != Mnemonic + " x28" && !RuntimeCall)
      disagree(W, T, "branches through a register other than x28");
  }
  if (Mnemonic == "ret" && T != "ret")
    disagree(W, T, "returns through a register other than x30");
  static const std::regex Base(R"(\[(x[0-9]+|sp|w[0-9]+))");
  for (std::sregex_iterator I(T.begin(), T.end(), Base), E; I != E; ++I) {
    std::string R = (*I)[1];
    if (R != "x27" && R != "x28" && R != "sp")
      disagree(W, T, "reaches memory through another base");
  }
  static const std::regex Confine(R"(^add (x28|x30|sp), x27, w(\d+|zr), uxtw$)");
  bool Confines = std::regex_search(T, Confine);
  for (const std::string &R : writtenRegisters(T, Mnemonic)) {
    if (R == "x27")
      disagree(W, T, "writes x27");
    if ((R == "x28" || R == "sp") && !Confines &&
        !(R == "sp" && T.find("[sp") != std::string::npos))
      disagree(W, T, "writes x28 or sp other than as base + 32-bit offset");
    if (R == "x30" && !Confines) {
      std::string After = D.text(Next);
      bool Guarded = startsWith(After, "add x30, x27, w") &&
                     After.find("uxtw") != std::string::npos;
      bool RuntimeCall = (W & 0xFFC003FFu) == 0xF940037Eu && Next == 0xD63F03C0u;
      if (!Guarded && !RuntimeCall)
        disagree(W, T, "writes x30 and the next instruction does not confine it");
    }
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  static Disassembler D;
  SandboxLayout Layout;
  Violation V;
  if (!verifyAArch64(Data, Size, Layout, V)) {
    if (V.Broken == Rule::None || V.Offset >= Size + 4 || V.Instruction.empty())
      std::abort();
    return 0;
  }
  auto Word = [&](size_t I) {
    return I + 4 <= Size ? uint32_t(Data[I]) | uint32_t(Data[I + 1]) << 8 |
                               uint32_t(Data[I + 2]) << 16 | uint32_t(Data[I + 3]) << 24
                         : 0u;
  };
  for (size_t I = 0; I + 4 <= Size; I += 4)
    secondOpinion(D, Word(I), I ? Word(I - 4) : 0, Word(I + 4));
  return 0;
}
