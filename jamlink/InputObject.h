//===- InputObject.h - A relocatable ELF object as jamlink sees it --------===//
#ifndef TWOCHAINS_JAMLINK_INPUTOBJECT_H
#define TWOCHAINS_JAMLINK_INPUTOBJECT_H

#include "llvm/ADT/StringMap.h"
#include "llvm/Object/ELF.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include <memory>
#include <string>
#include <vector>

namespace twochains::jamlink {

struct Relocation {
  uint64_t Offset;   // within the section it applies to
  uint32_t Type;
  uint32_t SymbolIndex;
  int64_t Addend;
};

enum class SectionKind { Dropped, GOTP, Code, ReadOnly, Data, ZeroFill };

class InputObject;

struct InputSection {
  InputObject *File = nullptr;        // the object that holds it
  unsigned Index = 0;
  std::string Name;
  uint32_t Type = 0;
  uint64_t Flags = 0;
  uint64_t Align = 1;
  uint64_t Size = 0;
  llvm::ArrayRef<uint8_t> Contents;   // empty for SHT_NOBITS
  SectionKind Kind = SectionKind::Dropped;
  std::vector<Relocation> Relocs;
  // Set by the link:
  bool Live = false;
  uint64_t ImageOffset = 0;           // by the layout
  /// How each relocation is made (Relocations.cpp), by scanRelocations.
  std::vector<uint8_t> Actions;
};

struct Symbol {
  std::string Name;
  unsigned SectionIndex = 0;          // SHN_UNDEF for imports
  uint64_t Value = 0;
  uint8_t Type = 0;
  uint8_t Binding = 0;
  bool isUndefined() const;
  bool isAbsolute() const;
  bool isCommon() const;
};

/// A jam object: from the plugin (with .tc.jam and .tc.imports) or from any
/// compiler producing -fPIC code.
class InputObject {
public:
  static llvm::Expected<std::unique_ptr<InputObject>> open(llvm::StringRef Path);
  /// The same from bytes in memory (the fuzzer's way in); Path names the
  /// object in messages.
  static llvm::Expected<std::unique_ptr<InputObject>>
  create(std::unique_ptr<llvm::MemoryBuffer> Buffer, llvm::StringRef Path);

  std::string Path;
  uint16_t Machine = 0;
  std::vector<InputSection> Sections;   // indexed by ELF section index
  std::vector<Symbol> Symbols;          // indexed by ELF symbol index
  /// .tc.jam key=value pairs, empty for objects built without the plugin.
  llvm::StringMap<std::string> Info;
  /// .tc.imports, in table order.
  std::vector<std::string> Imports;

  bool hasPluginInfo() const { return !Info.empty(); }
  /// "file:(section+0xoff)" as lld prints locations.
  std::string location(unsigned SectionIndex, uint64_t Offset) const;
  /// A symbol's name for messages; section symbols are named by section.
  std::string symbolName(uint32_t Index) const;
  const Symbol *findDefined(llvm::StringRef Name) const;

private:
  std::unique_ptr<llvm::MemoryBuffer> Buffer;
};

} // namespace twochains::jamlink

#endif
