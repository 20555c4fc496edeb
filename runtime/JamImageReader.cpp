//===- JamImageReader.cpp -------------------------------------------------===//
#include "JamImageReader.h"
#include "Sha256.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <elf.h>
#include <map>

namespace twochains::rt {

std::string jamImageHash(const JamImageData &Image) {
  Sha256 H;
  H.update(Image.Bytes.data(), Image.Bytes.size());
  for (const std::string &I : Image.Imports) {
    H.update(I);
    H.update("", 1);
  }
  for (const ImageFixup &F : Image.Fixups)
    H.update(&F, sizeof F);
  H.update(std::to_string(Image.Entry) + "/" + std::to_string(Image.GOTP) + "/" +
           Image.ISA);
  return H.hex();
}

static std::vector<std::string> splitNul(const uint8_t *P, size_t N) {
  std::vector<std::string> Out;
  std::string Cur;
  for (size_t I = 0; I < N; ++I) {
    if (P[I]) {
      Cur.push_back(char(P[I]));
    } else if (!Cur.empty()) {
      Out.push_back(Cur);
      Cur.clear();
    }
  }
  if (!Cur.empty())
    Out.push_back(Cur);
  return Out;
}

static bool toNumber(const std::string &S, uint64_t &Out) {
  if (S.empty())
    return false;
  char *End = nullptr;
  Out = std::strtoull(S.c_str(), &End, 0);
  return End && *End == 0;
}

tc_status_t parseJamImage(const uint8_t *Data, size_t Size, JamImageData &Out,
                          std::string &Error) {
  auto Fail = [&](const std::string &Msg) {
    Error = Msg;
    return TC_ERR_BAD_IMAGE;
  };
  Elf64_Ehdr Eh;
  if (Size < sizeof Eh || std::memcmp(Data, ELFMAG, SELFMAG) ||
      Data[EI_CLASS] != ELFCLASS64 || Data[EI_DATA] != ELFDATA2LSB)
    return Fail("not a jam image (not a 64-bit little-endian ELF file)");
  std::memcpy(&Eh, Data, sizeof Eh);
  if (Eh.e_shentsize != sizeof(Elf64_Shdr) || Eh.e_shoff > Size ||
      uint64_t(Eh.e_shnum) * sizeof(Elf64_Shdr) > Size - Eh.e_shoff ||
      Eh.e_shstrndx >= Eh.e_shnum)
    return Fail("bad section headers");
  std::vector<Elf64_Shdr> Sh(Eh.e_shnum);
  std::memcpy(Sh.data(), Data + Eh.e_shoff, Sh.size() * sizeof(Elf64_Shdr));
  for (const Elf64_Shdr &S : Sh)
    if (S.sh_type != SHT_NULL && S.sh_type != SHT_NOBITS &&
        (S.sh_offset > Size || S.sh_size > Size - S.sh_offset))
      return Fail("a section lies outside the file");
  const Elf64_Shdr &Str = Sh[Eh.e_shstrndx];

  JamImageData Img;
  Img.Machine = Eh.e_machine;
  std::map<std::string, std::string> Facts;
  bool HaveImage = false, HaveFacts = false;
  for (const Elf64_Shdr &S : Sh) {
    if (S.sh_type == SHT_NULL || S.sh_type == SHT_STRTAB)
      continue;
    if (S.sh_name >= Str.sh_size)
      return Fail("bad section name");
    const char *NameStart = reinterpret_cast<const char *>(Data + Str.sh_offset + S.sh_name);
    std::string Name(NameStart, strnlen(NameStart, Str.sh_size - S.sh_name));
    const uint8_t *P = Data + S.sh_offset;
    if (Name == ".tc.image") {
      Img.Bytes.assign(P, P + S.sh_size);
      HaveImage = true;
    } else if (Name == ".tc.jam") {
      HaveFacts = true;
      for (const std::string &KV : splitNul(P, S.sh_size)) {
        size_t Eq = KV.find('=');
        if (Eq != std::string::npos)
          Facts[KV.substr(0, Eq)] = KV.substr(Eq + 1);
      }
    } else if (Name == ".tc.imports") {
      Img.Imports = splitNul(P, S.sh_size);
    } else if (Name == ".tc.fixups") {
      if (S.sh_size % sizeof(ImageFixup))
        return Fail(".tc.fixups is not a whole number of records");
      Img.Fixups.resize(S.sh_size / sizeof(ImageFixup));
      std::memcpy(Img.Fixups.data(), P, S.sh_size);
    }
  }
  if (!HaveImage || !HaveFacts || Facts["format"] != "tc-jam-image")
    return Fail("not a jam image (no .tc.image or .tc.jam)");
  if (Facts["tc.abi"] != "1")
    return Fail("jam ABI version '" + Facts["tc.abi"] + "' is not supported (expected 1)");
  if (Facts["version"] != "1")
    return Fail("jam image format version '" + Facts["version"] +
                "' is not supported (expected 1)");
  struct {
    const char *Key;
    uint64_t *Field;
  } Numbers[] = {{"entry", &Img.Entry},           {"gotp", &Img.GOTP},
                 {"align", &Img.Align},           {"code-size", &Img.CodeSize},
                 {"rodata-size", &Img.ReadOnlySize}, {"data-size", &Img.DataSize},
                 {"bss-size", &Img.ZeroFillSize}};
  for (auto &N : Numbers)
    if (!toNumber(Facts[N.Key], *N.Field))
      return Fail(std::string("bad or missing '") + N.Key + "' in .tc.jam");
  Img.Element = Facts["element"];
  Img.ISA = Facts["isa"];
  Img.EntrySymbol = Facts["entry-symbol"];
  Img.Hash = Facts["hash"];
  Img.Source = Facts["source"];

  uint64_t N = Img.Bytes.size();
  if (N == 0 || N % 64)
    return Fail("image size " + std::to_string(N) +
                " is not a whole number of 64-byte lines");
  if (Img.Entry >= N || Img.GOTP + 8 > N)
    return Fail("entry or GOTP offset lies outside the image");
  if (Img.Align == 0 || Img.Align > 64 || (Img.Align & (Img.Align - 1)))
    return Fail("image alignment " + std::to_string(Img.Align) + " is not a power of two up to 64");
  uint64_t Imports = 0, Fixups = 0;
  if (!toNumber(Facts["imports"], Imports) || !toNumber(Facts["fixups"], Fixups) ||
      Imports != Img.Imports.size() || Fixups != Img.Fixups.size())
    return Fail("import or fixup count does not match .tc.jam");
  for (const ImageFixup &F : Img.Fixups) {
    if (uint64_t(F.Offset) + 8 > N)
      return Fail("fixup at " + std::to_string(F.Offset) + " lies outside the image");
    if (F.Kind != FixupImage64 && F.Kind != FixupImport64)
      return Fail("unknown fixup kind " + std::to_string(F.Kind));
    if (F.Kind == FixupImport64 && F.Symbol >= Img.Imports.size())
      return Fail("fixup refers to import " + std::to_string(F.Symbol) +
                  ", which does not exist");
  }
  if (jamImageHash(Img) != Img.Hash)
    return Fail("content hash does not match: the image is corrupt");
  Out = std::move(Img);
  return TC_OK;
}

bool readFileBytes(const std::string &Path, std::vector<uint8_t> &Out, std::string &Error) {
  FILE *F = std::fopen(Path.c_str(), "rb");
  if (!F) {
    Error = "cannot open: " + std::string(std::strerror(errno));
    return false;
  }
  std::vector<uint8_t> Data;
  uint8_t Buf[65536];
  size_t N;
  while ((N = std::fread(Buf, 1, sizeof Buf, F)) > 0)
    Data.insert(Data.end(), Buf, Buf + N);
  std::fclose(F);
  Out = std::move(Data);
  return true;
}

tc_status_t readJamImageFile(const std::string &Path, JamImageData &Out,
                             std::string &Error) {
  std::vector<uint8_t> Data;
  if (!readFileBytes(Path, Data, Error))
    return TC_ERR_IO;
  return parseJamImage(Data.data(), Data.size(), Out, Error);
}

} // namespace twochains::rt
