//===- PassRegistration.cpp - The passes under opt and in clang's pipeline ===//
//
//   opt -load-pass-plugin=TwoChainsJamPass.so -passes='twochains-jam-rewrite<element=x>'
//   opt -load-pass-plugin=TwoChainsJamPass.so -passes='twochains-jam-local<package=p>'
//
// Parameters: element, package, entry, payload-size, payload-init, link=<bc>
// (repeatable), no-rewrite.
//
//===----------------------------------------------------------------------===//
#include "JamPasses.h"
#include "PassRegistration.h"

#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace twochains {

static constexpr StringLiteral RewritePassName = "twochains-jam-rewrite";
static constexpr StringLiteral LocalPassName = "twochains-jam-local";

static bool parseJamPipeline(StringRef Name, ModulePassManager &MPM,
                             ArrayRef<PassBuilder::PipelineElement>) {
  for (auto [PassName, Mode] : {std::pair{RewritePassName, JamMode::Inject},
                                std::pair{LocalPassName, JamMode::Local}}) {
    if (!PassBuilder::checkParametrizedPassName(Name, PassName))
      continue;
    auto Opts = PassBuilder::parsePassParameters(
        [Mode = Mode](StringRef Params) {
          return parseJamPassParams(Params, Mode);
        },
        Name, PassName);
    if (!Opts) {
      errs() << PassName << ": " << toString(Opts.takeError()) << '\n';
      return false;
    }
    // Under opt the parts are linked just before the jam pass; clang links
    // them at the start of its pipeline instead (Plugin.cpp).
    if (!Opts->LinkParts.empty())
      MPM.addPass(JamLinkPartsPass(Opts->LinkParts));
    addJamPass(MPM, *Opts);
    return true;
  }
  return false;
}

void addJamPass(ModulePassManager &MPM, const JamOptions &Opts) {
  if (Opts.Mode == JamMode::Inject)
    MPM.addPass(JamRewritePass(Opts));
  else
    MPM.addPass(JamLocalPass(Opts));
}

void registerJamPipelineParsing(PassBuilder &PB) {
  PB.registerPipelineParsingCallback(parseJamPipeline);
}

} // namespace twochains

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "TwoChainsJam", "1",
          twochains::registerJamPipelineParsing};
}
