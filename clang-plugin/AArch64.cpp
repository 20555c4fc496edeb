//===- AArch64.cpp - aarch64 settings for jams ----------------------------===//
//
// The small code model addresses data with ADRP, which computes a 4 KiB
// page relative to the PC's page. jamlink turns each ADRP within the text
// into an ADR (exact to the byte, +-1 MiB, so the image may move by any
// line), and keeps the ADRPs that reach the data part, which lies
// JamDataDistance (1 GiB) away, beyond the tiny code model's reach; such an
// image is placed on a 4 KiB boundary.
//
// Two defaults of Linux toolchains would also reach outside the jam:
// outline atomics call helpers in libgcc, and the stack protector reads its
// canary from the global __stack_chk_guard.
//
//===----------------------------------------------------------------------===//
#include "TargetConfig.h"

#include "clang/Basic/LangOptions.h"
#include "clang/Basic/TargetOptions.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendOptions.h"
#include "llvm/ADT/STLExtras.h"

using namespace clang;

namespace twochains {
namespace {

class AArch64TargetConfig final : public TargetConfig {
public:
  bool adjust(CompilerInstance &CI) const override {
    DiagnosticsEngine &D = CI.getDiagnostics();
    std::string &Model = CI.getCodeGenOpts().CodeModel;
    if (Model != "default" && Model != "small") {
      D.Report(D.getCustomDiagID(
          DiagnosticsEngine::Error,
          "-mcmodel=%0 is not supported for aarch64 jams: they use the small "
          "code model, whose ADRP reaches the jam's static data 1 GiB from "
          "its code"))
          << Model;
      return false;
    }
    Model = "small";

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

  // The sandbox's registers (docs/sandbox.md): x27 holds the region's base,
  // x28 the confined address, x26 the rewriter's scratch. Reserved, the
  // backend never allocates them, and the assembler hook
  // (twochains-sandbox-as) can use them in the sequences it inserts.
  bool adjustForSandbox(CompilerInstance &CI) const override {
    std::vector<std::string> &Features = CI.getTargetOpts().Features;
    for (const char *R : {"+reserve-x26", "+reserve-x27", "+reserve-x28"})
      Features.push_back(R);
    return true;
  }
};

} // namespace

std::unique_ptr<TargetConfig> createAArch64TargetConfig() {
  return std::make_unique<AArch64TargetConfig>();
}

} // namespace twochains
