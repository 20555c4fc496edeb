//===- SandboxX86.cpp - Entering and leaving the sandbox on x86-64 --------===//
//
// The region's base is the thread's %gs base (docs/sandbox.md, "x86-64"),
// set before entering when the thread's last region differs: Linux user
// code never uses %gs (glibc keeps thread storage in %fs), so it is left
// set after. Without FSGSBASE in the kernel and CPU that is one
// arch_prctl per region switch.
//
// twochains_sandbox_enter saves the runtime's callee-saved registers, its
// MXCSR and x87 control word and its stack pointer, moves to the region's
// stack with the exit gate as the return address, clears every other
// general register (the jam learns no runtime address) and jumps to the
// jam. The jam's return (pop, mask, jump) lands on the exit gate, whose
// `callq *%gs:8*ExitSlot` reaches twochains_sandbox_exit, which leaves
// (SandboxLeaveX86.cpp).
//
// A service gate is `callq *%gs:8*S` ending its first bundle, then the
// masked return to the jam. Slot S's entry is thunk S: it records S and
// goes to twochains_sandbox_service, which saves the jam's %rsp and the
// return address its call pushed, moves to the runtime's stack below
// twochains_sandbox_enter's frame, calls the dispatcher, restores the
// jam's %rsp, clears the caller-saved registers it might have left runtime
// addresses in and jumps to the saved return address. Not `retq`: the
// address lies in the jam's stack, which the service may just have
// written (a memcpy the jam aimed at it), and the runtime's return is not
// masked.
//
//===----------------------------------------------------------------------===//
#include "sandbox/Region.h"
#include "sandbox/Services.h"

#include <asm/prctl.h>
#include <cstring>
#include <sys/syscall.h>
#include <unistd.h>

extern "C" {
__attribute__((visibility("hidden"))) extern uint64_t twochains_sandbox_saved_sp;
__attribute__((visibility("hidden"))) uint64_t twochains_sandbox_jam_sp;
__attribute__((visibility("hidden"))) uint64_t twochains_sandbox_service_return;
__attribute__((visibility("hidden"))) extern const uint8_t twochains_sandbox_thunks[];
__attribute__((visibility("hidden"))) int twochains_sandbox_enter(const uint8_t *Entry, void *Ctx,
                                                                  void *Payload, size_t Size,
                                                                  uint8_t *Base, uint8_t *StackTop,
                                                                  const uint8_t *ExitGate);
__attribute__((visibility("hidden"))) void twochains_sandbox_exit();
}

asm(R"(
  .text
  .p2align 4
  .globl twochains_sandbox_enter
  .hidden twochains_sandbox_enter
  .type twochains_sandbox_enter, @function
twochains_sandbox_enter:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $16, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, twochains_sandbox_saved_sp(%rip)
  movq 72(%rsp), %rax
  movq %rdi, %r11
  movq %rsi, %rdi
  movq %rdx, %rsi
  movq %rcx, %rdx
  leaq -8(%r9), %rsp
  movq %rax, (%rsp)
  xorl %eax, %eax
  xorl %ebx, %ebx
  xorl %ecx, %ecx
  xorl %ebp, %ebp
  xorl %r8d, %r8d
  xorl %r9d, %r9d
  xorl %r10d, %r10d
  xorl %r12d, %r12d
  xorl %r13d, %r13d
  xorl %r14d, %r14d
  xorl %r15d, %r15d
  cld
  jmpq *%r11
  .size twochains_sandbox_enter, .-twochains_sandbox_enter

  .p2align 4
  .globl twochains_sandbox_thunks
  .hidden twochains_sandbox_thunks
twochains_sandbox_thunks:
  .irp n, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
  .p2align 4
  movl $\n, %eax
  jmp twochains_sandbox_service
  .endr

  .p2align 4
  .type twochains_sandbox_service, @function
twochains_sandbox_service:
  movq (%rsp), %r11
  movq %r11, twochains_sandbox_service_return(%rip)
  movq %rsp, twochains_sandbox_jam_sp(%rip)
  movq twochains_sandbox_saved_sp(%rip), %rsp
  andq $-16, %rsp
  subq $8, %rsp
  pushq %rax
  cld
  callq twochains_sandbox_dispatch
  movq twochains_sandbox_jam_sp(%rip), %rsp
  addq $8, %rsp
  movq twochains_sandbox_service_return(%rip), %r11
  xorl %ecx, %ecx
  xorl %edx, %edx
  xorl %esi, %esi
  xorl %edi, %edi
  xorl %r8d, %r8d
  xorl %r9d, %r9d
  xorl %r10d, %r10d
  jmpq *%r11
  .size twochains_sandbox_service, .-twochains_sandbox_service
)");

namespace twochains::rt {

namespace {

/// The %gs base this thread last set (0: Linux's own, never a region's).
__attribute__((tls_model("initial-exec"))) thread_local uint8_t *ThreadRegion = nullptr;

bool useRegion(uint8_t *Base) {
  if (ThreadRegion == Base)
    return true;
  if (syscall(SYS_arch_prctl, ARCH_SET_GS, reinterpret_cast<unsigned long>(Base)) != 0)
    return false;
  ThreadRegion = Base;
  return true;
}

constexpr uint8_t Int3 = 0xcc;
/// `nopl 0(%rax,%rax,1)`, eight bytes.
constexpr uint8_t Nop8[] = {0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00};

/// `callq *%gs:8*Slot` ending the bundle at At (nops before it).
void writeRuntimeCall(uint8_t *At, unsigned Slot) {
  for (unsigned I = 0; I < 3; ++I)
    std::memcpy(At + 8 * I, Nop8, 8);
  const uint8_t Call[] = {0x65, 0xff, 0x14, 0x25};
  std::memcpy(At + 24, Call, 4);
  uint32_t Disp = 8 * Slot;
  std::memcpy(At + 28, &Disp, 4);
}

} // namespace

bool enterSandbox(const uint8_t *Entry, void *Ctx, void *Payload, size_t Size, uint8_t *Base,
                  uint8_t *StackTop, const uint8_t *ExitGate, bool &Abandoned) {
  if (!useRegion(Base))
    return false;
  Abandoned = twochains_sandbox_enter(Entry, Ctx, Payload, Size, Base, StackTop, ExitGate) != 0;
  return true;
}

bool sandboxAvailable() { return true; }

const void *sandboxSlotEntry(unsigned S) {
  if (S == SandboxLayout::ExitSlot)
    return reinterpret_cast<const void *>(&twochains_sandbox_exit);
  return S >= 1 && S < 16 ? twochains_sandbox_thunks + 16 * (S - 1) : nullptr;
}

void writeSandboxGates(uint8_t *Base, unsigned Slots) {
  using L = SandboxLayout;
  auto **Table = reinterpret_cast<const void **>(Base);
  Table[L::BaseSlot] = Base;
  for (unsigned S = 1; S < Slots; ++S)
    Table[S] = sandboxSlotEntry(S);
  Table[L::ExitSlot] = sandboxSlotEntry(L::ExitSlot);
  uint8_t *Gates = Base + L::ExitGate;
  std::memset(Gates, Int3, 4096);
  writeRuntimeCall(Gates, L::ExitSlot);
  // The masked return: popq %r11 ; andl $-32, %r11d ; addq %gs:0, %r11 ;
  // jmpq *%r11.
  const uint8_t Return[] = {0x41, 0x5b, 0x41, 0x83, 0xe3, 0xe0, 0x65, 0x4c, 0x03,
                            0x1c, 0x25, 0x00, 0x00, 0x00, 0x00, 0x41, 0xff, 0xe3};
  for (unsigned S = 1; S < Slots; ++S) {
    uint8_t *Gate = Gates + L::GateStride * S;
    writeRuntimeCall(Gate, S);
    std::memcpy(Gate + verify::X86BundleBytes, Return, sizeof Return);
  }
}

bool verifySandboxCode(const uint8_t *Code, size_t Bytes, uint64_t CodeOffset,
                       verify::Violation &V) {
  verify::SandboxLayout Layout;
  Layout.CodeOffset = CodeOffset;
  return verify::verifyX86_64(Code, Bytes, Layout, V);
}

uint8_t sandboxCodeFill() { return Int3; }

} // namespace twochains::rt
