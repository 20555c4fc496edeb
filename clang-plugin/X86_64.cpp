//===- X86_64.cpp - x86_64 settings for jams ------------------------------===//
//
// The small PIC code model reaches every byte of the image RIP-relative with
// a 32-bit displacement, and the stack-protector canary is read from %fs,
// so the defaults already suit a jam. Larger code models use absolute
// 64-bit addresses and cannot travel. A sandboxed jam needs more
// (adjustForSandbox).
//
//===----------------------------------------------------------------------===//
#include "TargetConfig.h"

#include "clang/Frontend/CompilerInstance.h"

using namespace clang;

namespace twochains {
namespace {

class X86_64TargetConfig final : public TargetConfig {
public:
  /// The sandbox's rewriter (clang-plugin/sandbox/X86Rewriter.cpp) confines
  /// memory operands, %rsp and branches; what it cannot confine, clang is
  /// told not to emit: jump tables (their targets are not bundles), the red
  /// zone (a stack step's touch pushes below %rsp), the stack protector
  /// (its canary is in %fs) and the frame pointer (an epilogue's
  /// `leaq -N(%rbp), %rsp`). Functions start bundles, as masked calls to
  /// them land there.
  bool adjustForSandbox(CompilerInstance &CI) const override {
    CodeGenOptions &CG = CI.getCodeGenOpts();
    CG.NoUseJumpTables = true;
    CG.DisableRedZone = true;
    CG.setFramePointer(CodeGenOptions::FramePointerKind::None);
    LangOptions &L = CI.getLangOpts();
    L.setStackProtector(LangOptions::SSPOff);
    L.FunctionAlignment = 5;
    return true;
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
