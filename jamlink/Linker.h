//===- Linker.h - Linking one jam object into an image --------------------===//
//
// The image mode driver reads as a list of steps (Linker.cpp):
//   findEntry -> markLive -> scanRelocations -> assignLayout
//   -> applyRelocations -> writeTrampolines -> finish
// Errors are collected with their locations; the link goes on to find the
// others, and no image is produced if there was any.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_JAMLINK_LINKER_H
#define TWOCHAINS_JAMLINK_LINKER_H

#include "InputObject.h"
#include "JamImage.h"
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
};

class LinkContext {
public:
  LinkContext(InputObject &Obj, const TargetInfo &Target, LinkOptions Opts)
      : Obj(Obj), Target(Target), Opts(std::move(Opts)) {}

  InputObject &Obj;
  const TargetInfo &Target;
  LinkOptions Opts;

  std::vector<std::string> Errors;
  void error(const std::string &Msg) { Errors.push_back(Msg); }
  /// "file:(sec+0xoff): relocation R_X against symbol 'S' <what>".
  void relocError(const InputSection &Sec, const Relocation &R,
                  const std::string &What);

  // Filled by the steps.
  std::string Element;
  const Symbol *Entry = nullptr;
  std::vector<std::string> Imports;        // table order
  llvm::StringMap<unsigned> ImportIndex;
  llvm::StringMap<unsigned> TrampolineIndex;     // import name -> trampoline number
  std::vector<unsigned> TrampolineImports;       // trampoline number -> import index
  /// GOT slots: key is the symbol index; value is the slot number.
  llvm::DenseMap<uint32_t, unsigned> GotSlots;
  std::vector<uint32_t> GotSymbols;        // slot number -> symbol index
  /// What scanRelocations decided for each relocation, per section
  /// (values of RelocAction in Relocations.cpp).
  std::vector<std::vector<uint8_t>> Actions;
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
  uint64_t symbolOffset(const Symbol &S) const;
  bool isImport(const Symbol &S) const { return S.isUndefined(); }
  std::string relocName(uint32_t Type) const;
};

void findEntry(LinkContext &Ctx);
void markLive(LinkContext &Ctx);
void scanRelocations(LinkContext &Ctx);
void assignLayout(LinkContext &Ctx);
void applyRelocations(LinkContext &Ctx);
void writeTrampolines(LinkContext &Ctx);

/// Links Obj into an image; on failure the error lists every problem found.
llvm::Expected<JamImage> linkImage(InputObject &Obj, const LinkOptions &Opts);

} // namespace twochains::jamlink

#endif
