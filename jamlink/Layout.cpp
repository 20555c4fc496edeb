//===- Layout.cpp - What travels, and where it lies in the image ----------===//
//
// Two parts, each a whole number of 64-byte lines (docs/jam-image-format.md):
//
//   text, at 0: installed read+execute; written once, on arrival
//     0          GOTP (8 bytes)
//     8          code sections, then trampolines   (ISA code alignment only)
//                read-only data, relro data, GOT slots
//   data, linked at TextSize + JamDataDistance: installed read+write
//                writable data (its initial bytes travel)
//                sandboxed images: read-only data and GOT slots
//                zero-fill (bss): only its size travels
//
// The fixed distance lets code reach its data PC-relatively, as in any
// shared object, while the data lies in memory that is never executable and
// the code in memory that is never writable (runtime/ImageInstall.h).
//
//===----------------------------------------------------------------------===//
#include "Linker.h"
#include "JamImageFormat.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace llvm;

namespace twochains::jamlink {

/// Only what the entry can reach travels: sections are kept from the entry's
/// section outwards along relocations (like --gc-sections), so sender-side
/// helpers compiled with -ffunction-sections stay behind.
void markLive(LinkContext &Ctx) {
  Ctx.forEachSection([&](const InputSection &S) {
    if ((S.Type == ELF::SHT_INIT_ARRAY || S.Type == ELF::SHT_FINI_ARRAY ||
         S.Type == ELF::SHT_PREINIT_ARRAY) && S.Size)
      Ctx.error(S.File->Path + ": section " + S.Name +
                " holds constructors or destructors, which cannot be part "
                "of a jam");
  });

  std::vector<InputSection *> Work = {&Ctx.Entry.File->Sections[Ctx.Entry.Sym->SectionIndex]};
  Ctx.forEachSection([&](InputSection &S) {
    if (S.Kind == SectionKind::GOTP)
      Work.push_back(&S);
  });
  while (!Work.empty()) {
    InputSection &S = *Work.back();
    Work.pop_back();
    if (S.Live)
      continue;
    S.Live = true;
    if (S.Flags & ELF::SHF_TLS)
      Ctx.error(S.File->Path + ": section " + S.Name +
                " is thread-local storage, which cannot travel");
    for (const Relocation &R : S.Relocs) {
      SymbolRef Sym = Ctx.target(S, R);
      if (Sym.Sym->isCommon()) {
        Ctx.relocError(S, R, "refers to a common symbol; compile with -fno-common");
        continue;
      }
      if (Sym.Sym->isUndefined() || Sym.Sym->isAbsolute() ||
          Sym.Sym->SectionIndex >= Sym.File->Sections.size())
        continue;
      InputSection &Target = Sym.File->Sections[Sym.Sym->SectionIndex];
      if (Target.Kind == SectionKind::Dropped) {
        Ctx.relocError(S, R, "refers to section " + Target.Name +
                                 ", which does not travel");
        continue;
      }
      if (!Target.Live)
        Work.push_back(&Target);
    }
  }
}

void assignLayout(LinkContext &Ctx) {
  const TargetInfo &T = Ctx.Target;
  uint64_t Off = 0;
  uint64_t MaxAlign = 8;
  // Sizes and alignments come from the object: each is checked against
  // the image limit before it moves Off, so no sum wraps and nothing huge
  // is allocated (a zero-fill section's size costs the object nothing).
  bool TooLarge = false;
  auto Limit = std::to_string(format::JamImageMaxBytes);
  auto Grow = [&](uint64_t Bytes, const InputSection *S = nullptr) {
    if (TooLarge)
      return;
    if (Bytes <= format::JamImageMaxBytes - Off) {
      Off += Bytes;
      return;
    }
    TooLarge = true;
    if (S)
      Ctx.error(S->File->location(S->Index, 0) + ": section " + S->Name + " of 0x" +
                utohexstr(S->Size, true) + " bytes makes the image larger than the limit of " +
                Limit + " bytes");
    else
      Ctx.error(Ctx.name() + ": the image would be larger than the limit of " + Limit + " bytes");
  };
  auto Place = [&](InputSection &S, uint64_t Align) {
    if (Align > format::JamLine) {
      Ctx.error(S.File->location(S.Index, 0) + ": section " + S.Name + " needs " +
                std::to_string(Align) + "-byte alignment; images are placed on 64-byte lines");
      Align = format::JamLine;
    }
    Grow(alignTo(Off, Align) - Off);
    S.ImageOffset = Off;
    Grow(S.Size, &S);
    MaxAlign = std::max(MaxAlign, Align);
  };
  auto Each = [&](SectionKind K, auto Fn) {
    Ctx.forEachSection([&](InputSection &S) {
      if (S.Live && S.Kind == K)
        Fn(S);
    });
  };

  // GOTP first, at offset 0: the plugin's cell if it made one (or first
  // in the data part, below).
  Ctx.GOTPOffset = 0;
  Off = T.gotpInDataPart() ? 0 : 8;
  Each(SectionKind::GOTP, [&](InputSection &S) {
    if (S.Size != 8)
      Ctx.error(S.File->Path + ": section .tc.gotp must be 8 bytes");
  });

  uint64_t CodeStart = Off;
  Each(SectionKind::Code, [&](InputSection &S) {
    Place(S, std::min<uint64_t>(S.Align, T.codeAlignment()));
  });
  Grow(alignTo(Off, T.codeAlignment()) - Off);
  Ctx.TrampolinesOffset = Off;
  Grow(uint64_t(Ctx.TrampolineImports.size()) * T.trampolineSize());
  Ctx.Image.CodeSize = Off - CodeStart;

  // GOT slots are filled once, on arrival: they belong with what the code
  // only reads. A sandboxed image keeps both in its data part instead
  // (docs/sandbox.md): everything in its text is verified code, since a
  // confined jump may land anywhere in it.
  auto PlaceReadOnly = [&](auto PlaceSection, uint64_t Distance) {
    Each(SectionKind::ReadOnly, PlaceSection);
    if (!Ctx.GotSymbols.empty())
      Grow(alignTo(Off, 8) - Off);
    Ctx.GotOffset = Off + Distance;
    Grow(8 * uint64_t(Ctx.GotSymbols.size()));
  };
  uint64_t ROStart = Off;
  if (!Ctx.Opts.Sandbox)
    PlaceReadOnly([&](InputSection &S) { Place(S, S.Align); }, 0);
  Ctx.Image.ReadOnlySize = Off - ROStart;
  Grow(alignTo(Off, format::JamLine) - Off);
  Ctx.Image.TextSize = Off;

  // The data part: linked JamDataDistance past the text, stored right
  // after it. Off counts bytes stored, so the image limit applies to what
  // travels plus the zero-fill the receiver allocates.
  Ctx.DataLinkBase = Ctx.Image.TextSize + format::JamDataDistance;
  uint64_t DataStart = Off;
  if (T.gotpInDataPart()) {
    Ctx.GOTPOffset = Ctx.DataLinkBase;
    Grow(8);
  }
  Each(SectionKind::GOTP, [&](InputSection &S) { S.ImageOffset = Ctx.GOTPOffset; });
  auto PlaceData = [&](InputSection &S) {
    Place(S, S.Align);
    S.ImageOffset += format::JamDataDistance;
  };
  Each(SectionKind::Data, PlaceData);
  if (Ctx.Opts.Sandbox)
    PlaceReadOnly(PlaceData, format::JamDataDistance);
  Grow(alignTo(Off, format::JamLine) - Off);
  Ctx.Image.DataSize = Off - DataStart;

  uint64_t ZeroStart = Off;
  Each(SectionKind::ZeroFill, PlaceData);
  Grow(alignTo(Off, format::JamLine) - Off);
  Ctx.Image.ZeroFillSize = Off - ZeroStart;

  if (!Ctx.Errors.empty())
    return;
  Ctx.Image.Align = MaxAlign;
  Ctx.Image.Bytes.assign(Ctx.Image.TextSize + Ctx.Image.DataSize, 0);
  std::fill_n(Ctx.Image.Bytes.begin(), Ctx.Image.TextSize, T.textPadding());
}

} // namespace twochains::jamlink
