//===- JamAttributes.cpp - jam_entry, jam_payload_size, jam_payload_init --===//
//
// Marks a function for a role when its name cannot be the canonical one.
// The attribute lowers to an annotation that the checker and the IR passes
// recognise; twochains/jam.h wraps them in TC_JAM_ENTRY & co.
//
//===----------------------------------------------------------------------===//
#include "JamOptions.h"

#include "clang/AST/Attr.h"
#include "clang/Basic/ParsedAttrInfo.h"
#include "clang/Sema/ParsedAttr.h"
#include "clang/Sema/Sema.h"
#include "clang/Sema/SemaDiagnostic.h"

using namespace clang;

namespace {

template <const char *GNUName, const char *CXX11Name, const char *Annotation>
struct JamRoleAttrInfo : public ParsedAttrInfo {
  static constexpr Spelling SpellingList[] = {
      {ParsedAttr::AS_GNU, GNUName},
      {ParsedAttr::AS_C23, CXX11Name},
      {ParsedAttr::AS_CXX11, CXX11Name},
  };

  JamRoleAttrInfo() {
    OptArgs = 0;
    NumArgs = 0;
    ParsedAttrInfo::Spellings = SpellingList;
  }

  bool diagAppertainsToDecl(Sema &S, const ParsedAttr &Attr,
                            const Decl *D) const override {
    if (isa<FunctionDecl>(D))
      return true;
    S.Diag(Attr.getLoc(), diag::warn_attribute_wrong_decl_type_str)
        << Attr << Attr.isRegularKeywordAttribute() << "functions";
    return false;
  }

  AttrHandling handleDeclAttribute(Sema &S, Decl *D,
                                   const ParsedAttr &Attr) const override {
    D->addAttr(AnnotateAttr::Create(S.Context, Annotation, nullptr, 0,
                                    Attr.getRange()));
    return AttributeApplied;
  }
};

using twochains::EntryAnnotation;
using twochains::PayloadInitAnnotation;
using twochains::PayloadSizeAnnotation;
constexpr char EntryGNU[] = "jam_entry";
constexpr char EntryScoped[] = "twochains::jam_entry";
constexpr char SizeGNU[] = "jam_payload_size";
constexpr char SizeScoped[] = "twochains::jam_payload_size";
constexpr char InitGNU[] = "jam_payload_init";
constexpr char InitScoped[] = "twochains::jam_payload_init";

static ParsedAttrInfoRegistry::Add<JamRoleAttrInfo<EntryGNU, EntryScoped, EntryAnnotation>>
    EntryAttr("jam_entry", "marks the function a jam runs on the receiver");
static ParsedAttrInfoRegistry::Add<JamRoleAttrInfo<SizeGNU, SizeScoped, PayloadSizeAnnotation>>
    SizeAttr("jam_payload_size",
             "marks the sender-side payload-size helper of a jam");
static ParsedAttrInfoRegistry::Add<JamRoleAttrInfo<InitGNU, InitScoped, PayloadInitAnnotation>>
    InitAttr("jam_payload_init",
             "marks the sender-side payload-init helper of a jam");

} // namespace
