//===- Linker.h - Linking a jam's objects into an image -------------------===//
//
// The image mode driver reads as a list of steps (Linker.cpp):
//   resolveSymbols -> findEntry -> markLive -> scanRelocations
//   -> assignLayout -> applyRelocations -> writeTrampolines -> finish
// A jam is one plugin object, or one or more objects of another compiler
// whose global names are resolved between them (SymbolTable.h).
// Errors are collected with their locations; the link goes on to find the
// others, and no image is produced if there was any.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_JAMLINK_LINKER_H
#define TWOCHAINS_JAMLINK_LINKER_H

#include "InputObject.h"
#include "JamImage.h"
#include "SymbolTable.h"
#include "Target.h"
#include "JamImageFormat.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include <string>
#include <vector>

namespace twochains::jamlink {

struct LinkOptions {
  std::string Element;   // overrides .tc.jam / the file name
  std::string Entry;     // overrides .tc.jam / <element>_main
  /// Link for the verified sandbox (docs/sandbox.md): read-only data in the
  /// data part, confined trampolines, and the code verified before the
  /// image is written.
  bool Sandbox = false;
};

class LinkContext {
public:
  LinkContext(std::vector<InputObject *> Files, const TargetInfo &Target, LinkOptions Opts)
      : Files(std::move(Files)), Target(Target), Opts(std::move(Opts)) {}

  /// The jam's objects, in the order given: sections are laid out so.
  std::vector<InputObject *> Files;
  const TargetInfo &Target;
  LinkOptions Opts;
  SymbolTable Symtab;

  std::vector<std::string> Errors;
  void error(const std::string &Msg) { Errors.push_back(Msg); }
  /// "file:(sec+0xoff): relocation R_X against symbol 'S' <what>".
  void relocError(const InputSection &Sec, const Relocation &R,
                  const std::string &What);

  /// The jam as messages name it: its object, or its objects' names.
  std::string name() const;

  // Filled by the steps.
  std::string Element;
  SymbolRef Entry;
  std::vector<std::string> Imports;        // table order
  llvm::StringMap<unsigned> ImportIndex;
  llvm::StringMap<unsigned> TrampolineIndex;     // import name -> trampoline number
  std::vector<unsigned> TrampolineImports;       // trampoline number -> import index
  /// GOT slots: key is the resolved symbol; value is the slot number.
  llvm::DenseMap<const Symbol *, unsigned> GotSlots;
  std::vector<SymbolRef> GotSymbols;       // slot number -> symbol
  uint64_t GOTPOffset = 0;
  uint64_t TrampolinesOffset = 0, GotOffset = 0;
  /// Where the data part is linked (TextSize + JamDataDistance).
  uint64_t DataLinkBase = UINT64_MAX;
  JamImage Image;

  /// Where the byte at link address Addr is stored in Image.Bytes: the data
  /// part is stored right after the text, but linked JamDataDistance on.
  uint64_t bytePos(uint64_t Addr) const {
    return Addr >= DataLinkBase ? Addr - format::JamDataDistance : Addr;
  }

  unsigned importFor(const std::string &Name);
  /// The image offset of a defined symbol.
  uint64_t symbolOffset(const SymbolRef &S) const;
  /// What relocation R of Sec refers to, across the jam's objects.
  SymbolRef target(const InputSection &Sec, const Relocation &R) const {
    return Symtab.resolve(*Sec.File, R.SymbolIndex);
  }
  std::string relocName(uint32_t Type) const;
  /// Calls Fn on every section of every object, in layout order.
  template <typename Fn> void forEachSection(Fn F) {
    for (InputObject *File : Files)
      for (InputSection &S : File->Sections)
        F(S);
  }
};

void resolveSymbols(LinkContext &Ctx);
void findEntry(LinkContext &Ctx);
void markLive(LinkContext &Ctx);
void scanRelocations(LinkContext &Ctx);
void assignLayout(LinkContext &Ctx);
void applyRelocations(LinkContext &Ctx);
void writeTrampolines(LinkContext &Ctx);
void verifySandboxed(LinkContext &Ctx);

/// Links the objects of one jam into an image; on failure the error lists
/// every problem found. Objects of the plugin are linked alone.
llvm::Expected<JamImage> linkImage(llvm::ArrayRef<InputObject *> Objs, const LinkOptions &Opts);
inline llvm::Expected<JamImage> linkImage(InputObject &Obj, const LinkOptions &Opts) {
  InputObject *One = &Obj;
  return linkImage(llvm::ArrayRef<InputObject *>(One), Opts);
}

} // namespace twochains::jamlink

#endif
