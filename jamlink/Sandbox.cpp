//===- Sandbox.cpp - A sandboxed image's code, verified at link time ------===//
//
// jamlink --sandbox runs the receiver's own verifier (runtime/verify) over
// the text it has laid out, so that code the receiver would reject is an
// error here, named by its object, function and instruction, not a
// refused frame later. The text is verified whole: the GOTP cell (zero
// until the receiver fills it, docs/sandbox.md), the code, the trampolines
// and the padding to the last line.
//
//===----------------------------------------------------------------------===//
#include "Linker.h"

#include "verify/Verify.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/BinaryFormat/ELF.h"

using namespace llvm;

namespace twochains::jamlink {

/// The object, function and offset in it of image offset At: the defined
/// function whose start is the closest at or before At.
static std::string placeOf(const LinkContext &Ctx, uint64_t At) {
  if (At >= Ctx.TrampolinesOffset &&
      At < Ctx.TrampolinesOffset + Ctx.TrampolineImports.size() * Ctx.Target.trampolineSize()) {
    unsigned N = (At - Ctx.TrampolinesOffset) / Ctx.Target.trampolineSize();
    return "the trampoline to import '" + Ctx.Imports[Ctx.TrampolineImports[N]] + "'";
  }
  const InputObject *BestFile = nullptr;
  const Symbol *Best = nullptr;
  uint64_t BestStart = 0;
  for (const InputObject *F : Ctx.Files)
    for (const Symbol &S : F->Symbols) {
      if (S.Type != ELF::STT_FUNC || S.isUndefined() || S.SectionIndex >= F->Sections.size())
        continue;
      const InputSection &Sec = F->Sections[S.SectionIndex];
      if (!Sec.Live || Sec.Kind != SectionKind::Code)
        continue;
      uint64_t Start = Sec.ImageOffset + S.Value;
      if (Start <= At && (!Best || Start > BestStart)) {
        Best = &S;
        BestFile = F;
        BestStart = Start;
      }
    }
  if (!Best)
    return "image offset 0x" + utohexstr(At, true);
  return BestFile->Path + ": function '" + Best->Name + "'+0x" + utohexstr(At - BestStart, true);
}

void verifySandboxed(LinkContext &Ctx) {
  const std::vector<uint8_t> &Bytes = Ctx.Image.Bytes;
  verify::Violation V;
  bool X86 = Ctx.Target.machine() == ELF::EM_X86_64;
  if (X86 ? verify::verifyX86_64(Bytes.data(), Ctx.Image.TextSize, verify::SandboxLayout(), V)
          : verify::verifyAArch64(Bytes.data(), Ctx.Image.TextSize, verify::SandboxLayout(), V))
    return;
  std::string Encoding;
  if (X86)
    for (unsigned I = 0; I < V.Length && V.Offset + I < Bytes.size(); ++I)
      Encoding += (I ? " " : "") + utohexstr(Bytes[V.Offset + I], true);
  else
    Encoding = "0x" + utohexstr(V.Word, true);
  Ctx.error(placeOf(Ctx, V.Offset) + " (image offset 0x" + utohexstr(V.Offset, true) +
            "): the sandbox's verifier rejects " + V.Instruction + " (" + Encoding +
            "): " + verify::ruleName(V.Broken) + ": " + V.Detail +
            "; was it compiled with twochains-jamcc --sandbox? (docs/sandbox.md)");
}

} // namespace twochains::jamlink
