//===- Package.cpp - tc_package_load and friends --------------------------===//
//
// Receiver side, in order: rieds (RTLD_GLOBAL, so their initialisers run and
// jams can reach their symbols by name), one import table per jam, resolved
// with dlsym in the rieds first and then in the whole process, then the
// Local-Function library (RTLD_LOCAL; its tc_local_vector gives the entry
// of each element ID).
//
//===----------------------------------------------------------------------===//
#include "package/Package.h"
#include "base/Log.h"
#include "wire/Wire.h"
#include "wire/Formats.h"
#include "twochains/local_vector.h"

#include <cstring>
#include <dlfcn.h>
#include <link.h>
#include <memory>


using namespace twochains::rt;

/// The executable segment of the library loaded at Base, so the time limit
/// can tell a jam's own code from the libraries it calls.
static void findCode(void *Handle, uintptr_t &Begin, uintptr_t &End) {
  struct link_map *Map = nullptr;
  if (dlinfo(Handle, RTLD_DI_LINKMAP, &Map) != 0 || !Map)
    return;
  struct Search {
    ElfW(Addr) Base;
    uintptr_t Begin = 0, End = 0;
  } S{Map->l_addr};
  dl_iterate_phdr(
      [](struct dl_phdr_info *Info, size_t, void *Arg) {
        auto *S = static_cast<Search *>(Arg);
        if (Info->dlpi_addr != S->Base)
          return 0;
        for (int I = 0; I < Info->dlpi_phnum; ++I) {
          const ElfW(Phdr) &Ph = Info->dlpi_phdr[I];
          if (Ph.p_type == PT_LOAD && (Ph.p_flags & PF_X)) {
            S->Begin = Info->dlpi_addr + Ph.p_vaddr;
            S->End = S->Begin + Ph.p_memsz;
          }
        }
        return 1;
      },
      &S);
  Begin = S.Begin;
  End = S.End;
}

/// The Local-Function library: the receiver's copies of the jams, and the
/// sender-side payload helpers. Its outside symbols are weak, so a sender
/// without the rieds can load it too.
static tc_status_t loadLocalLibrary(tc_package &P, const ManifestData &M, std::string &Error) {
  auto ISA = M.ISAs.find(P.ISA);
  if (ISA == M.ISAs.end())
    return TC_ERR_INVALID_PARAM;
  auto Local = ISA->second.find("local");
  if (Local != ISA->second.end() && !Local->second.empty()) {
    std::string Path = M.Dir + "/" + Local->second;
    void *H = dlopen(Path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!H) {
      Error = "package '" + P.Name + "': cannot load its Local-Function library: " + dlerror();
      return TC_ERR_IO;
    }
    P.Libraries.push_back(H);
    findCode(H, P.LocalCodeBegin, P.LocalCodeEnd);
    auto *Vec = static_cast<const tc_local_vector *>(dlsym(H, TC_LOCAL_VECTOR_SYMBOL));
    if (!Vec || Vec->abi != TC_LOCAL_VECTOR_ABI) {
      Error = "package '" + P.Name + "': " + Path + " has no tc_local_vector of ABI 1";
      return TC_ERR_BAD_IMAGE;
    }
    for (uint32_t ID = 0; ID < Vec->count; ++ID) {
      const tc_local_element &L = Vec->elements[ID];
      if (!L.name)
        continue;
      if (ID >= P.Elements.size() || !P.Elements[ID].Present ||
          P.Elements[ID].Name != L.name) {
        Error = "package '" + P.Name + "': its Local-Function library places '" +
                std::string(L.name) + "' at ID " + std::to_string(ID) +
                ", which the manifest does not";
        return TC_ERR_BAD_IMAGE;
      }
      P.Elements[ID].LocalEntry = reinterpret_cast<JamEntry>(L.entry);
      P.Elements[ID].PayloadSize = L.payload_size;
      P.Elements[ID].PayloadInit = L.payload_init;
    }
  }
  return TC_OK;
}

static tc_status_t loadReceiverSide(tc_package &P, const ManifestData &M, std::string &Error) {
  std::vector<void *> Rieds;
  for (const ManifestElement &E : M.Elements) {
    if (E.Kind != "ried" || E.Fields.at("isa") != P.ISA)
      continue;
    std::string Path = M.Dir + "/" + E.Fields.at("lib");
    void *H = dlopen(Path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!H) {
      Error = "package '" + P.Name + "': cannot load ried '" + E.Name + "': " + dlerror();
      return TC_ERR_IO;
    }
    P.Libraries.push_back(H);
    P.RiedLibraries.push_back(H);
    Rieds.push_back(H);
  }
  // Imports before the Local-Function library: a missing symbol is then
  // reported with the jam that needs it, not as a loader error.
  for (PackageElement &E : P.Elements) {
    if (!E.Present || !E.IsJam)
      continue;
    for (const std::string &Name : E.Image.Imports) {
      void *Addr = nullptr;
      for (void *H : Rieds)
        if ((Addr = dlsym(H, Name.c_str())))
          break;
      if (!Addr)
        Addr = dlsym(RTLD_DEFAULT, Name.c_str());
      if (!Addr) {
        Error = "package '" + P.Name + "': jam '" + E.Name + "' imports '" + Name +
                "', which no ried of the package and no library of this process defines";
        return TC_ERR_MISSING_IMPORT;
      }
      E.ImportTable.push_back(Addr);
    }
  }
  return loadLocalLibrary(P, M, Error);
}

/// The verified policy's receiver side (docs/verified.md): no ried and no
/// Local-Function library (native code no verifier has seen), every jam an
/// image built for the sandbox and accepted by this process's verifier as
/// it is installed into the package's region.
static tc_status_t loadSandboxedSide(tc_package &P, const ManifestData &M, std::string &Error) {
  for (const ManifestElement &E : M.Elements)
    if (E.Kind == "ried" && E.Fields.at("isa") == P.ISA) {
      Error = "package '" + P.Name + "': ried '" + E.Name +
              "' is a native library, which the verified policy never loads";
      return TC_ERR_UNTRUSTED;
    }
  if (!sandboxAvailable()) {
    Error = "package '" + P.Name + "': this receiver (" + P.ISA +
            ") has no sandbox yet, so under the verified policy it runs only packages signed "
            "by its trusted signers (docs/verified.md)";
    return TC_ERR_UNTRUSTED;
  }
  for (const PackageElement &E : P.Elements)
    if (E.Present && E.IsJam && E.Image.Sandbox != twochains::format::JamSandboxScheme) {
      Error = "package '" + P.Name + "': jam '" + E.Name +
              "' is not built for the sandbox (twochains-pkg-gen --sandbox), which the "
              "verified policy requires";
      return TC_ERR_UNTRUSTED;
    }
  auto Region = std::make_unique<SandboxRegion>();
  if (tc_status_t St = Region->create(Error); St != TC_OK) {
    Error = "package '" + P.Name + "': " + Error;
    return St;
  }
  for (PackageElement &E : P.Elements) {
    if (!E.Present || !E.IsJam)
      continue;
    std::string Why;
    if (tc_status_t St = Region->install(E.Image, E.Sandboxed, Why); St != TC_OK) {
      Error = "package '" + P.Name + "': " + Why;
      return St == TC_ERR_BAD_IMAGE ? TC_ERR_UNTRUSTED : St;
    }
  }
  P.Region = std::move(Region);
  return TC_OK;
}

/// A jam's image, and the digest and key frames name it by.
static tc_status_t readImage(const ManifestData &M, const ManifestElement &E,
                             PackageElement &PE, std::string &Error) {
  if (readJamImageFile(M.Dir + "/" + E.Fields.at("image"), PE.Image, Error) != FormatError::None)
    return TC_ERR_BAD_IMAGE;
  PE.CodeDigest = codeDigest(PE.Image.Bytes.data(), PE.Image.Bytes.size(), PE.Image.GOTP);
  PE.CodeKey = identityTag(PE.CodeDigest);
  return TC_OK;
}

namespace twochains::rt {

tc_status_t loadPackage(const std::string &ManifestPath, const char *Name, uint32_t Roles,
                        const char *Isa, std::unique_ptr<tc_package> &Out, std::string &Error,
                        PackageCode Code) {
  ManifestData M;
  std::vector<uint8_t> Text;
  std::string Why;
  if (!readFileBytes(ManifestPath, Text, Why, ManifestMaxBytes)) {
    Error = ManifestPath + ": " + Why;
    return TC_ERR_IO;
  }
  size_t Slash = ManifestPath.rfind('/');
  std::string Dir = Slash == std::string::npos ? "." : ManifestPath.substr(0, Slash);
  std::string ManifestText(Text.begin(), Text.end());
  if (tc_status_t St = statusOf(
          parseManifest(ManifestText, ManifestPath, Dir, manifestFilesOnDisk(), M, Error));
      St != TC_OK)
    return St;
  if (Name && M.Package != Name) {
    Error = ManifestPath + ": is the manifest of package '" + M.Package + "'";
    return TC_ERR_UNKNOWN_PACKAGE;
  }
  auto P = std::make_unique<tc_package>();
  P->Name = M.Package;
  P->Identity = M.Identity;
  P->Tag = identityTag(M.Identity);
  P->ISA = Isa ? Isa : isaName(hostIsa());
  P->OwnIsa = isaOf(P->ISA);
  P->Roles = Roles;
  P->Dir = Dir;
  P->ManifestText = std::move(ManifestText);
  P->Interface = packageInterface(M);
  // A signature beside the manifest travels with the package when it is
  // deployed (docs/deploying.md); it is checked by receivers that ask for one.
  std::vector<uint8_t> Signature;
  if (readFileBytes(ManifestPath + ".sig", Signature, Why, MaxSignatureFileSize))
    P->SignatureText.assign(Signature.begin(), Signature.end());
  for (const auto &[ISAName, Fields] : M.ISAs)
    if (auto L = Fields.find("local"); L != Fields.end() && Fields.count("local-hash"))
      P->Files.push_back({Fields.at("local-hash"), L->second, false});
  for (const ManifestElement &E : M.Elements)
    P->Files.push_back(
        {E.Fields.at("hash"), E.Fields.at(E.Kind == "jam" ? "image" : "lib"), E.Kind == "ried"});
  if (!M.ISAs.count(P->ISA)) {
    Error = "package '" + P->Name + "' was not built for " + P->ISA;
    return TC_ERR_UNKNOWN_PACKAGE;
  }
  tc_status_t St = TC_OK;
  for (const ManifestElement &E : M.Elements) {
    if (E.Fields.at("isa") != P->ISA)
      continue;
    // The reader bounds IDs; the table below is indexed by them, so a bound
    // that failed must not become a huge or wrapped resize.
    if (E.ID >= ElementIDLimit) {
      Error = ManifestPath + ": element '" + E.Name + "' has ID " + std::to_string(E.ID) +
              ", not below " + std::to_string(ElementIDLimit);
      return TC_ERR_BAD_IMAGE;
    }
    if (E.ID >= P->Elements.size())
      P->Elements.resize(size_t(E.ID) + 1);
    PackageElement &PE = P->Elements[E.ID];
    PE.Present = true;
    PE.Name = E.Name;
    PE.IsJam = E.Kind == "jam";
    if (PE.IsJam && (St = readImage(M, E, PE, Error)) != TC_OK)
      return St;
  }
  // A sender sends each receiver the images built for its instruction set.
  for (const auto &[ISAName, Files] : M.ISAs) {
    uint32_t Other = isaOf(ISAName);
    if (!(P->Roles & TC_PACKAGE_SENDER) || ISAName == P->ISA || !Other)
      continue;
    std::vector<PackageElement> Images(P->Elements.size());
    for (const ManifestElement &E : M.Elements) {
      if (E.Fields.at("isa") != ISAName || E.Kind != "jam" || E.ID >= Images.size() ||
          !P->Elements[E.ID].Present || P->Elements[E.ID].Name != E.Name)
        continue;
      PackageElement &PE = Images[E.ID];
      PE.Present = PE.IsJam = true;
      PE.Name = E.Name;
      if ((St = readImage(M, E, PE, Error)) != TC_OK)
        return St;
    }
    P->OtherIsas.emplace_back(Other, std::move(Images));
  }
  if (!(P->Roles & TC_PACKAGE_RECEIVER))
    St = loadLocalLibrary(*P, M, Error);
  else if (Code == PackageCode::Sandboxed)
    St = loadSandboxedSide(*P, M, Error);
  else
    St = loadReceiverSide(*P, M, Error);
  if (St != TC_OK)
    return St;
  Out = std::move(P);
  return TC_OK;
}

std::string packageInterface(const ManifestData &M) {
  Sha256 H;
  H.update("interface " + M.Package + "\n");
  for (const ManifestElement &E : M.Elements)
    if (E.Kind == "ried")
      H.update(E.Kind + " " + std::to_string(E.ID) + " " + E.Name + " " + E.Fields.at("isa") + " " +
               E.Fields.at("hash") + "\n");
  return H.hex();
}

} // namespace twochains::rt

extern "C" tc_status_t tc_package_load(const tc_package_params_t *Params, tc_package_t **Out) {
  if (!Params || !Out || Params->version != TC_PACKAGE_PARAMS_VERSION || !Params->prefix ||
      !Params->name || !Params->roles ||
      (Params->roles & ~uint32_t(TC_PACKAGE_SENDER | TC_PACKAGE_RECEIVER)))
    return TC_ERR_INVALID_PARAM;
  std::string Path = std::string(Params->prefix) + "/lib/twochains/packages/" + Params->name +
                     "/manifest.tcm";
  std::unique_ptr<tc_package> P;
  std::string Error;
  if (tc_status_t St = loadPackage(Path, Params->name, Params->roles, Params->isa, P, Error);
      St != TC_OK) {
    logError(Error);
    return St;
  }
  *Out = P.release();
  return TC_OK;
}

extern "C" void tc_package_unload(tc_package_t *P) {
  if (!P)
    return;
  // Rieds stay loaded: jams of frames still in flight may refer to them,
  // and their state is the receiver's.
  delete P;
}

extern "C" const char *tc_package_identity(const tc_package_t *P) {
  return P ? P->Identity.c_str() : "";
}

tc_status_t twochains::rt::findElement(const tc_package *P, const char *Name, uint32_t *ID) {
  for (size_t I = 0; I < P->Elements.size(); ++I)
    if (P->Elements[I].Present && P->Elements[I].Name == Name) {
      *ID = uint32_t(I);
      return TC_OK;
    }
  return TC_ERR_UNKNOWN_ELEMENT;
}

extern "C" tc_status_t tc_package_find(const tc_package_t *P, const char *Name,
                                       uint32_t *ID) {
  if (!P || !Name || !ID)
    return TC_ERR_INVALID_PARAM;
  return findElement(P, Name, ID);
}

namespace twochains::rt {

std::string codeDigest(const uint8_t *Image, size_t Size, uint64_t GOTP) {
  static const uint8_t Zero[8] = {};
  Sha256 H;
  // Not GOTP + 8 > Size: that wraps for a GOTP near 2^64.
  if (GOTP > Size || Size - GOTP < 8)
    H.update(Image, Size);
  else {
    H.update(Image, GOTP);
    H.update(Zero, 8);
    H.update(Image + GOTP + 8, Size - GOTP - 8);
  }
  return H.hex();
}


} // namespace twochains::rt

extern "C" void *tc_package_symbol(const tc_package_t *Pkg, const char *Name) {
  if (!Pkg || !Name)
    return nullptr;
  // Only the package's own rieds: dlsym on a handle also searches what the
  // library depends on (libc...), so the symbol must be defined in it.
  for (void *H : Pkg->RiedLibraries) {
    void *Addr = dlsym(H, Name);
    link_map *Map = nullptr;
    Dl_info Info;
    if (Addr && dlinfo(H, RTLD_DI_LINKMAP, &Map) == 0 && Map && dladdr(Addr, &Info) &&
        Info.dli_fname && Map->l_name && !std::strcmp(Info.dli_fname, Map->l_name))
      return Addr;
  }
  return nullptr;
}
