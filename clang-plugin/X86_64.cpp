//===- X86_64.cpp - x86_64 settings for jams ------------------------------===//
//
// The small PIC code model reaches every byte of the image RIP-relative with
// a 32-bit displacement, and the stack-protector canary is read from %fs,
// so the defaults already suit a jam. Larger code models use absolute
// 64-bit addresses and cannot travel.
//
//===----------------------------------------------------------------------===//
#include "TargetConfig.h"

using namespace clang;

namespace twochains {
namespace {

class X86_64TargetConfig final : public TargetConfig {
public:
  bool adjustForSandbox(CompilerInstance &CI) const override {
    DiagnosticsEngine &D = CI.getDiagnostics();
    D.Report(D.getCustomDiagID(DiagnosticsEngine::Error,
                               "sandboxed jams are built for aarch64 only so far "
                               "(docs/sandbox.md); build for --target=aarch64-linux-gnu"));
    return false;
  }

  bool adjust(CompilerInstance &CI) const override {
    std::string &Model = CI.getCodeGenOpts().CodeModel;
    if (Model == "default" || Model == "small")
      return true;
    DiagnosticsEngine &D = CI.getDiagnostics();
    D.Report(D.getCustomDiagID(DiagnosticsEngine::Error,
                               "-mcmodel=%0 is not supported for x86_64 jams: "
                               "they use the small code model"))
        << Model;
    return false;
  }
};

} // namespace

std::unique_ptr<TargetConfig> createX86_64TargetConfig() {
  return std::make_unique<X86_64TargetConfig>();
}

} // namespace twochains
