//===- X86Rewriter.cpp - Confining clang's x86-64 assembly ----------------===//
//
// One pass over the lines, as AArch64Rewriter.cpp: directives, labels and
// comments pass unchanged; each instruction is classified by what it does
// to memory, %rsp and control, and replaced by its guarded form
// (docs/sandbox.md, "x86-64"). The output starts `.bundle_align_mode 5`,
// so that no instruction crosses a 32-byte bundle, and each guard sequence
// is one `.bundle_lock`:
//
//   movq 8(%rax,%rbx,4), %rcx   movq %gs:8(%eax,%ebx,4), %rcx
//   subq $512, %rsp             subq $512, %rsp ; pushq %rax ; popq %rax
//   movq %rbp, %rsp             movl %ebp, %ebp ; addq %gs:0, %rbp ; movq %rbp, %rsp
//   leave                       (that) ; popq %rbp
//   jmpq *%rax                  andl $-32, %eax ; addq %gs:0, %rax ; jmpq *%rax
//   callq *8(%rax)              movq %gs:8(%eax), %r11 ; (masked) callq *%r11
//   callq f                     callq f, ending its bundle
//   retq                        popq %r11 ; andl $-32, %r11d ; addq %gs:0, %r11 ; jmpq *%r11
//
// Operands through %rsp with small displacements and %rip-relative ones
// keep their form. The plugin compiles sandboxed jams without jump tables,
// red zone, stack protector or frame pointer, with functions aligned to
// bundles (X86_64.cpp), so what is left to refuse here is what no guard
// can confine: %fs (thread storage), string instructions, addresses of
// symbols outside the region, other writes to %rsp. A constant address is
// an offset into the region (`movq $1, 16` becomes `movq $1, %gs:16`).
//
//===----------------------------------------------------------------------===//
#include "X86Rewriter.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

using namespace llvm;

namespace twochains::sandbox {
namespace {

/// The 32-bit name of a 64-bit general register ("%rax" -> "%eax"), or
/// empty if Reg is not one.
std::string low32(StringRef Reg) {
  return StringSwitch<std::string>(Reg)
      .Case("%rax", "%eax")
      .Case("%rbx", "%ebx")
      .Case("%rcx", "%ecx")
      .Case("%rdx", "%edx")
      .Case("%rsi", "%esi")
      .Case("%rdi", "%edi")
      .Case("%rbp", "%ebp")
      .Case("%rsp", "%esp")
      .Cases("%r8", "%r9", "%r10", "%r11", "%r12", "%r13", "%r14", "%r15", Reg.str() + "d")
      .Default("");
}

/// Splits at the commas outside parentheses.
SmallVector<std::string, 4> splitOperands(StringRef S) {
  SmallVector<std::string, 4> Out;
  int Depth = 0;
  std::string Cur;
  for (char C : S) {
    if (C == '(')
      ++Depth;
    else if (C == ')')
      --Depth;
    if (C == ',' && Depth == 0) {
      Out.push_back(StringRef(Cur).trim().str());
      Cur.clear();
      continue;
    }
    Cur += C;
  }
  if (!StringRef(Cur).trim().empty())
    Out.push_back(StringRef(Cur).trim().str());
  return Out;
}

/// A memory operand: [segment:]displacement(base, index, scale).
struct Memory {
  std::string Segment, Displacement, Base, Index, Scale;
  bool HasParens = false;
};

/// Parses Op as a memory operand; false for registers and immediates.
bool parseMemory(StringRef Op, Memory &M) {
  if (Op.starts_with("$") || (Op.starts_with("%") && !Op.contains(':') && !Op.contains('(')))
    return false;
  if (Op.size() > 4 && Op[0] == '%' && Op[3] == ':') {
    M.Segment = Op.take_front(3).str();
    Op = Op.drop_front(4);
  }
  size_t Open = Op.find('(');
  if (Open == StringRef::npos) {
    M.Displacement = Op.str();
    return true;
  }
  M.HasParens = true;
  M.Displacement = Op.take_front(Open).str();
  StringRef Inner = Op.drop_front(Open + 1);
  Inner = Inner.take_front(Inner.rfind(')'));
  SmallVector<StringRef, 3> Parts;
  Inner.split(Parts, ',');
  if (!Parts.empty())
    M.Base = Parts[0].trim().str();
  if (Parts.size() > 1)
    M.Index = Parts[1].trim().str();
  if (Parts.size() > 2)
    M.Scale = Parts[2].trim().str();
  return true;
}

class Rewriter {
public:
  explicit Rewriter(StringRef Name) : Name(Name) {}
  Error line(StringRef Line, unsigned Number, std::string &Out);

private:
  StringRef Name;
  Error fail(unsigned Number, StringRef Text, const Twine &Why) {
    return createStringError(inconvertibleErrorCode(), Name + ":" + Twine(Number) + ": " + Why +
                                                           ": `" + Text.trim() + "`" +
                                                           " (docs/sandbox.md, \"x86-64\")");
  }
  Error confineMemory(std::string &Op, unsigned Number, StringRef Text);
};

Error Rewriter::confineMemory(std::string &Op, unsigned Number, StringRef Text) {
  Memory M;
  if (!parseMemory(Op, M))
    return Error::success();
  if (M.Segment == "%fs" || M.Segment == "%gs")
    return fail(Number, Text, "thread-local storage (" + M.Segment + ") in a sandboxed jam");
  if (!M.Segment.empty())
    return fail(Number, Text, "a segment override in a sandboxed jam");
  if (M.Base == "%rip")
    return Error::success();
  if (!M.HasParens || (M.Base.empty() && M.Index.empty())) {
    // A constant address is an offset into the region, as on aarch64.
    int64_t D = 0;
    if (StringRef(M.Displacement).getAsInteger(0, D) || D < 0 || D > INT32_MAX)
      return fail(Number, Text, "an absolute address in a sandboxed jam");
    Op = "%gs:" + M.Displacement;
    return Error::success();
  }
  if (M.Base == "%rsp" && M.Index.empty()) {
    int64_t D = 0;
    if (M.Displacement.empty() ||
        (!StringRef(M.Displacement).getAsInteger(0, D) && D >= -65536 && D <= 65536))
      return Error::success();
  }
  std::string Base = M.Base.empty() ? "" : low32(M.Base);
  std::string Index = M.Index.empty() ? "" : low32(M.Index);
  if ((!M.Base.empty() && Base.empty()) || (!M.Index.empty() && Index.empty()))
    return fail(Number, Text, "memory through a register that is not a 64-bit general one");
  Op = "%gs:" + M.Displacement + "(" + Base;
  if (!Index.empty())
    Op += "," + Index + (M.Scale.empty() ? "" : "," + M.Scale);
  Op += ")";
  return Error::success();
}

/// A masked branch through Reg (64-bit): one bundle, a call ending it.
void maskedBranch(std::string &Out, StringRef Mnemonic, StringRef Reg, bool Call) {
  Out += Call ? "\t.bundle_lock align_to_end\n" : "\t.bundle_lock\n";
  Out += "\tandl\t$-32, " + low32(Reg) + "\n";
  Out += "\taddq\t%gs:0, " + Reg.str() + "\n";
  Out += "\t" + Mnemonic.str() + "\t*" + Reg.str() + "\n";
  Out += "\t.bundle_unlock\n";
}

/// %rsp := Reg, confined to the region first (Reg changes only if it lay
/// outside it).
void confinedStackMove(std::string &Out, StringRef Reg) {
  Out += "\t.bundle_lock\n";
  Out += "\tmovl\t" + low32(Reg) + ", " + low32(Reg) + "\n";
  Out += "\taddq\t%gs:0, " + Reg.str() + "\n";
  Out += "\tmovq\t" + Reg.str() + ", %rsp\n";
  Out += "\t.bundle_unlock\n";
}

bool isStringInstruction(StringRef M, const SmallVector<std::string, 4> &Ops) {
  for (const char *P : {"movs", "stos", "lods", "scas", "cmps", "ins", "outs"})
    if (M.starts_with(P) && (Ops.empty() || StringRef(Ops.back()).contains("%es:")) &&
        M.size() <= strlen(P) + 1)
      return true;
  return M.starts_with("rep");
}

Error Rewriter::line(StringRef Line, unsigned Number, std::string &Out) {
  StringRef Code = Line.split('#').first.rtrim();
  StringRef Body = Code.ltrim();
  // Directives, labels, comments and blank lines pass unchanged.
  if (Body.empty() || Body.starts_with(".") || (!Code.empty() && !isSpace(Code[0]))) {
    Out += Line;
    Out += '\n';
    return Error::success();
  }
  std::string Prefix;
  StringRef Rest = Body;
  for (;;) {
    StringRef Word = Rest.take_until([](char C) { return isSpace(C); });
    if (Word != "lock" && Word != "notrack")
      break;
    Prefix += Word.str() + " ";
    Rest = Rest.drop_front(Word.size()).ltrim();
  }
  size_t Space = Rest.find_first_of(" \t");
  std::string Mnemonic = Rest.substr(0, Space).lower();
  SmallVector<std::string, 4> Ops;
  if (Space != StringRef::npos)
    Ops = splitOperands(Rest.substr(Space));
  StringRef M = Mnemonic;

  if (isStringInstruction(M, Ops))
    return fail(Number, Body, "a string instruction (it reaches memory through %rsi and %rdi)");
  if (M == "ret" || M == "retq") {
    Out += "\t.bundle_lock\n\tpopq\t%r11\n\tandl\t$-32, %r11d\n\taddq\t%gs:0, %r11\n"
           "\tjmpq\t*%r11\n\t.bundle_unlock\n";
    return Error::success();
  }
  if (M == "leave" || M == "leaveq") {
    confinedStackMove(Out, "%rbp");
    Out += "\tpopq\t%rbp\n";
    return Error::success();
  }
  bool Call = M == "call" || M == "callq", Jump = M == "jmp" || M == "jmpq";
  if ((Call || Jump) && Ops.size() == 1 && StringRef(Ops[0]).starts_with("*")) {
    std::string Target = Ops[0].substr(1);
    if (low32(Target).empty()) { // through memory: loaded into %r11 first
      if (Error E = confineMemory(Target, Number, Body))
        return E;
      Out += "\tmovq\t" + Target + ", %r11\n";
      Target = "%r11";
    }
    maskedBranch(Out, Call ? "callq" : "jmpq", Target, Call);
    return Error::success();
  }
  if (Call) {
    Out += "\t.bundle_lock align_to_end\n\t" + Rest.str() + "\n\t.bundle_unlock\n";
    return Error::success();
  }
  // Branches name labels, not memory.
  bool Reaches = !M.starts_with("lea") && !M.starts_with("nop") && !M.starts_with("j") &&
                 !M.starts_with("loop");
  if (Reaches)
    for (std::string &Op : Ops)
      if (Error E = confineMemory(Op, Number, Body))
        return E;
  // Writes to %rsp: AT&T names the destination last.
  bool WritesSp = !Ops.empty() &&
                  (Ops.back() == "%rsp" || Ops.back() == "%esp" || Ops.back() == "%sp") &&
                  !M.starts_with("cmp") && !M.starts_with("test") && !M.starts_with("push");
  std::string Text = "\t" + Prefix + Mnemonic;
  for (size_t K = 0; K < Ops.size(); ++K)
    Text += (K ? ", " : "\t") + Ops[K];
  if (!WritesSp) {
    Out += Text + "\n";
    return Error::success();
  }
  bool Step = Ops.back() == "%rsp" && Ops.size() == 2 &&
              ((StringRef(Ops[0]).starts_with("$") &&
                (M == "subq" || M == "addq" || M == "andq")) ||
               (M == "leaq" && StringRef(Ops[0]).ends_with("(%rsp)")));
  if (Step) {
    // The next instruction touches the stack where %rsp now is.
    Out += "\t.bundle_lock\n" + Text + "\n\tpushq\t%rax\n\t.bundle_unlock\n\tpopq\t%rax\n";
    return Error::success();
  }
  if ((M == "movq" || M == "mov") && Ops.size() == 2 && Ops[1] == "%rsp" &&
      !low32(Ops[0]).empty() && Ops[0] != "%rsp") {
    confinedStackMove(Out, Ops[0]);
    return Error::success();
  }
  return fail(Number, Body, "a write to %rsp the sandbox cannot confine");
}

} // namespace

Expected<std::string> rewriteX86_64(StringRef Assembly, StringRef Name) {
  std::string Out = "\t.bundle_align_mode 5\n";
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
