//===- JamChecker.cpp -----------------------------------------------------===//
#include "JamChecker.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"

using namespace clang;

namespace twochains {

namespace {

/// Custom diagnostics of the plugin. Warnings can be silenced with
/// -Wno-... only as a group the user defines; keep them few and precise.
struct JamDiags {
  unsigned NoElementName, BadElementName, NoEntry, DuplicateRole, RoleLinkage,
      RoleAsmLabel, EntrySignature, HelperSignature, HelperArgsMismatch,
      HelperUnpaired, ParamNote, PreviousNote, ThreadLocalVar, ThreadLocalUse,
      WritableStatic, InlineAsm, FileScopeAsm, CtorDtor,
      IFunc;

  explicit JamDiags(DiagnosticsEngine &D) {
    using L = DiagnosticsEngine::Level;
    NoElementName = D.getCustomDiagID(
        L::Error, "cannot tell the jam's element name from '%0': name the "
                  "file jam_<name>.amc or pass -fplugin-arg-twochains-element=<name>");
    BadElementName = D.getCustomDiagID(
        L::Error, "invalid jam element name '%0': use letters, digits and '_'");
    NoEntry = D.getCustomDiagID(
        L::Error, "jam '%0' has no entry: define 'void %0_main(tc_jam_ctx_t "
                  "*ctx, void *payload, size_t payload_size)' or mark a "
                  "function with TC_JAM_ENTRY");
    DuplicateRole = D.getCustomDiagID(
        L::Error, "more than one function is marked as the jam's %0");
    RoleLinkage = D.getCustomDiagID(
        L::Error, "jam %0 '%1' must have external linkage and not be "
                  "inline, so that it is always emitted");
    RoleAsmLabel = D.getCustomDiagID(
        L::Error, "jam %0 '%1' must not have an asm label");
    EntrySignature = D.getCustomDiagID(
        L::Error, "jam entry '%0' has type %1; expected 'void (tc_jam_ctx_t "
                  "*, void *, size_t)'");
    HelperSignature = D.getCustomDiagID(
        L::Error, "jam %0 '%1' has type %2; expected '%3'");
    HelperArgsMismatch = D.getCustomDiagID(
        L::Error, "jam helpers take different argument types: %0 here, %1 "
                  "in '%2'");
    HelperUnpaired = D.getCustomDiagID(
        L::Error, "jam %0 '%1' has no matching %2 '%3': define both or neither");
    ParamNote = D.getCustomDiagID(L::Note, "%0");
    PreviousNote = D.getCustomDiagID(L::Note, "previous %0 is here");
    ThreadLocalVar = D.getCustomDiagID(
        L::Error, "thread-local variable '%0' cannot be part of a jam: the "
                  "jam runs on a receiver thread that has no copy of it");
    ThreadLocalUse = D.getCustomDiagID(
        L::Error, "jam uses thread-local variable '%0', which cannot be "
                  "reached from the receiver; keep per-thread state in a ried");
    // docs/writing-jams.md, "Static data": what it is in each mode.
    WritableStatic = D.getCustomDiagID(
        L::Warning, "writable static data '%0' lives on the receiver and keeps "
                    "its changes between messages: injected frames share one copy "
                    "per receiving context, Local frames the Local-Function "
                    "library's copy, one per process; the two copies are "
                    "separate, and the sender's is never changed");
    InlineAsm = D.getCustomDiagID(
        L::Warning, "inline assembly is shipped as written: it must not refer "
                    "to symbols or absolute addresses, which the jam rewrite "
                    "cannot see");
    FileScopeAsm = D.getCustomDiagID(
        L::Error, "file-scope assembly cannot be part of a jam");
    CtorDtor = D.getCustomDiagID(
        L::Error, "jam function '%0' cannot be a %select{constructor|destructor}1: "
                  "jams are not loaded, they arrive; use a ried initialiser");
    IFunc = D.getCustomDiagID(
        L::Error, "ifunc '%0' needs the dynamic loader and cannot be part of a jam");
  }
};

enum class Role { Entry, PayloadSize, PayloadInit };

const char *roleName(Role R) {
  switch (R) {
  case Role::Entry: return "entry";
  case Role::PayloadSize: return "payload-size helper";
  case Role::PayloadInit: return "payload-init helper";
  }
  return "";
}

class JamChecker : public ASTConsumer,
                   public RecursiveASTVisitor<JamChecker> {
public:
  JamChecker(CompilerInstance &CI, std::shared_ptr<JamOptions> Opts)
      : CI(CI), Diags(CI.getDiagnostics()), IDs(Diags), Opts(std::move(Opts)) {}

  void HandleTranslationUnit(ASTContext &Ctx) override {
    this->Ctx = &Ctx;
    TraverseDecl(Ctx.getTranslationUnitDecl());
    if (!Opts->Part)
      resolveRoles();
  }

  bool shouldVisitImplicitCode() const { return false; }

  bool VisitVarDecl(VarDecl *VD) {
    if (VD->getTLSKind() != VarDecl::TLS_None) {
      if (VD->isThisDeclarationADefinition() == VarDecl::Definition ||
          VD->isThisDeclarationADefinition() == VarDecl::TentativeDefinition)
        Diags.Report(VD->getLocation(), IDs.ThreadLocalVar) << VD->getName();
      return true;
    }
    if (!VD->hasGlobalStorage() || VD->hasExternalStorage() ||
        isa<ParmVarDecl>(VD) || !VD->isReferenced())
      return true;
    if (!VD->getType().isConstant(*Ctx) && !Opts->NoStaticWarning)
      Diags.Report(VD->getLocation(), IDs.WritableStatic) << VD->getName();
    return true;
  }

  bool VisitDeclRefExpr(DeclRefExpr *E) {
    auto *VD = dyn_cast<VarDecl>(E->getDecl());
    if (VD && VD->getTLSKind() != VarDecl::TLS_None &&
        VD->hasExternalStorage() && !VD->hasDefinition())
      Diags.Report(E->getLocation(), IDs.ThreadLocalUse) << VD->getName();
    return true;
  }

  bool VisitGCCAsmStmt(GCCAsmStmt *S) {
    Diags.Report(S->getAsmLoc(), IDs.InlineAsm);
    return true;
  }

  bool VisitFileScopeAsmDecl(FileScopeAsmDecl *D) {
    Diags.Report(D->getAsmLoc(), IDs.FileScopeAsm);
    return true;
  }

  bool VisitFunctionDecl(FunctionDecl *FD) {
    if (FD->hasAttr<ConstructorAttr>())
      Diags.Report(FD->getLocation(), IDs.CtorDtor) << FD->getName() << 0;
    if (FD->hasAttr<DestructorAttr>())
      Diags.Report(FD->getLocation(), IDs.CtorDtor) << FD->getName() << 1;
    if (FD->hasAttr<IFuncAttr>())
      Diags.Report(FD->getLocation(), IDs.IFunc) << FD->getName();
    if (FD->doesThisDeclarationHaveABody())
      Definitions.push_back(FD);
    return true;
  }

private:
  CompilerInstance &CI;
  DiagnosticsEngine &Diags;
  JamDiags IDs;
  std::shared_ptr<JamOptions> Opts;
  ASTContext *Ctx = nullptr;
  std::vector<FunctionDecl *> Definitions;

  SourceLocation fileStart() const {
    SourceManager &SM = CI.getSourceManager();
    return SM.getLocForStartOfFile(SM.getMainFileID());
  }

  static bool hasAnnotation(const FunctionDecl *FD, StringRef Annotation) {
    for (const auto *A : FD->specific_attrs<AnnotateAttr>())
      if (A->getAnnotation() == Annotation)
        return true;
    return false;
  }

  /// Finds the function for a role: marked by attribute, else named
  /// canonically. Reports duplicates. Returns null if there is none.
  FunctionDecl *findRole(Role R, StringRef Annotation, StringRef Canonical) {
    FunctionDecl *Marked = nullptr;
    for (FunctionDecl *FD : Definitions) {
      if (!hasAnnotation(FD, Annotation))
        continue;
      if (Marked) {
        Diags.Report(FD->getLocation(), IDs.DuplicateRole) << roleName(R);
        Diags.Report(Marked->getLocation(), IDs.PreviousNote) << roleName(R);
        continue;
      }
      Marked = FD;
    }
    if (Marked)
      return Marked;
    for (FunctionDecl *FD : Definitions)
      if (FD->getName() == Canonical)
        return FD;
    return nullptr;
  }

  bool checkLinkage(Role R, FunctionDecl *FD) {
    if (FD->getStorageClass() == SC_Static || FD->isInlineSpecified()) {
      Diags.Report(FD->getLocation(), IDs.RoleLinkage)
          << roleName(R) << FD->getName();
      return false;
    }
    if (FD->hasAttr<AsmLabelAttr>()) {
      Diags.Report(FD->getLocation(), IDs.RoleAsmLabel)
          << roleName(R) << FD->getName();
      return false;
    }
    return true;
  }

  bool isSizeT(QualType T) const {
    return Ctx->hasSameType(T.getUnqualifiedType(), Ctx->getSizeType());
  }

  static bool isObjectPointer(QualType T) {
    return T->isPointerType() && !T->getPointeeType()->isFunctionType();
  }

  static bool isCtxPointer(QualType T) {
    if (!T->isPointerType())
      return false;
    QualType P = T->getPointeeType().getUnqualifiedType();
    if (P->isVoidType())
      return true;
    const auto *RT = P->getAs<RecordType>();
    return RT && RT->getDecl()->getName() == "tc_jam_ctx";
  }

  void noteParam(const FunctionDecl *FD, unsigned I, StringRef Expected) {
    const ParmVarDecl *P = FD->getParamDecl(I);
    std::string Msg = "parameter " + std::to_string(I + 1) + " has type '" +
                      P->getType().getAsString() + "'; expected " +
                      Expected.str();
    Diags.Report(P->getLocation(), IDs.ParamNote) << Msg;
  }

  bool checkEntrySignature(FunctionDecl *FD) {
    QualType Ty = FD->getType();
    auto Report = [&] {
      Diags.Report(FD->getLocation(), IDs.EntrySignature)
          << FD->getName() << Ty;
    };
    const auto *Proto = Ty->getAs<FunctionProtoType>();
    if (!Proto || Proto->isVariadic() || FD->getNumParams() != 3 ||
        !FD->getReturnType()->isVoidType()) {
      Report();
      return false;
    }
    if (!isCtxPointer(FD->getParamDecl(0)->getType())) {
      Report();
      noteParam(FD, 0, "'tc_jam_ctx_t *'");
      return false;
    }
    if (!isObjectPointer(FD->getParamDecl(1)->getType())) {
      Report();
      noteParam(FD, 1, "a pointer to the payload, such as 'void *'");
      return false;
    }
    if (!isSizeT(FD->getParamDecl(2)->getType())) {
      Report();
      noteParam(FD, 2, "'size_t'");
      return false;
    }
    return true;
  }

  /// The helpers are size_t NAME_payload_size(const ARGS *) and
  /// size_t NAME_payload_init(const ARGS *, void *payload).
  bool checkHelperSignature(Role R, FunctionDecl *FD, QualType &ArgsType) {
    const char *Expected = R == Role::PayloadSize
                               ? "size_t (const ARGS *args)"
                               : "size_t (const ARGS *args, void *payload)";
    unsigned Arity = R == Role::PayloadSize ? 1 : 2;
    QualType Ty = FD->getType();
    auto Report = [&] {
      Diags.Report(FD->getLocation(), IDs.HelperSignature)
          << roleName(R) << FD->getName() << Ty << Expected;
    };
    const auto *Proto = Ty->getAs<FunctionProtoType>();
    if (!Proto || Proto->isVariadic() || FD->getNumParams() != Arity ||
        !isSizeT(FD->getReturnType())) {
      Report();
      return false;
    }
    QualType Args = FD->getParamDecl(0)->getType();
    if (!isObjectPointer(Args) || !Args->getPointeeType().isConstQualified()) {
      Report();
      noteParam(FD, 0, "a pointer to const arguments, such as 'const struct "
                       "my_args *'");
      return false;
    }
    if (Arity == 2 && !isObjectPointer(FD->getParamDecl(1)->getType())) {
      Report();
      noteParam(FD, 1, "'void *'");
      return false;
    }
    ArgsType = Args->getPointeeType().getUnqualifiedType();
    return true;
  }

  /// The source-level declaration of a helper's argument type: a struct,
  /// union or enum definition, or a typedef together with the definition
  /// of the tag it names. Empty for built-in types.
  std::string declarationOf(QualType T) const {
    std::string Text;
    llvm::raw_string_ostream OS(Text);
    PrintingPolicy Policy = Ctx->getPrintingPolicy();
    Policy.IncludeTagDefinition = true;
    Policy.PolishForDeclaration = true;
    if (const auto *TT = T->getAs<TypedefType>()) {
      const TypedefNameDecl *TD = TT->getDecl();
      QualType Under = TD->getUnderlyingType();
      if (const TagDecl *Tag = Under->getAsTagDecl())
        if (Tag->getDeclName() && Tag->getDefinition()) {
          Tag->getDefinition()->print(OS, Policy);
          OS << ";\n";
          Policy.IncludeTagDefinition = false;
        }
      TD->print(OS, Policy);
      OS << ";";
      return Text;
    }
    if (const TagDecl *Tag = T->getAsTagDecl())
      if (const TagDecl *Def = Tag->getDefinition()) {
        Def->print(OS, Policy);
        OS << ";";
      }
    return Text;
  }

  void resolveRoles() {
    SourceManager &SM = CI.getSourceManager();
    std::string Element = Opts->Element;
    if (Element.empty()) {
      StringRef Path;
      if (OptionalFileEntryRef FE = SM.getFileEntryRefForID(SM.getMainFileID()))
        Path = FE->getName();
      Element = elementNameFromPath(Path);
      if (Element.empty()) {
        Diags.Report(fileStart(), IDs.NoElementName) << Path;
        return;
      }
    }
    if (!isValidJamName(Element)) {
      Diags.Report(fileStart(), IDs.BadElementName) << Element;
      return;
    }
    Opts->Element = Element;

    FunctionDecl *Entry =
        findRole(Role::Entry, EntryAnnotation, Element + "_main");
    FunctionDecl *Size = findRole(Role::PayloadSize, PayloadSizeAnnotation,
                                  Element + "_payload_size");
    FunctionDecl *Init = findRole(Role::PayloadInit, PayloadInitAnnotation,
                                  Element + "_payload_init");
    if (!Entry) {
      Diags.Report(fileStart(), IDs.NoEntry) << Element;
      return;
    }
    if (checkLinkage(Role::Entry, Entry) && checkEntrySignature(Entry))
      Opts->Entry = Entry->getName().str();

    if (bool(Size) != bool(Init)) {
      FunctionDecl *Have = Size ? Size : Init;
      Role HaveRole = Size ? Role::PayloadSize : Role::PayloadInit;
      Role MissingRole = Size ? Role::PayloadInit : Role::PayloadSize;
      std::string Missing =
          Element + (Size ? "_payload_init" : "_payload_size");
      Diags.Report(Have->getLocation(), IDs.HelperUnpaired)
          << roleName(HaveRole) << Have->getName() << roleName(MissingRole)
          << Missing;
      return;
    }
    if (!Size)
      return;
    QualType SizeArgs, InitArgs;
    bool OK = checkLinkage(Role::PayloadSize, Size) &&
              checkHelperSignature(Role::PayloadSize, Size, SizeArgs);
    OK &= checkLinkage(Role::PayloadInit, Init) &&
          checkHelperSignature(Role::PayloadInit, Init, InitArgs);
    if (!OK)
      return;
    if (!Ctx->hasSameType(SizeArgs, InitArgs)) {
      Diags.Report(Init->getParamDecl(0)->getLocation(), IDs.HelperArgsMismatch)
          << InitArgs << SizeArgs << Size->getName();
      return;
    }
    Opts->PayloadSize = Size->getName().str();
    Opts->PayloadInit = Init->getName().str();
    Opts->ArgsType = SizeArgs.getAsString(Ctx->getPrintingPolicy());
    Opts->ArgsDecl = declarationOf(SizeArgs);
  }
};

} // namespace

std::unique_ptr<ASTConsumer> createJamChecker(CompilerInstance &CI,
                                              std::shared_ptr<JamOptions> Opts) {
  return std::make_unique<JamChecker>(CI, std::move(Opts));
}

} // namespace twochains
