//===- Plugin.cpp - The clang plugin: -fplugin=<plugin>.so ----------------===//
//
// Loading the plugin is all a user does:
//
//   clang-19 -x c -O2 -fplugin=<prefix>/lib/twochains/TwoChainsJam.so -c jam_x.amc
//
// It runs before code generation (no -plugin flag needed), checks the jam at
// source level, adapts code generation to the ISA, and appends the jam pass
// to the end of clang's optimisation pipeline through
// CodeGenOptions::PassBuilderCallbacks.
//
// Arguments: -fplugin-arg-twochains-<arg>, where <arg> is one of
//   mode=inject|local   inject (default) ships code; local builds the
//                       Local-Function library's copy
//   package=<name>      package name (required in local mode)
//   element=<name>      element name (default: from jam_<name>.amc)
//   part                this file is one of a jam's other sources: no
//                       entry; compile to bitcode (-emit-llvm -c)
//   link=<file.bc>      link a part into this jam (repeatable)
//   no-static-warning   do not warn on writable static data
//   sandbox             code for the verified sandbox (twochains-jamcc --sandbox)
//   no-rewrite          debugging: skip the GOTP rewrite
//   help                print this list
//
//===----------------------------------------------------------------------===//
#include "JamChecker.h"
#include "JamOptions.h"
#include "JamPasses.h"
#include "PassRegistration.h"
#include "TargetConfig.h"

#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendPluginRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/raw_ostream.h"

using namespace clang;

namespace twochains {
namespace {

constexpr const char *PluginHelp =
    "Two-Chains jam plugin: -fplugin-arg-twochains-<arg>\n"
    "  mode=inject|local  inject (default): the code travels in messages\n"
    "                     local: the copy for the Local-Function library\n"
    "  package=<name>     package name (required in local mode)\n"
    "  element=<name>     element name (default: from jam_<name>.amc)\n"
    "  part               compile one of a jam's other C files, which has no\n"
    "                     entry, to bitcode (with -emit-llvm -c)\n"
    "  link=<file.bc>     link such a part into this jam (repeatable)\n"
    "  no-static-warning  do not warn on writable static data (it persists\n"
    "                     on the receiver; docs/writing-jams.md)\n"
    "  sandbox            code for the sandbox of untrusted peers (aarch64;\n"
    "                     docs/sandbox.md): use twochains-jamcc --sandbox,\n"
    "                     which also assembles it with the sandbox's rewriter\n"
    "  no-rewrite         debugging: keep outside references as they are\n"
    "  help               print this help\n";

class JamAction : public PluginASTAction {
public:
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &CI,
                                                 StringRef) override {
    auto Opts = std::make_shared<JamOptions>(Parsed);
    if (configureJamTarget(CI, Parsed.Sandbox) && !Parsed.Part) {
      // The checker fills Opts before code generation; the pass reads it
      // when the pipeline runs. A part is linked into its jam's module and
      // rewritten there, with the rest of the jam.
      CI.getCodeGenOpts().PassBuilderCallbacks.push_back(
          [Opts](llvm::PassBuilder &PB) {
            if (!Opts->LinkParts.empty())
              PB.registerPipelineStartEPCallback(
                  [Opts](llvm::ModulePassManager &MPM, llvm::OptimizationLevel) {
                    MPM.addPass(JamLinkPartsPass(Opts->LinkParts));
                  });
            PB.registerOptimizerLastEPCallback(
                [Opts](llvm::ModulePassManager &MPM, llvm::OptimizationLevel) {
                  addJamPass(MPM, *Opts);
                });
          });
    }
    return createJamChecker(CI, Opts);
  }

  bool ParseArgs(const CompilerInstance &CI,
                 const std::vector<std::string> &Args) override {
    DiagnosticsEngine &D = CI.getDiagnostics();
    unsigned BadArg = D.getCustomDiagID(
        DiagnosticsEngine::Error,
        "unknown Two-Chains plugin argument '%0' (see -fplugin-arg-twochains-help)");
    unsigned BadMode = D.getCustomDiagID(
        DiagnosticsEngine::Error,
        "invalid Two-Chains plugin mode '%0': expected 'inject' or 'local'");
    bool OK = true;
    for (const std::string &Arg : Args) {
      auto [Key, Value] = StringRef(Arg).split('=');
      if (Key == "mode") {
        if (Value == "inject")
          Parsed.Mode = JamMode::Inject;
        else if (Value == "local")
          Parsed.Mode = JamMode::Local;
        else {
          D.Report(BadMode) << Value;
          OK = false;
        }
      } else if (Key == "package") {
        Parsed.Package = Value.str();
      } else if (Key == "element") {
        Parsed.Element = Value.str();
      } else if (Arg == "no-static-warning") {
        Parsed.NoStaticWarning = true;
      } else if (Arg == "part") {
        Parsed.Part = true;
      } else if (Key == "link" && !Value.empty()) {
        Parsed.LinkParts.push_back(Value.str());
      } else if (Arg == "sandbox") {
        Parsed.Sandbox = true;
      } else if (Arg == "no-rewrite") {
        Parsed.SkipRewrite = true;
      } else if (Arg == "help") {
        llvm::outs() << PluginHelp;
      } else {
        D.Report(BadArg) << Arg;
        OK = false;
      }
    }
    if (OK && Parsed.Mode == JamMode::Local && Parsed.Package.empty()) {
      D.Report(D.getCustomDiagID(DiagnosticsEngine::Error,
                                 "local mode needs a package name: "
                                 "-fplugin-arg-twochains-package=<name>"));
      OK = false;
    }
    if (OK && Parsed.Part && !Parsed.LinkParts.empty()) {
      D.Report(D.getCustomDiagID(DiagnosticsEngine::Error,
                                 "a jam part cannot link other parts: pass "
                                 "-fplugin-arg-twochains-link= to the entry's "
                                 "compilation"));
      OK = false;
    }
    if (OK && Parsed.Part &&
        CI.getFrontendOpts().ProgramAction != frontend::EmitBC) {
      D.Report(D.getCustomDiagID(DiagnosticsEngine::Error,
                                 "a jam part is compiled to bitcode for its "
                                 "jam to link: add -emit-llvm -c"));
      OK = false;
    }
    return OK;
  }

  ActionType getActionType() override { return AddBeforeMainAction; }

private:
  JamOptions Parsed;
};

} // namespace
} // namespace twochains

static FrontendPluginRegistry::Add<twochains::JamAction>
    X("twochains", "check and rewrite Two-Chains jams");
