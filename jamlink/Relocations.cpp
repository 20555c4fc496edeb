//===- Relocations.cpp - Classify, then apply -----------------------------===//
//
// scanRelocations decides, for every relocation of a live section, how its
// value is made (directly, through a trampoline, through a GOT slot, as a fixup)
// and reserves trampolines, slots and imports; nothing is written yet. Once the
// layout is known, applyRelocations computes S, A, P and lets the target
// encode the value.
//
// An outside function is called through a trampoline that loads GOTP; an outside
// address that code loads from a GOT slot gets a slot in the image, filled
// on arrival from the import table (an import fixup); an outside address in
// data is an import fixup itself.
//
//===----------------------------------------------------------------------===//
#include "Linker.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Support/MathExtras.h"

using namespace llvm;

namespace twochains::jamlink {
namespace {

enum RelocAction : uint8_t {
  Skip,
  Direct,          // S + A - P, or S + A for Lo12
  ToTrampoline,          // a call or jump to an import, through its trampoline
  RelaxToDirect,   // indirect call through GOT relaxed to a direct call
  RelaxToTrampoline,     // ... of an import, through its trampoline
  ViaGot,          // G + A - P, G & 0xfff, or Page(G) - P
  ImageFixup,      // absolute address in the image
  ImportFixup,     // absolute address of an import
};

uint64_t page(uint64_t V) { return V & ~uint64_t(0xfff); }
constexpr uint64_t PageAlign = 4096; // the ADRP granule, whatever the OS page

} // namespace

static unsigned trampolineFor(LinkContext &Ctx, const std::string &Name) {
  unsigned Import = Ctx.importFor(Name);
  auto [It, Inserted] = Ctx.TrampolineIndex.try_emplace(Name, Ctx.TrampolineImports.size());
  if (Inserted)
    Ctx.TrampolineImports.push_back(Import);
  return It->second;
}

/// A GOT slot per symbol of the link: references to one name from
/// several objects share it.
static void gotSlotFor(LinkContext &Ctx, const SymbolRef &S) {
  auto [It, Inserted] = Ctx.GotSlots.try_emplace(S.Sym, Ctx.GotSymbols.size());
  if (Inserted)
    Ctx.GotSymbols.push_back(S);
  if (S.Sym->isUndefined())
    Ctx.importFor(S.Sym->Name);
}

/// Classifies the relocations of one live section.
static void scanSection(LinkContext &Ctx, InputSection &Sec) {
  const TargetInfo &T = Ctx.Target;
  std::vector<uint8_t> &Actions = Sec.Actions;
  Actions.assign(Sec.Relocs.size(), Skip);
  for (auto [I, R] : enumerate(Sec.Relocs)) {
    SymbolRef Ref = Ctx.target(Sec, R);
    const Symbol &S = *Ref.Sym;
    bool Outside = S.isUndefined();
    if (S.isAbsolute()) {
      Ctx.relocError(Sec, R, "refers to an absolute symbol, which cannot travel");
      continue;
    }
    if (Outside && S.Name.empty()) {
      Ctx.relocError(Sec, R, "refers to an undefined symbol without a name");
      continue;
    }
    // InputObject guarantees Offset < Size; written so that it cannot wrap.
    if (T.fieldSize(R.Type) > Sec.Size - R.Offset) {
      Ctx.relocError(Sec, R, "reaches past the end of the section");
      continue;
    }
    RelExpr E = T.classify(R.Type);
    uint8_t &Action = Actions[I];
    switch (E) {
    case RelExpr::None: break;
    case RelExpr::ThreadLocal:
      Ctx.relocError(Sec, R,
                     "refers to thread-local storage, which "
                     "cannot travel: the receiver thread has its own");
      break;
    case RelExpr::Absolute32:
      Ctx.relocError(Sec, R,
                     "is an absolute address narrower than 64 "
                     "bits and cannot be made position independent "
                     "(compile with -fPIC)");
      break;
    case RelExpr::Unsupported: Ctx.relocError(Sec, R, "is not supported in a jam"); break;
    case RelExpr::PC:
      if (!Outside) {
        Action = Direct;
      } else if (T.isDirectBranch(Sec.Contents.data(), R.Offset, R.Type)) {
        trampolineFor(Ctx, S.Name);
        Action = ToTrampoline;
      } else {
        Ctx.relocError(Sec, R,
                       "is a PC-relative reference to an outside "
                       "symbol, which cannot be made position "
                       "independent (compile with -fPIC)");
      }
      break;
    case RelExpr::Call:
      if (Outside)
        trampolineFor(Ctx, S.Name);
      Action = Outside ? ToTrampoline : Direct;
      break;
    case RelExpr::Abs64:
      if (Outside)
        Ctx.importFor(S.Name);
      Action = Outside ? ImportFixup : ImageFixup;
      break;
    case RelExpr::GotPCCall: {
      // Decide on a scratch copy: the bytes are rewritten only when the
      // relocation is applied. The instruction lies within the two bytes
      // before the field and the field itself, so only those are copied
      // (copying the section for each relocation is quadratic).
      uint8_t Window[6] = {};
      uint64_t Lo = R.Offset >= 2 ? R.Offset - 2 : 0;
      uint64_t Off = R.Offset - Lo;
      if (Lo < Sec.Contents.size())
        std::copy_n(Sec.Contents.begin() + Lo,
                    std::min<uint64_t>(sizeof Window, Sec.Contents.size() - Lo), Window);
      if (!Sec.Contents.empty() && T.relaxGotCall(Window, Off)) {
        if (Outside)
          trampolineFor(Ctx, S.Name);
        Action = Outside ? RelaxToTrampoline : RelaxToDirect;
        break;
      }
      gotSlotFor(Ctx, Ref);
      Action = ViaGot;
      break;
    }
    case RelExpr::GotPC:
    case RelExpr::GotPagePC:
    case RelExpr::GotLo12:
      gotSlotFor(Ctx, Ref);
      Action = ViaGot;
      break;
    case RelExpr::PagePC:
    case RelExpr::Lo12:
      if (Outside)
        Ctx.relocError(Sec, R,
                       "is a page-relative reference to an outside "
                       "symbol, which cannot be made position "
                       "independent (compile with -fPIC)");
      else
        Action = Direct;
      break;
    }
  }
}

void scanRelocations(LinkContext &Ctx) {
  Ctx.forEachSection([&](InputSection &Sec) {
    if (Sec.Live)
      scanSection(Ctx, Sec);
  });
  if (Ctx.Target.machine() == ELF::EM_AARCH64 && Ctx.Imports.size() > 4096)
    Ctx.error(Ctx.name() + ": more than 4096 imports");
}

void applyRelocations(LinkContext &Ctx) {
  const TargetInfo &T = Ctx.Target;
  std::vector<uint8_t> &Bytes = Ctx.Image.Bytes;
  Ctx.forEachSection([&](const InputSection &Sec) {
    if (Sec.Live && Sec.Kind != SectionKind::ZeroFill && Sec.Kind != SectionKind::GOTP)
      std::copy(Sec.Contents.begin(), Sec.Contents.end(),
                Bytes.begin() + Ctx.bytePos(Sec.ImageOffset));
  });

  auto TrampolineOffset = [&](const std::string &Name) {
    return Ctx.TrampolinesOffset + Ctx.TrampolineIndex.lookup(Name) * T.trampolineSize();
  };
  auto GotOffset = [&](const SymbolRef &S) {
    return Ctx.GotOffset + 8 * Ctx.GotSlots.lookup(S.Sym);
  };

  Ctx.forEachSection([&](InputSection &Sec) {
    if (!Sec.Live)
      return;
    for (auto [I, R] : enumerate(Sec.Relocs)) {
      SymbolRef Ref = Ctx.target(Sec, R);
      const Symbol &S = *Ref.Sym;
      RelExpr E = T.classify(R.Type);
      uint64_t FieldOffset = R.Offset;
      // P is the field's link address (what PC-relative values are computed
      // from); At is where its bytes are stored.
      uint64_t P = Sec.ImageOffset + FieldOffset;
      uint64_t At = Ctx.bytePos(P);
      int64_t A = R.Addend;
      uint64_t Value = 0;
      switch (RelocAction(Sec.Actions[I])) {
      case Skip:
        continue;
      case Direct: {
        uint64_t SA = Ctx.symbolOffset(Ref) + A;
        if (E == RelExpr::PagePC && SA >= Ctx.DataLinkBase) {
          // Beyond ADR's reach: the ADRP stays, and the image is placed
          // where its pages line up with the receiver's.
          std::string Err = T.relocatePage(Bytes.data() + At, R.Type, page(SA) - page(P));
          if (!Err.empty())
            Ctx.relocError(Sec, R, "cannot be applied: " + Err);
          Ctx.Image.Align = std::max<uint64_t>(Ctx.Image.Align, PageAlign);
          continue;
        }
        Value = E == RelExpr::Lo12     ? SA
                : E == RelExpr::PagePC ? page(SA) - P
                                       : SA - P;
        break;
      }
      case ToTrampoline:
        Value = TrampolineOffset(S.Name) + A - P;
        break;
      case RelaxToDirect:
      case RelaxToTrampoline: {
        T.relaxGotCall(Bytes.data() + Ctx.bytePos(Sec.ImageOffset), FieldOffset);
        P = Sec.ImageOffset + FieldOffset;
        At = Ctx.bytePos(P);
        uint64_t Target = RelocAction(Sec.Actions[I]) == RelaxToTrampoline
                              ? TrampolineOffset(S.Name)
                              : Ctx.symbolOffset(Ref);
        Value = Target + A - P;
        break;
      }
      case ViaGot: {
        uint64_t G = GotOffset(Ref);
        if (E == RelExpr::GotPagePC && G >= Ctx.DataLinkBase) {
          // A sandboxed image's GOT lies in the data part: as above.
          std::string Err = T.relocatePage(Bytes.data() + At, R.Type, page(G) - page(P));
          if (!Err.empty())
            Ctx.relocError(Sec, R, "cannot be applied: " + Err);
          Ctx.Image.Align = std::max<uint64_t>(Ctx.Image.Align, PageAlign);
          continue;
        }
        Value = E == RelExpr::GotLo12     ? G
                : E == RelExpr::GotPagePC ? page(G) - P
                                          : G + A - P;
        break;
      }
      case ImageFixup:
        Value = Ctx.symbolOffset(Ref) + A;
        Ctx.Image.Fixups.push_back(
            {uint32_t(At), format::FixupImage64, 0, 0, int64_t(Value)});
        break;
      case ImportFixup:
        Value = 0;
        Ctx.Image.Fixups.push_back(
            {uint32_t(At), format::FixupImport64, Ctx.ImportIndex.lookup(S.Name), 0, A});
        break;
      }
      std::string Err = T.relocate(Bytes.data() + At, R.Type, Value);
      if (!Err.empty())
        Ctx.relocError(Sec, R, "cannot be applied: " + Err);
    }
  });

  // GOT slots are filled on arrival: from the import table for outside
  // symbols, with the image's address for the jam's own.
  for (auto [Slot, Ref] : enumerate(Ctx.GotSymbols)) {
    const Symbol &S = *Ref.Sym;
    uint64_t Off = Ctx.bytePos(Ctx.GotOffset + 8 * Slot);
    if (S.isUndefined()) {
      Ctx.Image.Fixups.push_back(
          {uint32_t(Off), format::FixupImport64, Ctx.ImportIndex.lookup(S.Name), 0, 0});
    } else {
      uint64_t V = Ctx.symbolOffset(Ref);
      write64le(Bytes.data() + Off, V);
      Ctx.Image.Fixups.push_back({uint32_t(Off), format::FixupImage64, 0, 0, int64_t(V)});
    }
  }
}

void writeTrampolines(LinkContext &Ctx) {
  const TargetInfo &T = Ctx.Target;
  for (auto [I, Import] : enumerate(Ctx.TrampolineImports)) {
    uint64_t Off = Ctx.TrampolinesOffset + I * T.trampolineSize();
    T.writeTrampoline(Ctx.Image.Bytes.data() + Off, Off, Ctx.GOTPOffset, Import);
  }
}

} // namespace twochains::jamlink
