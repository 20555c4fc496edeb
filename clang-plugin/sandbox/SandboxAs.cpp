//===- SandboxAs.cpp - The assembler clang calls for sandboxed jams -------===//
//
// twochains-jamcc --sandbox compiles with -fno-integrated-as and points
// clang (-B) at the folder holding this program as `as`: clang calls it as
// it would call GNU as,
//
//   as [-EL] [-march=...] [-mcpu=...] -o jam_x.o /tmp/jam_x-1234.s
//   as --64 -o jam_x.o /tmp/jam_x-1234.s                    (x86_64)
//
// and it rewrites the assembly into its sandboxed form (AArch64Rewriter.h,
// X86Rewriter.h),
// then assembles that with clang's own assembler. Other options of GNU as
// that clang may pass are accepted and ignored.
//
//===----------------------------------------------------------------------===//
#include "AArch64Rewriter.h"
#include "X86Rewriter.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

using namespace llvm;

static int usage() {
  errs()
      << "usage: twochains-sandbox-as [--64] [-march=<arch>] [-mcpu=<cpu>] -o <object> <input.s>\n"
         "       twochains-sandbox-as [--64] --emit-rewritten -o <output.s> <input.s>\n"
         "The assembler twochains-jamcc --sandbox has clang call: rewrites aarch64\n"
         "assembly (x86-64 with --64) into the sandbox's guarded form (docs/sandbox.md)\n"
         "and assembles it.\n"
         "Keep the rewritten assembly with TWOCHAINS_SANDBOX_KEEP=<file>.\n";
  return 2;
}

int main(int Argc, char **Argv) {
  InitLLVM X(Argc, Argv);
  std::string Output, Input;
  std::vector<std::string> Forward;
  bool EmitRewritten = false; // write the rewritten assembly to -o (tests)
  bool X86 = false;
  for (int I = 1; I < Argc; ++I) {
    StringRef A = Argv[I];
    if (A == "-o" && I + 1 < Argc)
      Output = Argv[++I];
    else if (A == "--help" || A == "-h")
      return usage(), 0;
    else if (A == "--emit-rewritten")
      EmitRewritten = true;
    else if (A.starts_with("-march=") || A.starts_with("-mcpu="))
      Forward.push_back(A.str());
    else if (A == "--64")
      X86 = true; // what clang passes for x86_64
    else if (A == "-" || !A.starts_with("-"))
      Input = A.str();
    // -EL, -mabi=lp64, --64, -g and the like: nothing to do.
  }
  if (Output.empty() || Input.empty())
    return usage();

  ErrorOr<std::unique_ptr<MemoryBuffer>> Source = MemoryBuffer::getFileOrSTDIN(Input);
  if (!Source) {
    WithColor::error(errs(), "twochains-sandbox-as")
        << Input << ": " << Source.getError().message() << "\n";
    return 1;
  }
  Expected<std::string> Rewritten = X86 ? twochains::sandbox::rewriteX86_64((*Source)->getBuffer(),
                                                                            Input)
                                        : twochains::sandbox::rewriteAArch64((*Source)->getBuffer(),
                                                                             Input);
  if (!Rewritten) {
    WithColor::error(errs(), "twochains-sandbox-as") << toString(Rewritten.takeError()) << "\n";
    return 1;
  }

  if (EmitRewritten) {
    std::error_code EC;
    raw_fd_ostream OS(Output, EC);
    if (EC) {
      WithColor::error(errs(), "twochains-sandbox-as") << Output << ": " << EC.message() << "\n";
      return 1;
    }
    OS << *Rewritten;
    return 0;
  }
  SmallString<128> Temp;
  int Fd;
  if (std::error_code EC = sys::fs::createTemporaryFile("jam-sandboxed", "s", Fd, Temp)) {
    WithColor::error(errs(), "twochains-sandbox-as")
        << "cannot create a temporary file: " << EC.message() << "\n";
    return 1;
  }
  {
    raw_fd_ostream OS(Fd, /*shouldClose=*/true);
    OS << *Rewritten;
  }
  if (const char *Keep = std::getenv("TWOCHAINS_SANDBOX_KEEP")) {
    std::error_code EC;
    raw_fd_ostream K(Keep, EC);
    if (!EC)
      K << *Rewritten;
  }
  std::vector<StringRef> Args = {TWOCHAINS_CLANG,
                                 X86 ? "--target=x86_64-linux-gnu" : "--target=aarch64-linux-gnu",
                                 "-c",
                                 "-x",
                                 "assembler",
                                 Temp,
                                 "-o",
                                 Output};
  for (const std::string &F : Forward)
    Args.push_back(F);
  std::string Error;
  int Status = sys::ExecuteAndWait(TWOCHAINS_CLANG, Args, std::nullopt, {}, 0, 0, &Error);
  sys::fs::remove(Temp);
  if (Status != 0) {
    WithColor::error(errs(), "twochains-sandbox-as")
        << "assembling the sandboxed form of " << Input << " failed"
        << (Error.empty() ? "" : ": " + Error) << "\n";
    return 1;
  }
  return 0;
}
