//===- AArch64Rewriter.cpp - Confining clang's aarch64 assembly -----------===//
//
// One pass over the lines: directives, labels and comments pass unchanged;
// each instruction is split into its mnemonic and operands, classified by
// what it does to the sandbox's registers, and replaced by its guarded
// form (docs/sandbox.md, "The compiler's rewrites"):
//
//   ldr x0, [x1]            ldr x0, [x27, w1, uxtw]
//   ldr x0, [x1, #8]        add x28, x27, w1, uxtw ; ldr x0, [x28, #8]
//   ldr x0, [x1, x2, lsl 3] add x26, x1, x2, lsl #3 ; ldr x0, [x27, w26, uxtw]
//   ldr x0, [x1, #8]!       add x1, x1, #8 ; add x28, x27, w1, uxtw ; ldr x0, [x28]
//   ldr x0, [x1], #8        ldr x0, [x27, w1, uxtw] ; add x1, x1, #8
//   sub sp, sp, #32         sub x26, sp, #32 ; add sp, x27, w26, uxtw
//   mov sp, x29             add sp, x27, w29, uxtw
//   ldp x29, x30, [sp], #16 ldp x29, x30, [sp], #16 ; add x30, x27, w30, uxtw
//   blr x8                  add x28, x27, w8, uxtw ; blr x28
//   brk #1                  udf #1   (both trap; only udf is admitted)
//
// Loads and stores through sp keep their immediates and writebacks: sp
// stays within the guard zones the verifier counts on.
//
//===----------------------------------------------------------------------===//
#include "AArch64Rewriter.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace llvm;

namespace twochains::sandbox {
namespace {

constexpr const char *LinkGuard = "add\tx30, x27, w30, uxtw";

/// The general register an operand names: 0-30, 31 for sp/wsp, -1 for none.
int registerNumber(StringRef Op, bool *IsSp = nullptr) {
  Op = Op.trim();
  if (IsSp)
    *IsSp = false;
  if (Op == "sp" || Op == "wsp") {
    if (IsSp)
      *IsSp = true;
    return 31;
  }
  if (Op == "lr")
    return 30;
  if (Op == "fp")
    return 29;
  if (Op.size() < 2 || (Op[0] != 'x' && Op[0] != 'w'))
    return -1;
  unsigned N;
  if (Op.drop_front().getAsInteger(10, N) || N > 30)
    return -1;
  return int(N);
}

/// Splits at the commas outside brackets and braces.
SmallVector<std::string, 4> splitOperands(StringRef S) {
  SmallVector<std::string, 4> Out;
  int Depth = 0;
  size_t Start = 0;
  for (size_t I = 0; I < S.size(); ++I) {
    char C = S[I];
    if (C == '[' || C == '{')
      ++Depth;
    else if (C == ']' || C == '}')
      --Depth;
    else if (C == ',' && Depth == 0) {
      Out.push_back(S.slice(Start, I).trim().str());
      Start = I + 1;
    }
  }
  StringRef Last = S.drop_front(Start).trim();
  if (!Last.empty())
    Out.push_back(Last.str());
  return Out;
}

/// Loads and stores of one register that also have a register-offset form,
/// so that `[xN]` can become `[x27, wN, uxtw]` without a guard.
bool hasRegisterOffsetForm(StringRef M) {
  static const StringSet<> Forms = {"ldr",  "str",   "ldrb",  "strb",  "ldrh",
                                    "strh", "ldrsb", "ldrsh", "ldrsw", "prfm"};
  return Forms.contains(M);
}

/// Mnemonics whose first operand is read, not written.
bool firstOperandIsRead(StringRef M) {
  static const StringSet<> Reads = {"cmp",   "cmn",    "tst", "ccmp", "ccmn",  "fcmp", "fcmpe",
                                    "fccmp", "fccmpe", "cbz", "cbnz", "tbz",   "tbnz", "br",
                                    "blr",   "ret",    "msr", "prfm", "prfum", "b",    "bl"};
  return Reads.contains(M) || M.starts_with("b.");
}

/// An immediate operand's value ("#16", "#-8", "#0x10").
bool immediateValue(StringRef Op, int64_t &Value) {
  Op = Op.trim();
  if (!Op.consume_front("#"))
    return false;
  bool Negative = Op.consume_front("-");
  uint64_t V;
  if (Op.getAsInteger(0, V))
    return false;
  Value = Negative ? -int64_t(V) : int64_t(V);
  return true;
}

/// `add xD, xD, #imm` or its sub for a negative one.
std::string addImmediate(int Reg, int64_t Value) {
  std::string R = "x" + std::to_string(Reg);
  return std::string(Value < 0 ? "sub\t" : "add\t") + R + ", " + R + ", #" +
         std::to_string(Value < 0 ? -Value : Value);
}

std::string confine(StringRef Dest, int Reg) {
  return "add\t" + Dest.str() + ", x27, w" + std::to_string(Reg) + ", uxtw";
}

struct Instruction {
  std::string Mnemonic;
  SmallVector<std::string, 4> Operands;
};

std::string render(const Instruction &I) {
  std::string S = "\t" + I.Mnemonic;
  for (size_t K = 0; K < I.Operands.size(); ++K)
    S += (K ? ", " : "\t") + I.Operands[K];
  return S;
}

class Rewriter {
public:
  Rewriter(StringRef Name) : Name(Name) {}
  Error line(StringRef Line, unsigned Number, std::string &Out);

private:
  Error rewriteMemory(Instruction &I, size_t At, SmallVectorImpl<std::string> &Before,
                      SmallVectorImpl<std::string> &After, StringRef Text, unsigned Number);
  Error fail(unsigned Number, StringRef Text, const Twine &Why) const {
    return createStringError(inconvertibleErrorCode(), Name + ":" + Twine(Number) +
                                                           ": cannot sandbox `" + Text.trim() +
                                                           "`: " + Why);
  }

  StringRef Name;
};

Error Rewriter::rewriteMemory(Instruction &I, size_t At, SmallVectorImpl<std::string> &Before,
                              SmallVectorImpl<std::string> &After, StringRef Text,
                              unsigned Number) {
  StringRef Op = I.Operands[At];
  bool PreIndex = Op.ends_with("]!");
  StringRef Inner = Op.drop_front().rsplit(']').first;
  SmallVector<std::string, 4> Parts = splitOperands(Inner);
  if (Parts.empty())
    return fail(Number, Text, "an empty memory operand");
  bool BaseIsSp;
  int Base = registerNumber(Parts[0], &BaseIsSp);
  if (Base < 0)
    return fail(Number, Text, "its base is not a general register");
  bool RegisterOffset = Parts.size() > 1 && registerNumber(Parts[1]) >= 0;
  bool PostIndex = At + 1 < I.Operands.size();
  std::string Rest;
  for (size_t K = 1; K < Parts.size(); ++K)
    Rest += (K > 1 ? ", " : "") + Parts[K];

  if (RegisterOffset) { // base plus a register, through x26
    Before.push_back("add\tx26, " + Parts[0] + ", " + Rest);
    I.Operands[At] = "[x27, w26, uxtw]";
    return Error::success();
  }
  if (BaseIsSp) {
    if (PostIndex && registerNumber(I.Operands[At + 1]) >= 0)
      return fail(Number, Text, "sp moved by a register");
    return Error::success();
  }
  if (Base == 27 || Base == 28)
    return Error::success(); // already confined (hand-written)
  if (PreIndex) {
    int64_t Value;
    if (!immediateValue(Rest, Value))
      return fail(Number, Text, "a pre-index that is not an immediate");
    Before.push_back(addImmediate(Base, Value));
    Before.push_back(confine("x28", Base));
    I.Operands[At] = "[x28]";
    return Error::success();
  }
  if (PostIndex) {
    std::string Step = I.Operands[At + 1];
    I.Operands.pop_back();
    if (hasRegisterOffsetForm(I.Mnemonic)) {
      I.Operands[At] = "[x27, w" + std::to_string(Base) + ", uxtw]";
    } else {
      Before.push_back(confine("x28", Base));
      I.Operands[At] = "[x28]";
    }
    int64_t Value;
    if (immediateValue(Step, Value))
      After.push_back(addImmediate(Base, Value));
    else if (registerNumber(Step) >= 0)
      After.push_back("add\tx" + std::to_string(Base) + ", x" + std::to_string(Base) + ", " + Step);
    else
      return fail(Number, Text, "a post-index that is neither immediate nor register");
    return Error::success();
  }
  int64_t Value = 0;
  bool NoOffset = Rest.empty() || (immediateValue(Rest, Value) && Value == 0);
  if (NoOffset && hasRegisterOffsetForm(I.Mnemonic)) {
    I.Operands[At] = "[x27, w" + std::to_string(Base) + ", uxtw]";
    return Error::success();
  }
  Before.push_back(confine("x28", Base));
  I.Operands[At] = Rest.empty() ? "[x28]" : "[x28, " + Rest + "]";
  return Error::success();
}

Error Rewriter::line(StringRef Line, unsigned Number, std::string &Out) {
  StringRef Code = Line.split("//").first.rtrim();
  StringRef Body = Code.ltrim();
  // Directives, labels, comments and blank lines pass unchanged.
  if (Body.empty() || Body.starts_with(".") || Body.starts_with("#") ||
      (!Code.empty() && !isSpace(Code[0]))) {
    Out += Line;
    Out += '\n';
    return Error::success();
  }
  Instruction I;
  size_t Space = Body.find_first_of(" \t");
  I.Mnemonic = Body.substr(0, Space).lower();
  if (Space != StringRef::npos)
    I.Operands = splitOperands(Body.substr(Space));
  SmallVector<std::string, 4> Before, After;

  size_t Memory = I.Operands.size();
  for (size_t K = 0; K < I.Operands.size(); ++K)
    if (StringRef(I.Operands[K]).starts_with("[")) {
      Memory = K;
      break;
    }
  StringRef M = I.Mnemonic;
  if (Memory < I.Operands.size()) {
    bool RuntimeCall = false;
    {
      StringRef Inner = StringRef(I.Operands[Memory]).drop_front();
      RuntimeCall = registerNumber(splitOperands(Inner.rsplit(']').first)[0]) == 27;
    }
    if (Error E = rewriteMemory(I, Memory, Before, After, Body, Number))
      return E;
    // A load (or an exclusive store's status) into x30 is confined again.
    bool Writes = !M.starts_with("st") || M.starts_with("stx") || M.starts_with("stlx");
    for (size_t K = 0; K < Memory && Writes && !RuntimeCall; ++K)
      if (registerNumber(I.Operands[K]) == 30) {
        After.push_back(LinkGuard);
        break;
      }
  } else if (M == "brk") {
    // __builtin_trap: a trap the sandbox admits (udf), with the same number.
    I.Mnemonic = "udf";
  } else if ((M == "br" || M == "blr") && I.Operands.size() == 1) {
    int Target = registerNumber(I.Operands[0]);
    if (Target < 0)
      return fail(Number, Body, "a branch through something other than a register");
    if (Target != 28) {
      Before.push_back(confine("x28", Target));
      I.Operands[0] = "x28";
    }
  } else if (!I.Operands.empty() && !firstOperandIsRead(M)) {
    bool IsSp;
    int Dest = registerNumber(I.Operands[0], &IsSp);
    if (IsSp) {
      int Source = I.Operands.size() == 2 ? registerNumber(I.Operands[1]) : -1;
      if (M == "mov" && Source >= 0 && Source != 31) {
        I = Instruction{"add", {"sp", "x27", "w" + std::to_string(Source), "uxtw"}};
      } else {
        I.Operands[0] = "x26";
        After.push_back("add\tsp, x27, w26, uxtw");
      }
    } else if (Dest == 30) {
      After.push_back(LinkGuard);
    }
  }
  for (const std::string &B : Before)
    Out += "\t" + B + "\n";
  Out += render(I) + "\n";
  for (const std::string &A : After)
    Out += "\t" + A + "\n";
  return Error::success();
}

} // namespace

Expected<std::string> rewriteAArch64(StringRef Assembly, StringRef Name) {
  std::string Out;
  Out.reserve(Assembly.size() * 5 / 4);
  Rewriter R(Name);
  unsigned Number = 0;
  while (!Assembly.empty()) {
    StringRef Line;
    std::tie(Line, Assembly) = Assembly.split('\n');
    if (Error E = R.line(Line, ++Number, Out))
      return E;
  }
  return Out;
}

} // namespace twochains::sandbox
