//===- AArch64.cpp - aarch64 settings for jams ----------------------------===//
//
// The default small code model addresses data with ADRP, which computes a
// 4 KiB page relative to the PC's page: moving the image by anything but a
// multiple of 4 KiB breaks it. The tiny code model uses ADR and LDR
// (literal), exact to the byte within +-1 MiB, which covers any jam.
//
// Two defaults of Linux toolchains would also reach outside the jam:
// outline atomics call helpers in libgcc, and the stack protector reads its
// canary from the global __stack_chk_guard.
//
//===----------------------------------------------------------------------===//
#include "TargetConfig.h"

#include "clang/Basic/LangOptions.h"
#include "clang/Basic/TargetOptions.h"
#include "llvm/ADT/STLExtras.h"

using namespace clang;

namespace twochains {
namespace {

class AArch64TargetConfig final : public TargetConfig {
public:
  bool adjust(CompilerInstance &CI) const override {
    DiagnosticsEngine &D = CI.getDiagnostics();
    std::string &Model = CI.getCodeGenOpts().CodeModel;
    if (Model != "default" && Model != "tiny") {
      D.Report(D.getCustomDiagID(
          DiagnosticsEngine::Error,
          "-mcmodel=%0 is not supported for aarch64 jams: they use the tiny "
          "code model, whose ADR and LDR (literal) stay exact when the image "
          "moves"))
          << Model;
      return false;
    }
    Model = "tiny";

    std::vector<std::string> &Features = CI.getTargetOpts().Features;
    llvm::erase(Features, "+outline-atomics");
    Features.push_back("-outline-atomics");

    LangOptions &LO = CI.getLangOpts();
    if (LO.getStackProtector() != LangOptions::SSPOff) {
      D.Report(D.getCustomDiagID(
          DiagnosticsEngine::Warning,
          "the stack protector is not applied to aarch64 jams: its canary is "
          "the global __stack_chk_guard, which a jam cannot reach before its "
          "prologue"));
      LO.setStackProtector(LangOptions::SSPOff);
    }
    return true;
  }
};

} // namespace

std::unique_ptr<TargetConfig> createAArch64TargetConfig() {
  return std::make_unique<AArch64TargetConfig>();
}

} // namespace twochains
