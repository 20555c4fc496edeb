//===- Dump.cpp -----------------------------------------------------------===//
#include "Dump.h"
#include "Isa.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/MC/MCAsmInfo.h"
#include "llvm/MC/MCContext.h"
#include "llvm/MC/MCDisassembler/MCDisassembler.h"
#include "llvm/MC/MCInst.h"
#include "llvm/MC/MCInstPrinter.h"
#include "llvm/MC/MCInstrAnalysis.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCRegisterInfo.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/MCTargetOptions.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/TargetSelect.h"

using namespace llvm;

namespace twochains::jamlink {

/// Names the image parts an address falls in, for the reader of a dump.
static std::string describe(const JamImage &Image, uint64_t Addr) {
  if (Addr == Image.GOTP)
    return " <GOTP>";
  return "";
}

static Error disassemble(const JamImage &Image, raw_ostream &OS) {
  InitializeAllTargetInfos();
  InitializeAllTargetMCs();
  InitializeAllDisassemblers();
  std::string TripleName = Image.ISA + "-unknown-linux-gnu";
  Triple TT(TripleName);
  std::string Err;
  const Target *T = TargetRegistry::lookupTarget(TripleName, Err);
  if (!T)
    return createStringError(inconvertibleErrorCode(),
                             "no disassembler for " + Image.ISA + ": " + Err);
  std::unique_ptr<MCRegisterInfo> MRI(T->createMCRegInfo(TripleName));
  MCTargetOptions MCOpts;
  std::unique_ptr<MCAsmInfo> MAI(T->createMCAsmInfo(*MRI, TripleName, MCOpts));
  std::unique_ptr<MCSubtargetInfo> STI(T->createMCSubtargetInfo(TripleName, "", ""));
  std::unique_ptr<MCInstrInfo> MII(T->createMCInstrInfo());
  MCContext Ctx(TT, MAI.get(), MRI.get(), STI.get());
  std::unique_ptr<MCDisassembler> DisAsm(T->createMCDisassembler(*STI, Ctx));
  std::unique_ptr<MCInstPrinter> IP(T->createMCInstPrinter(
      TT, MAI->getAssemblerDialect(), *MAI, *MII, *MRI));
  if (!DisAsm || !IP)
    return createStringError(inconvertibleErrorCode(),
                             "cannot disassemble " + Image.ISA);
  IP->setPrintImmHex(true);
  IP->setPrintBranchImmAsAddress(true);
  std::unique_ptr<MCInstrAnalysis> MIA(T->createMCInstrAnalysis(MII.get()));

  uint64_t Begin = Image.codeStart();
  uint64_t End = std::min<uint64_t>(Begin + Image.CodeSize, Image.Bytes.size());
  ArrayRef<uint8_t> Bytes(Image.Bytes);
  OS << "code:\n";
  for (uint64_t Addr = Begin; Addr < End;) {
    if (Addr == Image.Entry)
      OS << llvm::format("%08" PRIx64, Addr) << " <" << Image.EntrySymbol << ">:\n";
    MCInst Inst;
    uint64_t Size = 0;
    std::string Text;
    raw_string_ostream TS(Text);
    if (DisAsm->getInstruction(Inst, Size, Bytes.slice(Addr, End - Addr), Addr,
                               nulls()) == MCDisassembler::Success) {
      // x86 branch displacements count from the next instruction.
      bool X86 = twochains::format::isaOf(Image.ISA) == twochains::format::IsaX86_64;
      uint64_t PrintAddr = X86 ? Addr + Size : Addr;
      IP->printInst(&Inst, PrintAddr, "", *STI, TS);
      // PC-relative data references, as llvm-objdump annotates them.
      if (MIA)
        if (std::optional<uint64_t> Target =
                MIA->evaluateMemoryOperandAddress(Inst, STI.get(), Addr, Size))
          TS << "  # 0x" << utohexstr(*Target, true) << describe(Image, *Target);
    } else {
      Size = twochains::format::isaOf(Image.ISA) == twochains::format::IsaAArch64 ? 4 : 1;
      TS << "\t<unknown>";
    }
    Size = std::max<uint64_t>(Size, 1);
    OS << llvm::format("%8" PRIx64 ":", Addr);
    for (uint64_t I = 0; I < Size && Addr + I < End; ++I)
      OS << llvm::format(" %02x", Bytes[Addr + I]);
    OS.indent(Size < 8 ? (8 - Size) * 3 : 1) << TS.str() << '\n';
    Addr += Size;
  }
  return Error::success();
}

Error dumpImage(const JamImage &Image, raw_ostream &OS) {
  OS << "jam image\n";
  for (const auto &[Key, Value] : format::jamImageFacts(Image))
    OS << "  " << left_justify(Key, 13) << Value << '\n';
  OS << "imports:\n";
  for (auto [I, Name] : enumerate(Image.Imports))
    OS << llvm::format("  [%u] ", unsigned(I)) << Name << '\n';
  OS << "fixups:\n";
  for (const ImageFixup &F : Image.Fixups) {
    OS << "  " << left_justify("0x" + utohexstr(F.Offset, true), 7) << ' ';
    if (F.Kind == format::FixupImage64)
      OS << "image64   base + 0x" << utohexstr(F.Addend, true) << '\n';
    else
      OS << "import64  " << Image.Imports[F.Symbol]
         << (F.Addend ? " + " + std::to_string(F.Addend) : "") << '\n';
  }
  return disassemble(Image, OS);
}

} // namespace twochains::jamlink
