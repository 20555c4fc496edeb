//===- X86VerifierFuzzer.cpp - the x86-64 verifier on any code ------------===//
//
// The verifier must decide on any bytes without crashing; and what it
// accepts is checked against a second opinion, LLVM's x86-64 disassembler,
// instruction by instruction from the start: its instructions must lie
// inside 32-byte bundles (a length the two decoders disagree on shows as
// a crossing); none may be one the sandbox forbids by name (system, I/O,
// frame, flag, segment-base and transactional instructions, returns, far
// branches; string instructions show as %es: or %rsi operands); memory
// must be reached as `%gs:` with 32-bit
// registers, through %rsp, %rip, or by lea and nops (which reach nothing);
// %rsp and %gs written only in the forms the sandbox admits; an indirect
// branch right after its mask and base. A disagreement aborts with the
// bytes and both views.
//
//===----------------------------------------------------------------------===//
#include "verify/Verify.h"

#include "LlvmDisassembler.h"

#include "llvm/Support/TargetSelect.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <regex>
#include <string>

using namespace llvm;
using namespace twochains::verify;

namespace {

/// LLVM's x86-64 disassembler, baseline features.
struct Disassembler : twochains::fuzz::LlvmDisassembler {
  Disassembler() : LlvmDisassembler((initialize(), "x86_64-linux-gnu"), "") {}
  static void initialize() {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86Disassembler();
  }
};

[[noreturn]] void disagree(const uint8_t *Data, size_t At, uint64_t Size, const std::string &Text,
                           const char *Why) {
  std::fprintf(stderr, "fuzz-verifier-x86: accepted at %zu [", At);
  for (uint64_t I = 0; I < Size; ++I)
    std::fprintf(stderr, "%s%02x", I ? " " : "", Data[At + I]);
  std::fprintf(stderr, "] `%s`, which %s\n", Text.c_str(), Why);
  std::abort();
}

bool startsWith(const std::string &S, const char *P) { return S.rfind(P, 0) == 0; }

/// LLVM's view of the accepted code, instruction by instruction.
void secondOpinion(Disassembler &D, const uint8_t *Data, size_t Size) {
  static const char *const Forbidden[] = {
      "syscall", "sysenter", "sysexit",  "sysret",   "int ",     "int1",      "into",
      "iret",    "in ",      "inb",      "inw",      "inl",      "out",       "hlt",
      "cli",     "sti",      "lgdt",     "lidt",     "lldt",     "ltr",       "cpuid",
      "rdtsc",   "rdpmc",    "wrgsbase", "wrfsbase", "rdgsbase", "rdfsbase",  "ret",
      "lret",    "leave",    "enter",    "popf",     "std",      "xbegin",    "xabort",
      "xend",    "wrpkru",   "ljmp",     "lcall",    "xlat",     "maskmov",   "vmaskmovdqu",
      "swapgs",  "fxsave",   "fxrstor",  "xsave",    "xrstor",   "lgs",       "lfs",
      "lss",     "mov %cr",  "mov %dr",  "vpgather", "vgather",  "vpscatter", "vscatter"};
  static const std::regex Memory(R"((%[a-z]s:)?(-?(0x)?[0-9a-f]*)\(([%,][^)]*)\))");
  static const std::regex Reg32(R"(^%(e[a-z]{2}|r\d+d)$)");
  std::string Previous[2];
  for (size_t At = 0; At < Size;) {
    uint64_t Length = 0;
    std::string T = D.text(ArrayRef<uint8_t>(Data + At, Size - At), Length);
    if (T.empty() || !Length)
      return; // Zydis knows it, LLVM does not: the CPU traps or both agree later
    if (At / X86BundleBytes != (At + Length - 1) / X86BundleBytes)
      disagree(Data, At, Length, T, "crosses a bundle by LLVM's length");
    // Traps, whatever their prefixes, reach nothing.
    if (T.find("int3") != std::string::npos || T.find("ud1") != std::string::npos ||
        T.find("ud2") != std::string::npos || T.find("ud0") != std::string::npos) {
      Previous[0] = Previous[1];
      Previous[1] = T;
      At += Length;
      continue;
    }
    // Prefixes LLVM prints as words of their own, which change nothing
    // checked here (segment ones apply to no operand when printed apart).
    static const std::regex Prefixes(
        R"(^((addr32|data16|data32|rex64|lock|rep|repne|cs|ds|es|ss|fs|gs|notrack) +)+)");
    T = std::regex_replace(T, Prefixes, "");
    // A SIB byte naming neither base nor index is the plain displacement.
    static const std::regex NoIndexAlone(R"(:\(,%[re]iz,\d\))");
    static const std::regex NoIndex(R"(\(,%[re]iz,\d\))");
    T = std::regex_replace(std::regex_replace(T, NoIndexAlone, ":0"), NoIndex, "");
    std::string Mnemonic = T.substr(0, T.find(' '));
    for (const char *F : Forbidden)
      if (startsWith(T, F))
        disagree(Data, At, Length, T, "the sandbox forbids");
    bool Reaches = !startsWith(Mnemonic, "lea") && !startsWith(Mnemonic, "nop") &&
                   !startsWith(Mnemonic, "ud") && !startsWith(Mnemonic, "int3");
    for (std::sregex_iterator I(T.begin(), T.end(), Memory), E; Reaches && I != E; ++I) {
      std::string Segment = (*I)[1], Inside = (*I)[4];
      std::string Base = Inside.substr(0, Inside.find(','));
      std::string Index = Inside.find(',') == std::string::npos
                              ? ""
                              : Inside.substr(Inside.find(',') + 1,
                                              Inside.find(',', Inside.find(',') + 1) -
                                                  Inside.find(',') - 1);
      if (Index == "%riz" || Index == "%eiz") // a SIB byte naming no index
        Index.clear();
      if (Segment == "%gs:") {
        if ((!Base.empty() && !std::regex_match(Base, Reg32)) ||
            (!Index.empty() && !std::regex_match(Index, Reg32)))
          disagree(Data, At, Length, T, "reaches %gs: through a 64-bit register");
      } else if (!Segment.empty()) {
        disagree(Data, At, Length, T, "reaches memory through a segment other than %gs");
      } else if (Base != "%rsp" && Base != "%rip") {
        disagree(Data, At, Length, T, "reaches memory without %gs, %rsp or %rip");
      } else if (!Index.empty()) {
        disagree(Data, At, Length, T, "indexes %rsp or %rip");
      }
    }
    // A %gs: displacement alone (movabs, or an absolute operand) stays
    // inside the region unless the address is 32-bit.
    static const std::regex Absolute(R"(%gs:(-?(0x)?[0-9a-f]+)(,|$))");
    std::smatch A;
    if (std::regex_search(T, A, Absolute)) {
      long long V = std::strtoll(A[1].str().c_str(), nullptr, 0);
      bool Addr32 = Length > 0 && std::memchr(Data + At, 0x67, Length) != nullptr;
      if (!Addr32 && (V < 0 || V >= (1ll << 32)))
        disagree(Data, At, Length, T, "reaches %gs: plus a displacement outside the region");
    }
    // AT&T writes its destination last.
    std::string Last = T.substr(T.rfind(' ') + 1);
    // Mnemonics whose last operand is read, not written.
    static const std::regex ReadsLast(
        R"(^(cmp|test|push|div|idiv|mul|bt[wlq]?|ucomis|comis|v?ptest|imul[wlq]? [^,]*)$|^(div|idiv|mul|imul)[bwlq]?$)");
    bool LastRead = std::regex_match(Mnemonic, ReadsLast) || startsWith(Mnemonic, "cmp") ||
                    startsWith(Mnemonic, "test") || startsWith(Mnemonic, "push") ||
                    (T.find(',') == std::string::npos &&
                     std::regex_match(Mnemonic, std::regex("^i?(div|mul)[bwlq]?$")));
    if ((Last == "%gs" || Last == "%fs" || Last == "%ss" || Last == "%ds" || Last == "%es") &&
        !LastRead)
      disagree(Data, At, Length, T, "writes a segment register");
    if ((Last == "%rsp" || Last == "%esp" || Last == "%sp" || Last == "%spl") && !LastRead) {
      bool Step = (Mnemonic == "subq" || Mnemonic == "addq" || Mnemonic == "andq") &&
                  T.find(" $") != std::string::npos && Last == "%rsp";
      bool LeaStep = Mnemonic == "leaq" && T.find("(%rsp), %rsp") != std::string::npos;
      bool Confined = Mnemonic == "movq" && startsWith(Previous[1], "addq %gs:0, %r") &&
                      startsWith(Previous[0], "movl %e");
      if (!Step && !LeaStep && !Confined)
        disagree(Data, At, Length, T, "writes %rsp other than as the sandbox admits");
    }
    if ((Mnemonic == "jmpq" || Mnemonic == "callq") &&
        startsWith(T.substr(Mnemonic.size() + 1), "*%r")) {
      if (!startsWith(Previous[1], "addq %gs:0, %r") || !startsWith(Previous[0], "andl $-32, %"))
        disagree(Data, At, Length, T, "branches through a register not masked and confined");
    }
    Previous[0] = Previous[1];
    Previous[1] = T;
    At += Length;
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  static Disassembler D;
  SandboxLayout Layout;
  Violation V;
  if (!verifyX86_64(Data, Size, Layout, V)) {
    if (V.Broken == Rule::None || V.Offset >= Size + 1 || V.Instruction.empty())
      std::abort();
    return 0;
  }
  secondOpinion(D, Data, Size);
  return 0;
}
