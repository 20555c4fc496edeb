//===- JamMetadata.cpp ----------------------------------------------------===//
#include "JamMetadata.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

using namespace llvm;

namespace twochains {

std::string contentHash(const Module &M) {
  std::string Text;
  raw_string_ostream OS(Text);
  // Print definitions only: the module identifier and source file name are
  // paths, and the same jam must hash the same wherever it is built.
  for (const GlobalVariable &GV : M.globals())
    OS << GV << '\n';
  for (const Function &F : M)
    OS << F << '\n';
  SHA256 Hash;
  Hash.update(Text);
  return toHex(Hash.final(), /*LowerCase=*/true);
}

static void emitStrings(Module &M, StringRef Name, StringRef Section,
                        ArrayRef<std::string> Strings) {
  std::string Blob;
  for (const std::string &S : Strings) {
    Blob += S;
    Blob.push_back('\0');
  }
  LLVMContext &Ctx = M.getContext();
  Constant *Init =
      ConstantDataArray::getString(Ctx, Blob, /*AddNull=*/false);
  auto *GV = new GlobalVariable(M, Init->getType(), /*isConstant=*/true,
                                GlobalValue::PrivateLinkage, Init, Name);
  GV->setSection(Section);
  GV->setAlignment(Align(1));
  // Non-allocated and excluded from final links: jamlink reads it, the
  // Local-Function library and the shipped image never contain it.
  GV->setMetadata(LLVMContext::MD_exclude, MDNode::get(Ctx, {}));
  appendToCompilerUsed(M, {GV});
}

void emitJamMetadata(Module &M, const JamInfo &Info,
                     ArrayRef<std::string> Imports) {
  std::vector<std::string> Lines;
  for (const auto &[Key, Value] : Info)
    Lines.push_back(Key + "=" + Value);
  emitStrings(M, "tc.jam.info", InfoSection, Lines);
  if (!Imports.empty())
    emitStrings(M, "tc.jam.imports", ImportsSection, Imports);
}

} // namespace twochains
