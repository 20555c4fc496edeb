//===- Rules.cpp - The sandbox's rules by name ----------------------------===//
#include "verify/Verify.h"

using namespace twochains::verify;

namespace {
struct RuleInfo {
  const char *Name, *Text;
};
// In the order of Rule.
constexpr RuleInfo Rules[] = {
    {"none", "no rule is broken"},
    {"truncated", "code is whole instructions"},
    {"undecodable", "every instruction is one the verifier knows"},
    {"forbidden",
     "no system, exception, pointer-authentication, memory-tag or unprivileged instruction"},
    {"writes-base", "the region's base register is never written"},
    {"writes-address", "the address register is written only as base + 32-bit offset"},
    {"writes-stack",
     "the stack pointer is written only as base + 32-bit offset or by an immediate writeback"},
    {"unguarded-link", "a write to the link register is confined by the next instruction"},
    {"runtime-call", "a runtime call loads its entry from the call table and calls it at once"},
    {"memory-base",
     "memory is reached through the address register, the stack pointer or the base plus an "
     "immediate, or as base + 32-bit register"},
    {"writeback", "only the stack pointer is moved by a load or store, by an immediate"},
    {"literal-outside", "a PC-relative load reads inside the code"},
    {"branch-outside", "a direct branch lands inside the code"},
    {"indirect-branch",
     "an indirect branch goes through the address register, a return through the link register"},
    {"ends-unguarded", "the code does not end inside a guard sequence or fall off its end"},
    {"rip-outside", "a %rip-relative operand reaches inside the region"},
    {"crosses-bundle", "no instruction crosses a 32-byte bundle"},
    {"branch-into-guard",
     "a direct branch lands on an instruction's start, not inside a guard sequence"},
    {"call-position", "a call ends at its bundle's end"},
};
static_assert(sizeof(Rules) / sizeof(Rules[0]) == unsigned(Rule::CallPosition) + 1,
              "one entry per rule");
} // namespace

const char *twochains::verify::ruleName(Rule R) {
  return unsigned(R) <= unsigned(Rule::CallPosition) ? Rules[unsigned(R)].Name : "unknown";
}

const char *twochains::verify::ruleText(Rule R) {
  return unsigned(R) <= unsigned(Rule::CallPosition) ? Rules[unsigned(R)].Text : "unknown";
}
