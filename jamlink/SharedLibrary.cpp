//===- SharedLibrary.cpp --------------------------------------------------===//
//
// The vector the receiver indexes by element ID, laid out as
// include/twochains/local_vector.h declares it.
//
// It is generated as IR, compiled by the LLVM backend in this process, and
// linked with the objects by LLD in this process.
//
//===----------------------------------------------------------------------===//
#include "SharedLibrary.h"
#include "InputObject.h"
#include "JamAbi.h"
#include "ManifestFormat.h"

#include "twochains/local_vector.h"

#include "lld/Common/Driver.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Triple.h"

LLD_HAS_DRIVER(elf)

using namespace llvm;

namespace twochains::jamlink {
namespace {

struct LocalElement {
  std::string Name;
  std::string Entry, PayloadSize, PayloadInit;
  unsigned ID = 0;
};

Error sharedError(const Twine &Msg) {
  return createStringError(inconvertibleErrorCode(), Msg);
}

/// Emits the vector object for the ISA of the inputs into Path.
Error emitVector(StringRef Package, ArrayRef<LocalElement> Elements,
                 unsigned Count, uint16_t Machine, StringRef Path) {
  InitializeAllTargetInfos();
  InitializeAllTargets();
  InitializeAllTargetMCs();
  InitializeAllAsmPrinters();
  std::string TripleName = Machine == ELF::EM_AARCH64
                               ? "aarch64-unknown-linux-gnu"
                               : "x86_64-unknown-linux-gnu";
  std::string Err;
  const Target *T = TargetRegistry::lookupTarget(TripleName, Err);
  if (!T)
    return sharedError("cannot generate the element vector: " + Err);
  std::unique_ptr<TargetMachine> TM(T->createTargetMachine(
      TripleName, "generic", "", TargetOptions(), Reloc::PIC_));

  LLVMContext Ctx;
  Module M("tc_local_vector", Ctx);
  M.setTargetTriple(TripleName);
  M.setDataLayout(TM->createDataLayout());
  PointerType *Ptr = PointerType::getUnqual(Ctx);
  Type *I32 = Type::getInt32Ty(Ctx);
  StructType *ElemTy = StructType::create(Ctx, {Ptr, Ptr, Ptr, Ptr}, "tc_local_element");
  StructType *VecTy = StructType::create(Ctx, {I32, I32, Ptr, Ptr}, "tc_local_vector");

  auto String = [&](StringRef S) -> Constant * {
    Constant *Init = ConstantDataArray::getString(Ctx, S);
    return new GlobalVariable(M, Init->getType(), true,
                              GlobalValue::PrivateLinkage, Init, ".str");
  };
  auto Function = [&](StringRef Name) -> Constant * {
    if (Name.empty())
      return ConstantPointerNull::get(Ptr);
    return cast<Constant>(
        M.getOrInsertFunction(Name, FunctionType::get(Type::getVoidTy(Ctx), false))
            .getCallee());
  };
  std::vector<Constant *> Slots(Count, ConstantAggregateZero::get(ElemTy));
  for (const LocalElement &E : Elements)
    Slots[E.ID] = ConstantStruct::get(
        ElemTy, {String(E.Name), Function(E.Entry), Function(E.PayloadSize),
                 Function(E.PayloadInit)});
  auto *ArrTy = ArrayType::get(ElemTy, Count);
  auto *Table = new GlobalVariable(M, ArrTy, true, GlobalValue::PrivateLinkage,
                                   ConstantArray::get(ArrTy, Slots), "elements");
  new GlobalVariable(
      M, VecTy, true, GlobalValue::ExternalLinkage,
      ConstantStruct::get(VecTy, {ConstantInt::get(I32, TC_LOCAL_VECTOR_ABI),
                                  ConstantInt::get(I32, Count),
                                  String(Package), Table}),
      TC_LOCAL_VECTOR_SYMBOL);

  std::error_code EC;
  ToolOutputFile Out(Path, EC, sys::fs::OF_None);
  if (EC)
    return sharedError("cannot write " + Path + ": " + EC.message());
  legacy::PassManager PM;
  if (TM->addPassesToEmitFile(PM, Out.os(), nullptr, CodeGenFileType::ObjectFile))
    return sharedError("cannot emit the element vector for " + TripleName);
  PM.run(M);
  Out.keep();
  return Error::success();
}

} // namespace

Error linkSharedLibrary(const SharedOptions &Opts) {
  if (Opts.Inputs.empty())
    return sharedError("--shared needs at least one local-mode object");
  std::vector<LocalElement> Elements;
  std::vector<std::string> Errors;
  std::string Package = Opts.Package;
  uint16_t Machine = 0;
  for (const std::string &Path : Opts.Inputs) {
    auto Obj = InputObject::open(Path);
    if (!Obj) {
      Errors.push_back(toString(Obj.takeError()));
      continue;
    }
    const StringMap<std::string> &Info = (*Obj)->Info;
    if (Info.lookup(format::fact::Mode) != format::fact::ModeLocal) {
      Errors.push_back(Path + ": not a local-mode jam object (build it with "
                              "-fplugin-arg-twochains-mode=local)");
      continue;
    }
    if (Machine && (*Obj)->Machine != Machine) {
      Errors.push_back(Path + ": is for another ISA than " + Opts.Inputs[0]);
      continue;
    }
    Machine = (*Obj)->Machine;
    if (Package.empty())
      Package = Info.lookup(format::fact::Package);
    if (Info.lookup(format::fact::Package) != Package) {
      Errors.push_back(Path + ": belongs to package '" + Info.lookup(format::fact::Package) +
                       "', not '" + Package + "'");
      continue;
    }
    LocalElement E;
    E.Name = Info.lookup(format::fact::Element);
    E.Entry = Info.lookup(format::fact::Entry);
    E.PayloadSize = Info.lookup(format::fact::PayloadSize);
    E.PayloadInit = Info.lookup(format::fact::PayloadInit);
    for (const LocalElement &Other : Elements)
      if (Other.Name == E.Name)
        Errors.push_back(Path + ": element '" + E.Name + "' appears twice");
    if (!(*Obj)->findDefined(E.Entry))
      Errors.push_back(Path + ": entry '" + E.Entry + "' is not defined");
    Elements.push_back(std::move(E));
  }

  unsigned Count = Elements.size();
  if (!Opts.IDs.empty()) {
    Count = 0;
    std::vector<std::string> ByID;
    for (LocalElement &E : Elements) {
      auto It = Opts.IDs.find(E.Name);
      if (It == Opts.IDs.end()) {
        Errors.push_back("element '" + E.Name + "' has no --id");
        continue;
      }
      E.ID = It->second;
      // The vector has an entry for every ID up to the highest.
      if (E.ID >= format::ElementIDLimit) {
        Errors.push_back("element '" + E.Name + "' has ID " + std::to_string(E.ID) +
                         ", not below the limit of " + std::to_string(format::ElementIDLimit));
        continue;
      }
      if (ByID.size() <= E.ID)
        ByID.resize(E.ID + 1);
      if (!ByID[E.ID].empty())
        Errors.push_back("elements '" + ByID[E.ID] + "' and '" + E.Name +
                         "' have the same ID " + std::to_string(E.ID));
      ByID[E.ID] = E.Name;
      Count = std::max(Count, E.ID + 1);
    }
    for (const auto &KV : Opts.IDs)
      if (none_of(Elements, [&](const LocalElement &E) { return E.Name == KV.getKey(); }))
        Errors.push_back("--id names element '" + KV.getKey().str() +
                         "', which no input defines");
  } else {
    for (auto [I, E] : enumerate(Elements))
      E.ID = I;
  }
  if (!Errors.empty())
    return sharedError(join(Errors, "\n"));

  SmallString<128> VectorPath;
  if (std::error_code EC =
          sys::fs::createTemporaryFile("tc_local_vector", "o", VectorPath))
    return sharedError("cannot create a temporary file: " + EC.message());
  FileRemover RemoveVector(VectorPath);
  if (Error E = emitVector(Package, Elements, Count, Machine, VectorPath))
    return E;

  std::string SoName = sys::path::filename(Opts.Output).str();
  std::vector<const char *> Args = {"ld.lld", "-shared", "-o",
                                    Opts.Output.c_str(), "-soname",
                                    SoName.c_str(), "-z", "noexecstack",
                                    "-z", "now", "--build-id=sha1"};
  for (const std::string &In : Opts.Inputs)
    Args.push_back(In.c_str());
  Args.push_back(VectorPath.c_str());
  std::string LinkErrors;
  raw_string_ostream ErrOS(LinkErrors);
  lld::Result R = lld::lldMain(Args, outs(), ErrOS, {{lld::Gnu, &lld::elf::link}});
  if (R.retCode != 0)
    return sharedError("linking " + Opts.Output + " failed:\n" + ErrOS.str());
  return Error::success();
}

} // namespace twochains::jamlink
