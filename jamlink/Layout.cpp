//===- Layout.cpp - What travels, and where it lies in the image ----------===//
//
//   0          GOTP (8 bytes)
//   8          code sections, then trampolines   (ISA code alignment only)
//              read-only data              (each at its own alignment)
//              writable data, then GOT slots
//              zero-fill (bss), written as zeroes
//              padding to a whole 64-byte line
//
//===----------------------------------------------------------------------===//
#include "Linker.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Support/MathExtras.h"

using namespace llvm;

namespace twochains::jamlink {

/// Only what the entry can reach travels: sections are kept from the entry's
/// section outwards along relocations (like --gc-sections), so sender-side
/// helpers compiled with -ffunction-sections stay behind.
void markLive(LinkContext &Ctx) {
  InputObject &Obj = Ctx.Obj;
  for (const InputSection &S : Obj.Sections)
    if ((S.Type == ELF::SHT_INIT_ARRAY || S.Type == ELF::SHT_FINI_ARRAY ||
         S.Type == ELF::SHT_PREINIT_ARRAY) && S.Size)
      Ctx.error(Obj.Path + ": section " + S.Name +
                " holds constructors or destructors, which cannot be part "
                "of a jam");

  std::vector<unsigned> Work = {Ctx.Entry->SectionIndex};
  for (InputSection &S : Obj.Sections)
    if (S.Kind == SectionKind::GOTP)
      Work.push_back(S.Index);
  while (!Work.empty()) {
    InputSection &S = Obj.Sections[Work.back()];
    Work.pop_back();
    if (S.Live)
      continue;
    S.Live = true;
    if (S.Flags & ELF::SHF_TLS)
      Ctx.error(Obj.Path + ": section " + S.Name +
                " is thread-local storage, which cannot travel");
    for (const Relocation &R : S.Relocs) {
      const Symbol &Sym = Obj.Symbols[R.SymbolIndex];
      if (Sym.isCommon()) {
        Ctx.relocError(S, R, "refers to a common symbol; compile with -fno-common");
        continue;
      }
      if (Sym.isUndefined() || Sym.isAbsolute() ||
          Sym.SectionIndex >= Obj.Sections.size())
        continue;
      const InputSection &Target = Obj.Sections[Sym.SectionIndex];
      if (Target.Kind == SectionKind::Dropped) {
        Ctx.relocError(S, R, "refers to section " + Target.Name +
                                 ", which does not travel");
        continue;
      }
      if (!Target.Live)
        Work.push_back(Target.Index);
    }
  }
}

void assignLayout(LinkContext &Ctx) {
  InputObject &Obj = Ctx.Obj;
  const TargetInfo &T = Ctx.Target;
  uint64_t Off = 0;
  uint64_t MaxAlign = 8;
  auto Place = [&](InputSection &S, uint64_t Align) {
    Off = alignTo(Off, Align);
    S.ImageOffset = Off;
    Off += S.Size;
    MaxAlign = std::max(MaxAlign, Align);
  };
  auto Each = [&](SectionKind K, auto Fn) {
    for (InputSection &S : Obj.Sections)
      if (S.Live && S.Kind == K)
        Fn(S);
  };

  // GOTP first, at offset 0: the plugin's cell if it made one.
  Ctx.GOTPOffset = 0;
  Off = 8;
  Each(SectionKind::GOTP, [&](InputSection &S) {
    if (S.Size != 8)
      Ctx.error(Obj.Path + ": section .tc.gotp must be 8 bytes");
    S.ImageOffset = 0;
  });

  uint64_t CodeStart = Off;
  Each(SectionKind::Code, [&](InputSection &S) {
    Place(S, std::min<uint64_t>(S.Align, T.codeAlignment()));
  });
  Off = alignTo(Off, T.codeAlignment());
  Ctx.TrampolinesOffset = Off;
  Off += Ctx.TrampolineImports.size() * T.trampolineSize();
  Ctx.Image.CodeSize = Off - CodeStart;

  uint64_t ROStart = Off;
  Each(SectionKind::ReadOnly, [&](InputSection &S) { Place(S, S.Align); });
  Ctx.Image.ReadOnlySize = Off - ROStart;

  uint64_t DataStart = Off;
  Each(SectionKind::Data, [&](InputSection &S) { Place(S, S.Align); });
  if (!Ctx.GotSymbols.empty())
    Off = alignTo(Off, 8);
  Ctx.GotOffset = Off;
  Off += 8 * Ctx.GotSymbols.size();
  Ctx.Image.DataSize = Off - DataStart;

  uint64_t ZeroStart = Off;
  Each(SectionKind::ZeroFill, [&](InputSection &S) { Place(S, S.Align); });
  Ctx.Image.ZeroFillSize = Off - ZeroStart;

  if (MaxAlign > JamImageLine)
    Ctx.error(Obj.Path + ": a section needs " + std::to_string(MaxAlign) +
              "-byte alignment; images are placed on 64-byte lines");
  Ctx.Image.Align = MaxAlign;
  Ctx.Image.Bytes.assign(alignTo(Off, JamImageLine), 0);
}

} // namespace twochains::jamlink
