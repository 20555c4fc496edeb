//===- isync.cpp - What making fresh code runnable costs ------------------===//
//
// The executor copies an arrived image into executable memory and runs it
// in the same thread. On x86_64 that is self-modifying code, which the
// processor detects and handles without any instruction (only code written
// by *another* agent needs the executing thread to serialise); on aarch64
// the rule is DC CVAU / IC IVAU / DSB / ISB, which __builtin___clear_cache
// emits. This measures, per call: the copy of a 64-byte image, the
// clear-cache call, and the serialising alternatives a cross-modifying
// design would need (CPUID, SERIALIZE where CPUID reports it, LFENCE as a
// weaker barrier). A benchmark: it asserts nothing.
//
//   build/bench/isync
//===----------------------------------------------------------------------===//
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sys/mman.h>
#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

template <typename Fn> static double nsPerCall(Fn F, int N = 200000) {
  for (int I = 0; I < 1000; ++I)
    F();
  auto Start = std::chrono::steady_clock::now();
  for (int I = 0; I < N; ++I)
    F();
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - Start)
             .count() / N;
}

int main() {
  auto *Exec = static_cast<uint8_t *>(mmap(nullptr, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  // A 64-byte image whose entry returns at once (x86: ret; aarch64: ret).
  uint8_t Image[64] = {};
#if defined(__x86_64__)
  Image[0] = 0xc3;
#else
  const uint32_t Ret = 0xd65f03c0;
  std::memcpy(Image, &Ret, 4);
#endif
  std::memcpy(Exec, Image, 64);
  __builtin___clear_cache(reinterpret_cast<char *>(Exec), reinterpret_cast<char *>(Exec + 64));
  auto Call = reinterpret_cast<void (*)()>(Exec);
  std::printf("%-44s %8.1f ns\n", "call, image already in place",
              nsPerCall([&] { Call(); }));
  std::printf("%-44s %8.1f ns\n", "copy 64 B image + call",
              nsPerCall([&] { std::memcpy(Exec, Image, 64); Call(); }));
  std::printf("%-44s %8.1f ns\n", "copy + __builtin___clear_cache + call",
              nsPerCall([&] {
                std::memcpy(Exec, Image, 64);
                __builtin___clear_cache(reinterpret_cast<char *>(Exec),
                                        reinterpret_cast<char *>(Exec + 64));
                Call();
              }));
#if defined(__x86_64__)
  std::printf("%-44s %8.1f ns\n", "copy + LFENCE + call",
              nsPerCall([&] { std::memcpy(Exec, Image, 64); _mm_lfence(); Call(); }));
  std::printf("%-44s %8.1f ns\n", "copy + CPUID (serialising) + call",
              nsPerCall([&] {
                std::memcpy(Exec, Image, 64);
                unsigned A, B, C, D;
                __cpuid(0, A, B, C, D);
                Call();
              }, 20000));
  unsigned A, B, C, D;
  if (__get_cpuid_count(7, 0, &A, &B, &C, &D) && (D & (1u << 14)))
    std::printf("%-44s %8.1f ns\n", "copy + SERIALIZE + call",
                nsPerCall([&] {
                  std::memcpy(Exec, Image, 64);
                  asm volatile(".byte 0x0f, 0x01, 0xe8" ::: "memory"); // SERIALIZE
                  Call();
                }));
  else
    std::printf("%-44s %8s\n", "copy + SERIALIZE + call", "n/a (CPUID.7:EDX[14] clear)");
#endif
  munmap(Exec, 4096);
  return 0;
}
