//===- LlvmDisassembler.h - LLVM's disassembler as the fuzzers' second opinion
//
// The verifier fuzzers check what the sandbox's verifier accepts against
// LLVM's view of the same bytes: one instruction at a time, as text.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_TEST_FUZZ_LLVMDISASSEMBLER_H
#define TWOCHAINS_TEST_FUZZ_LLVMDISASSEMBLER_H

#include "llvm/MC/MCAsmInfo.h"
#include "llvm/MC/MCContext.h"
#include "llvm/MC/MCDisassembler/MCDisassembler.h"
#include "llvm/MC/MCInst.h"
#include "llvm/MC/MCInstPrinter.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCRegisterInfo.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/MCTargetOptions.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <memory>
#include <string>

namespace twochains::fuzz {

class LlvmDisassembler {
public:
  /// Triple's disassembler with Features; its target must be initialized.
  LlvmDisassembler(const std::string &Triple, const std::string &Features) {
    std::string Err;
    const llvm::Target *T = llvm::TargetRegistry::lookupTarget(Triple, Err);
    if (!T)
      std::abort();
    MRI.reset(T->createMCRegInfo(Triple));
    llvm::MCTargetOptions Options;
    MAI.reset(T->createMCAsmInfo(*MRI, Triple, Options));
    STI.reset(T->createMCSubtargetInfo(Triple, "", Features));
    MII.reset(T->createMCInstrInfo());
    Ctx = std::make_unique<llvm::MCContext>(llvm::Triple(Triple), MAI.get(), MRI.get(), STI.get());
    DisAsm.reset(T->createMCDisassembler(*STI, *Ctx));
    IP.reset(T->createMCInstPrinter(llvm::Triple(Triple), 0, *MAI, *MII, *MRI));
  }

  /// The instruction at the start of Bytes as text (tabs as spaces, no
  /// leading blanks) and its length; empty where LLVM does not decode it.
  std::string text(llvm::ArrayRef<uint8_t> Bytes, uint64_t &Size) {
    llvm::MCInst Inst;
    Size = 0;
    if (DisAsm->getInstruction(Inst, Size, Bytes, 0, llvm::nulls()) !=
        llvm::MCDisassembler::Success)
      return "";
    std::string S;
    llvm::raw_string_ostream OS(S);
    IP->printInst(&Inst, 0, "", *STI, OS);
    OS.flush();
    for (char &C : S)
      if (C == '\t')
        C = ' ';
    size_t First = S.find_first_not_of(' ');
    return First == std::string::npos ? "" : S.substr(First);
  }

private:
  std::unique_ptr<llvm::MCRegisterInfo> MRI;
  std::unique_ptr<llvm::MCAsmInfo> MAI;
  std::unique_ptr<llvm::MCSubtargetInfo> STI;
  std::unique_ptr<llvm::MCInstrInfo> MII;
  std::unique_ptr<llvm::MCContext> Ctx;
  std::unique_ptr<llvm::MCDisassembler> DisAsm;
  std::unique_ptr<llvm::MCInstPrinter> IP;
};

} // namespace twochains::fuzz

#endif
