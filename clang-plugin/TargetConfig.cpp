//===- TargetConfig.cpp - Settings every ISA shares -----------------------===//
#include "TargetConfig.h"

#include "clang/Basic/TargetInfo.h"
#include "llvm/TargetParser/Triple.h"

using namespace clang;

namespace twochains {

bool configureJamTarget(CompilerInstance &CI, bool Sandbox) {
  DiagnosticsEngine &D = CI.getDiagnostics();
  CodeGenOptions &CG = CI.getCodeGenOpts();
  const llvm::Triple &T = CI.getTarget().getTriple();

  if (CI.getLangOpts().CPlusPlus || CI.getLangOpts().ObjC) {
    // The entry is found and exported by its C name.
    D.Report(D.getCustomDiagID(DiagnosticsEngine::Error,
                               "jams are C sources: compile with -x c"));
    return false;
  }

  std::unique_ptr<TargetConfig> Config;
  switch (T.getArch()) {
  case llvm::Triple::x86_64:
    Config = createX86_64TargetConfig();
    break;
  case llvm::Triple::aarch64:
    Config = createAArch64TargetConfig();
    break;
  default:
    D.Report(D.getCustomDiagID(DiagnosticsEngine::Error,
                               "jams can be built for x86_64 and aarch64; "
                               "target '%0' is not supported"))
        << T.str();
    return false;
  }

  if (!T.isOSLinux() || !T.isOSBinFormatELF()) {
    D.Report(D.getCustomDiagID(DiagnosticsEngine::Error,
                               "jams are built for Linux ELF targets; target "
                               "'%0' is not supported"))
        << T.str();
    return false;
  }

  if (CG.PrepareForLTO || CG.PrepareForThinLTO) {
    // The rewrite must see the final code of the jam, which LTO would only
    // produce at link time, without the plugin.
    D.Report(D.getCustomDiagID(DiagnosticsEngine::Error,
                               "-flto is not supported for jams"));
    return false;
  }

  // Instrumentation calls a runtime of its own (sanitizer, profiler, mcount,
  // __morestack) by names the backend picks after the jam pass has run.
  const char *Instrumentation = nullptr;
  if (!CI.getLangOpts().Sanitize.empty())
    Instrumentation = "-fsanitize";
  else if (CG.hasProfileClangInstr() || CG.hasProfileIRInstr() ||
           CG.hasProfileCSIRInstr())
    Instrumentation = "profile instrumentation";
  else if (CG.InstrumentForProfiling)
    Instrumentation = "-pg";
  else if (CG.InstrumentFunctions || CG.InstrumentFunctionsAfterInlining)
    Instrumentation = "-finstrument-functions";
  else if (CG.XRayInstrumentFunctions)
    Instrumentation = "-fxray-instrument";
  else if (CG.EnableSegmentedStacks)
    Instrumentation = "-fsplit-stack";
  if (Instrumentation) {
    D.Report(D.getCustomDiagID(DiagnosticsEngine::Error,
                               "%0 is not supported for jams: it calls a "
                               "runtime the jam cannot reach"))
        << Instrumentation;
    return false;
  }

  // A jam is copied to an address unknown at build time: position-independent
  // code is not an option but the premise.
  if (CG.RelocationModel != llvm::Reloc::PIC_) {
    D.Report(D.getCustomDiagID(DiagnosticsEngine::Warning,
                               "jams are always position independent; "
                               "-fno-pic is ignored"));
    CG.RelocationModel = llvm::Reloc::PIC_;
  }
  if (Sandbox && CI.getFrontendOpts().ProgramAction == frontend::EmitObj) {
    // Every ISA's guards are written by the sandbox's assembler, after
    // clang; its integrated assembler would emit the unguarded code.
    D.Report(
        D.getCustomDiagID(DiagnosticsEngine::Error,
                          "a sandboxed jam is assembled by the sandbox's rewriter, not by clang's "
                          "integrated assembler: compile with twochains-jamcc --sandbox"));
    return false;
  }
  return Config->adjust(CI) && (!Sandbox || Config->adjustForSandbox(CI));
}

} // namespace twochains
