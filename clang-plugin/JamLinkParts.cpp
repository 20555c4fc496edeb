//===- JamLinkParts.cpp - A jam made of several C files -------------------===//
//
// The other files of a jam folder are compiled to bitcode (plugin argument
// `part`) and linked here into the entry's module before optimisation, with
// a C linker's rules: an external name defined twice is an error, file-scope
// (static) names of different files never collide (the linker renames
// them), and only what the entry's file reaches is kept. The parts' external
// names are then internal to the jam: calls between the files stay inside
// the image, and two jams of one package that carry the same library never
// clash in the Local-Function library.
//
//===----------------------------------------------------------------------===//
#include "JamPasses.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Transforms/IPO/Internalize.h"

using namespace llvm;

namespace twochains {

PreservedAnalyses JamLinkPartsPass::run(Module &M, ModuleAnalysisManager &) {
  if (Parts.empty())
    return PreservedAnalyses::all();
  LLVMContext &Ctx = M.getContext();
  auto Combined = std::make_unique<Module>("jam parts", Ctx);
  Combined->setTargetTriple(M.getTargetTriple());
  Combined->setDataLayout(M.getDataLayout());
  Linker PartsLinker(*Combined);
  // Where each strong external definition comes from, to name both files
  // of a duplicate (the IR linker would name neither, or, for the entry's
  // module, silently keep the first).
  StringMap<std::string> DefinedIn;
  auto Strong = [](const GlobalValue &GV) {
    return !GV.isDeclaration() && GV.hasExternalLinkage() && GV.hasName();
  };
  for (const GlobalValue &GV : M.global_values())
    if (Strong(GV))
      DefinedIn[GV.getName()] = M.getSourceFileName();
  for (const std::string &Path : Parts) {
    auto Buf = MemoryBuffer::getFile(Path);
    if (!Buf) {
      Ctx.emitError("cannot read jam part '" + Path +
                    "': " + Buf.getError().message());
      return PreservedAnalyses::none();
    }
    Expected<std::unique_ptr<Module>> Part = parseBitcodeFile(**Buf, Ctx);
    if (!Part) {
      Ctx.emitError("jam part '" + Path + "' is not LLVM bitcode (" +
                    toString(Part.takeError()) +
                    "): compile it with -fplugin-arg-twochains-part -emit-llvm");
      return PreservedAnalyses::none();
    }
    if ((*Part)->getTargetTriple() != M.getTargetTriple()) {
      Ctx.emitError("jam part '" + Path + "' was compiled for '" +
                    (*Part)->getTargetTriple() + "', the jam for '" +
                    M.getTargetTriple() + "'");
      return PreservedAnalyses::none();
    }
    // Messages name the C file the author wrote, not the bitcode a build
    // folder holds: the IR linker's by the module's name, ours by Source.
    std::string Source = (*Part)->getSourceFileName();
    if (Source.empty())
      Source = Path;
    (*Part)->setModuleIdentifier(Source);
    bool Duplicate = false;
    for (const GlobalValue &GV : (*Part)->global_values()) {
      if (!Strong(GV))
        continue;
      auto [It, New] = DefinedIn.try_emplace(GV.getName(), Source);
      if (!New) {
        Ctx.emitError("symbol '" + GV.getName() + "' is defined in " + It->second + " and in " +
                      Source +
                      ": a jam's files share one name space, as in a C link; leave a "
                      "file that is not part of the library (a test, an example) out "
                      "of the jam folder with its .tcignore (docs/porting.md)");
        Duplicate = true;
      }
    }
    if (Duplicate)
      return PreservedAnalyses::none();
    // True on error; the linker has reported it (e.g. "Linking globals
    // named 'f': symbol multiply defined!") through the context.
    if (PartsLinker.linkInModule(std::move(*Part)))
      return PreservedAnalyses::none();
  }
  // A weak definition in the entry's file yields to a part's strong one,
  // as in a C link (a library's default hook, replaced). Linking only what
  // the entry needs takes a part's definition only for a declaration, so
  // the weak one becomes that.
  for (GlobalValue &GV : M.global_values()) {
    GlobalValue *Other = Combined->getNamedValue(GV.getName());
    if (!GV.hasWeakLinkage() || GV.isDeclaration() || !Other || !Strong(*Other))
      continue;
    if (auto *F = dyn_cast<Function>(&GV))
      F->deleteBody();
    else if (auto *V = dyn_cast<GlobalVariable>(&GV))
      V->setInitializer(nullptr);
    else
      continue; // an alias keeps its target
    GV.setLinkage(GlobalValue::ExternalLinkage);
    cast<GlobalObject>(GV).setComdat(nullptr);
  }
  auto InternalizeParts = [](Module &Dest, const StringSet<> &FromParts) {
    internalizeModule(Dest, [&](const GlobalValue &GV) {
      return !GV.hasName() || !FromParts.contains(GV.getName());
    });
  };
  // On failure the linker has reported why through the context.
  Linker::linkModules(M, std::move(Combined), Linker::LinkOnlyNeeded, InternalizeParts);
  return PreservedAnalyses::none();
}

} // namespace twochains
