//===- Driver.cpp - twochains-verify: the sandbox's verifier as a tool ----===//
//
//   twochains-verify x.jam                 a jam image's code
//   twochains-verify jam_x.o               each executable section
//   twochains-verify --raw --isa=x86_64 code.bin
//
// Exit status: 0 when every input verifies, 1 when one does not, 2 when
// an input cannot be read.
//
//===----------------------------------------------------------------------===//
#include "verify/Verify.h"

#include "Isa.h"
#include "JamImageFormat.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/MC/MCAsmInfo.h"
#include "llvm/MC/MCContext.h"
#include "llvm/MC/MCDisassembler/MCDisassembler.h"
#include "llvm/MC/MCInst.h"
#include "llvm/MC/MCInstPrinter.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCRegisterInfo.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/MCTargetOptions.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
namespace format = twochains::format;
namespace verify = twochains::verify;

static cl::OptionCategory Category("twochains-verify options");
static cl::list<std::string> Inputs(cl::Positional, cl::desc("<jam image, object or code>"),
                                    cl::OneOrMore, cl::cat(Category));
static cl::opt<bool> Raw("raw", cl::desc("Inputs are raw code (with --isa)"), cl::cat(Category));
static cl::opt<std::string> IsaName("isa", cl::desc("Instruction set of --raw inputs"),
                                    cl::value_desc("aarch64|x86_64"), cl::init("aarch64"),
                                    cl::cat(Category));
static cl::opt<unsigned> CallTableBytes(
    "call-table-bytes", cl::desc("Size of the runtime's call table at the region's base"),
    cl::init(verify::SandboxLayout().CallTableBytes), cl::cat(Category));
static cl::opt<bool> Quiet("q", cl::desc("Print only violations"), cl::cat(Category));

namespace {

/// One stretch of code to verify: Bytes at Offset of Input.
struct CodeRange {
  std::string Where; // "text" or a section name
  uint64_t Offset = 0;
  ArrayRef<uint8_t> Bytes;
};

/// The instruction at Word, as LLVM's disassembler prints it.
std::string disassemble(uint32_t Isa, ArrayRef<uint8_t> Bytes) {
  static bool Initialized = [] {
    InitializeAllTargetInfos();
    InitializeAllTargetMCs();
    InitializeAllDisassemblers();
    return true;
  }();
  (void)Initialized;
  std::string TripleName = Isa == format::IsaAArch64 ? "aarch64-linux-gnu" : "x86_64-linux-gnu";
  std::string Err;
  const Target *T = TargetRegistry::lookupTarget(TripleName, Err);
  if (!T)
    return "?";
  Triple TT(TripleName);
  std::unique_ptr<MCRegisterInfo> MRI(T->createMCRegInfo(TripleName));
  MCTargetOptions Options;
  std::unique_ptr<MCAsmInfo> MAI(T->createMCAsmInfo(*MRI, TripleName, Options));
  std::unique_ptr<MCSubtargetInfo> STI(
      T->createMCSubtargetInfo(TripleName, "", Isa == format::IsaAArch64 ? "+all" : ""));
  std::unique_ptr<MCInstrInfo> MII(T->createMCInstrInfo());
  MCContext Ctx(TT, MAI.get(), MRI.get(), STI.get());
  std::unique_ptr<MCDisassembler> DisAsm(T->createMCDisassembler(*STI, Ctx));
  std::unique_ptr<MCInstPrinter> IP(
      T->createMCInstPrinter(TT, MAI->getAssemblerDialect(), *MAI, *MII, *MRI));
  MCInst Inst;
  uint64_t Size = 0;
  if (!DisAsm || !IP ||
      DisAsm->getInstruction(Inst, Size, Bytes, 0, nulls()) != MCDisassembler::Success)
    return "<unknown>";
  std::string Text;
  raw_string_ostream OS(Text);
  IP->printInst(&Inst, 0, "", *STI, OS);
  StringRef Trimmed = StringRef(Text).trim();
  std::string Out;
  for (char C : Trimmed)
    Out += C == '\t' ? ' ' : C;
  return Out;
}

/// Verifies one range; prints its first violation.
bool verifyRange(StringRef Input, uint32_t Isa, const CodeRange &R) {
  verify::SandboxLayout Layout;
  Layout.CallTableBytes = CallTableBytes;
  verify::Violation V;
  bool X86 = Isa == format::IsaX86_64;
  if (Isa != format::IsaAArch64 && !X86) {
    WithColor::error(errs(), Input)
        << R.Where << ": no verifier for " << format::isaName(Isa) << " (docs/sandbox.md)\n";
    return false;
  }
  bool Verified = X86 ? verify::verifyX86_64(R.Bytes.data(), R.Bytes.size(), Layout, V)
                      : verify::verifyAArch64(R.Bytes.data(), R.Bytes.size(), Layout, V);
  if (Verified) {
    if (!Quiet) {
      outs() << Input << ": " << R.Where << ": verified, ";
      if (X86)
        outs() << R.Bytes.size() << " bytes\n";
      else
        outs() << R.Bytes.size() / 4 << " instructions\n";
    }
    return true;
  }
  size_t Length = std::min<size_t>(V.Length,
                                   R.Bytes.size() - std::min<size_t>(V.Offset, R.Bytes.size()));
  ArrayRef<uint8_t> At = R.Bytes.slice(std::min<size_t>(V.Offset, R.Bytes.size()), Length);
  std::string Text = V.Broken == verify::Rule::Truncated ? std::string("<partial>")
                                                         : disassemble(Isa, At);
  // aarch64's word as one number; x86-64's bytes in their order.
  std::string Encoding;
  raw_string_ostream EncodingOS(Encoding);
  if (X86)
    for (size_t I = 0; I < At.size(); ++I)
      EncodingOS << (I ? " " : "") << format_hex_no_prefix(At[I], 2);
  else
    EncodingOS << format_hex_no_prefix(V.Word, 8);
  WithColor::error(errs(), Input) << R.Where << "+0x" << utohexstr(V.Offset, true) << " (offset 0x"
                                  << utohexstr(R.Offset + V.Offset, true)
                                  << "): " << verify::ruleName(V.Broken) << ": `" << Text << "` ("
                                  << Encoding << ", " << V.Instruction << "): " << V.Detail << "\n";
  return false;
}

/// The code ranges of an input; false (error printed) if it cannot be read.
bool rangesOf(StringRef Path, const MemoryBuffer &Buffer, uint32_t &Isa,
              std::vector<CodeRange> &Out, std::unique_ptr<object::ObjectFile> &Object,
              format::JamImageData &Image) {
  ArrayRef<uint8_t> All(reinterpret_cast<const uint8_t *>(Buffer.getBufferStart()),
                        Buffer.getBufferSize());
  if (Raw) {
    Isa = format::isaOf(IsaName.getValue());
    if (!Isa) {
      WithColor::error(errs(), "twochains-verify")
          << "unknown --isa " << IsaName << " (expected " << format::KnownIsaNames << ")\n";
      return false;
    }
    Out.push_back({"code", 0, All});
    return true;
  }
  std::string Error;
  if (format::parseJamImage(All.data(), All.size(), Image, Error) == format::FormatError::None) {
    Isa = format::isaOf(Image.ISA);
    // The whole text, as jamlink --sandbox and the receiver verify it: the
    // GOTP cell, code, trampolines and the padding to the last line (a
    // sandboxed image keeps its read-only data in its data part).
    if (!Image.Sandbox && !Quiet)
      WithColor::note(errs(), Path) << "not linked with jamlink --sandbox; the receiver's "
                                       "verified policy would refuse it\n";
    Out.push_back({"text", 0, ArrayRef<uint8_t>(Image.Bytes).slice(0, Image.TextSize)});
    return true;
  }
  StringRef Why(Error);
  if (!Why.starts_with("not a jam image") && !Why.starts_with("unsupported machine") &&
      !Why.starts_with("file of")) {
    // A jam image the reader refuses is not read as an object instead.
    WithColor::error(errs(), Path) << Error << "\n";
    return false;
  }
  Expected<std::unique_ptr<object::ObjectFile>> Obj = object::ObjectFile::createObjectFile(
      Buffer.getMemBufferRef());
  if (!Obj) {
    consumeError(Obj.takeError());
    WithColor::error(errs(), Path)
        << "neither a jam image (" << Error << ") nor an object file; --raw reads raw code\n";
    return false;
  }
  Object = std::move(*Obj);
  Triple::ArchType Arch = Object->getArch();
  Isa = Arch == Triple::aarch64  ? uint32_t(format::IsaAArch64)
        : Arch == Triple::x86_64 ? uint32_t(format::IsaX86_64)
                                 : 0;
  if (!Isa) {
    WithColor::error(errs(), Path) << "an object for " << Triple::getArchTypeName(Arch) << ", not "
                                   << format::KnownIsaNames << "\n";
    return false;
  }
  for (const object::SectionRef &S : Object->sections()) {
    if (!S.isText() || S.getSize() == 0)
      continue;
    Expected<StringRef> Name = S.getName();
    Expected<StringRef> Contents = S.getContents();
    if (!Name || !Contents) {
      consumeError(Name.takeError());
      consumeError(Contents.takeError());
      WithColor::error(errs(), Path) << "a section cannot be read\n";
      return false;
    }
    uint64_t Offset = 0;
    if (isa<object::ELFObjectFileBase>(Object.get()))
      Offset = object::ELFSectionRef(S).getOffset();
    Out.push_back({Name->str(), Offset, arrayRefFromStringRef(*Contents)});
  }
  return true;
}

} // namespace

int main(int Argc, char **Argv) {
  InitLLVM X(Argc, Argv);
  cl::HideUnrelatedOptions(Category);
  cl::ParseCommandLineOptions(
      Argc, Argv,
      "twochains-verify: checks that sandboxed jam code keeps the sandbox's rules "
      "(docs/sandbox.md)\n\n"
      "  twochains-verify x.jam              a jam image's text\n"
      "  twochains-verify jam_x.o            an object's executable sections\n"
      "  twochains-verify --raw --isa=x86_64 code.bin   raw code of an ISA\n\n"
      "Prints the first violation of each input with its offset, instruction and rule.\n"
      "Exit status: 0 all verified, 1 a violation, 2 an input that cannot be read.\n");
  bool AllGood = true, Unreadable = false;
  for (const std::string &Path : Inputs) {
    ErrorOr<std::unique_ptr<MemoryBuffer>> Buffer = MemoryBuffer::getFileOrSTDIN(
        Path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
    if (!Buffer) {
      WithColor::error(errs(), Path) << "cannot read: " << Buffer.getError().message() << "\n";
      Unreadable = true;
      continue;
    }
    uint32_t Isa = 0;
    std::vector<CodeRange> Ranges;
    std::unique_ptr<object::ObjectFile> Object;
    format::JamImageData Image;
    if (!rangesOf(Path, **Buffer, Isa, Ranges, Object, Image)) {
      Unreadable = true;
      continue;
    }
    for (const CodeRange &R : Ranges)
      AllGood &= verifyRange(Path, Isa, R);
  }
  return Unreadable ? 2 : AllGood ? 0 : 1;
}
