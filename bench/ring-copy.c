/*===- ring-copy.c - The receiver's private copy, without the runtime -------===
 *
 *   ring-copy [--bytes LIST] [--rounds N] [--messages N] [--cpus A,B]
 *
 * Two threads on two CPUs and a ring of 64 slots 40 KiB + 64 B apart (as
 * tc-perf's), in this process's memory: what crosses cores is what crosses
 * them over shared memory between two processes. The payload is int32s and
 * the reader's work is server_side_sum's (add them into an int64).
 *
 * stream: the writer copies a payload into the next free slot and stores
 * its sequence after it (release); the reader waits for that word, handles
 * the payload, and publishes how far it got, which the writer waits on
 * when the ring is full. The reader handles it
 *   in-place     summing it where it landed (UCX's active-message handler);
 *   copy         copying it out first and summing the copy (Two-Chains'
 *                trust boundary: a peer that can write its slot at any time
 *                must not change what the jam reads);
 *   copy+next    as copy, after prefetching the next slot's lines (to
 *                overlap their transfer with this payload's work);
 *   copy+next-l2 the same, prefetched towards L2 only.
 * Messages/s is the receiver's rate when it is the slower side.
 *
 * pingpong: one frame of N lines each way, the answer written when the
 * frame has been handled. The reader either polls the frame's last word
 * and sums in place (ucx-put's receiver), or polls the first line's last
 * word, reads the length there, waits for the trailer and copies the
 * payload out (Two-Chains' marked frame, docs/frames.md).
 *
 * Every pattern runs once per round, each round starting with the next
 * one, and each is reported as the median over rounds of its ratio to the
 * first pattern's time in the same round, so that a slow phase of the
 * machine cannot decide a ratio (docs/performance.md, "Message rate").
 * Below about 1 KiB the writer is the slower side of the stream, and its
 * times say little about the reader's patterns.
 *===----------------------------------------------------------------------===*/
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { Slots = 64, Stride = 40960 + 64, Line = 64, MaxRounds = 101, MaxBytes = 32768 };

/* Each word one side writes while the other reads has a line of its own;
 * the rest is written before the threads start, or only by one of them. */
#define OWN_LINE __attribute__((aligned(64)))
static uint8_t *Ring[2]; /* [0] towards the reader, [1] back (ping-pong) */
static size_t Bytes;
static int Cpu[2] = {0, 1};
static volatile uint64_t Handled OWN_LINE;
static volatile int Stop OWN_LINE;
static volatile int Pattern OWN_LINE;
static __thread uint8_t Private[MaxBytes + Line] OWN_LINE;
static __thread int64_t Total; /* per thread: a shared sum would cross cores too */
int64_t ring_copy_total;       /* external: the sums are not optimised away */

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void pin(int C) {
  cpu_set_t S;
  CPU_ZERO(&S);
  CPU_SET(C, &S);
  pthread_setaffinity_np(pthread_self(), sizeof S, &S);
}

static inline void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ volatile("yield");
#endif
}

__attribute__((noinline)) static void sum(const int32_t *P, size_t N) {
  int64_t S = 0;
  for (size_t I = 0; I < N; ++I)
    S += P[I];
  Total += S;
}

static uint8_t *slot(int R, uint64_t Seq) { return Ring[R] + (Seq % Slots) * Stride; }

/* ---- stream ---------------------------------------------------------- */

static const char *StreamNames[] = {"in-place", "copy", "copy+next", "copy+next-l2"};
enum { StreamPatterns = 4 };

static void *stream_writer(void *Unused) {
  (void)Unused;
  pin(Cpu[1]);
  static uint8_t Source[MaxBytes];
  memset(Source, 1, sizeof Source);
  for (uint64_t Seq = 1; !Stop; ++Seq) {
    while (Seq >= Handled + Slots)
      if (Stop)
        return NULL;
      else
        relax();
    uint8_t *S = slot(0, Seq);
    memcpy(S, Source, Bytes);
    __atomic_store_n((uint64_t *)(S + Bytes), Seq, __ATOMIC_RELEASE);
  }
  return NULL;
}

static void stream_read(uint64_t Seq, int P) {
  uint8_t *S = slot(0, Seq);
  while (__atomic_load_n((uint64_t *)(S + Bytes), __ATOMIC_ACQUIRE) != Seq)
    relax();
  if (P >= 2) {
    const char *Next = (const char *)slot(0, Seq + 1);
    for (size_t At = 0; At < Bytes + 8; At += Line)
      if (P == 2)
        __builtin_prefetch(Next + At, 0, 3);
      else
        __builtin_prefetch(Next + At, 0, 1);
  }
  if (P == 0) {
    sum((const int32_t *)S, Bytes / 4);
  } else {
    memcpy(Private, S, Bytes);
    sum((const int32_t *)Private, Bytes / 4);
  }
  __atomic_store_n(&Handled, Seq, __ATOMIC_RELEASE);
}

/* ---- ping-pong ------------------------------------------------------- */

static const char *PingNames[] = {"last-word, in place", "first line, trailer, copy"};
enum { PingPatterns = 2 };
static size_t Lines;

/* A frame of Lines lines: the length in the first word, the sequence as the
 * first line's last word (its echo) and as the frame's last (the trailer),
 * stored in order, the two sequence words by release stores. */
static void store_frame(uint8_t *S, uint64_t Seq) {
  uint64_t *W = (uint64_t *)S;
  W[0] = (uint64_t)Lines << 48 | 1;
  for (int I = 1; I < 7; ++I)
    W[I] = Seq + I;
  __atomic_store_n(&W[7], Seq, __ATOMIC_RELEASE);
  for (size_t I = 8; I < Lines * 8 - 1; ++I)
    W[I] = Seq + I;
  __atomic_store_n(&W[Lines * 8 - 1], Seq, __ATOMIC_RELEASE);
}

static void take_frame(uint8_t *S, uint64_t Seq, int P) {
  volatile uint64_t *W = (volatile uint64_t *)S;
  size_t Payload = (Lines - 1) * Line - 8;
  if (P == 0) {
    while (__atomic_load_n(&W[Lines * 8 - 1], __ATOMIC_ACQUIRE) != Seq)
      relax();
    sum((const int32_t *)(S + Line), Payload / 4);
    return;
  }
  while (__atomic_load_n(&W[7], __ATOMIC_ACQUIRE) != Seq)
    relax();
  size_t N = (size_t)(W[0] >> 48);
  while (__atomic_load_n(&W[N * 8 - 1], __ATOMIC_ACQUIRE) != Seq)
    relax();
  memcpy(Private + Line, S + Line, Payload);
  sum((const int32_t *)(Private + Line), Payload / 4);
}

static void *ping_answerer(void *Unused) {
  (void)Unused;
  pin(Cpu[1]);
  for (uint64_t Seq = 1;; ++Seq) {
    int P = Pattern; /* both formats are the same frame: P only says how to wait */
    take_frame(slot(0, Seq), Seq, P);
    if (Stop) {
      __atomic_fetch_add(&ring_copy_total, Total, __ATOMIC_RELAXED);
      return NULL;
    }
    store_frame(slot(1, Seq), Seq);
  }
}

/* ---- driver ---------------------------------------------------------- */

static long Messages = 20000;
static uint64_t NextSeq;

/* One round of pattern P; returns how many units (messages, hops) it timed. */
static long stream_round(int P) {
  for (long M = 0; M < Messages; ++M, ++NextSeq)
    stream_read(NextSeq, P);
  return Messages;
}

static long ping_round(int P) {
  Pattern = P; /* no frame is in flight between rounds */
  long Trips = Messages / 4 + 1;
  for (long M = 0; M < Trips; ++M, ++NextSeq) {
    store_frame(slot(0, NextSeq), NextSeq);
    take_frame(slot(1, NextSeq), NextSeq, P);
  }
  return 2 * Trips;
}

/* Ns[P][R]: pattern P's time per unit in round R; each round starts with
 * the next pattern, so none is always the first after a change. */
static void measure(int Patterns, int Rounds, double Ns[][MaxRounds], long (*Round)(int)) {
  for (int R = 0; R < Rounds; ++R)
    for (int K = 0; K < Patterns; ++K) {
      int P = (R + K) % Patterns;
      uint64_t T0 = now_ns();
      long Units = Round(P);
      Ns[P][R] = (double)(now_ns() - T0) / (double)Units;
    }
}

static int by_value(const void *A, const void *B) {
  double X = *(const double *)A, Y = *(const double *)B;
  return (X > Y) - (X < Y);
}

static double median(double *V, int N) {
  qsort(V, (size_t)N, sizeof *V, by_value);
  return V[N / 2];
}

static void report(const char *Test, size_t Size, const char **Names, int Patterns,
                   double Ns[][MaxRounds], int Rounds, const char *Unit) {
  for (int P = 0; P < Patterns; ++P) {
    double Ratio[MaxRounds], Abs[MaxRounds];
    for (int R = 0; R < Rounds; ++R) {
      Ratio[R] = Ns[P][R] / Ns[0][R];
      Abs[R] = Ns[P][R];
    }
    printf("%-8s %6zu  %-26s %9.1f %s  %5.2f\n", Test, Size, Names[P], median(Abs, Rounds), Unit,
           median(Ratio, Rounds));
  }
}

/* A test: its patterns, the other thread, and one round of a pattern on
 * this one. */
struct Test {
  const char *Name, *Unit;
  const char **Names;
  int Patterns;
  void *(*Other)(void *);
  long (*Round)(int);
};
static const struct Test StreamTest = {"stream", "ns/msg", StreamNames, StreamPatterns,
                                       stream_writer, stream_round};
static const struct Test PingTest = {"pingpong", "ns/hop", PingNames, PingPatterns,
                                     ping_answerer, ping_round};

static int Rounds = 21;
enum { MaxPatterns = StreamPatterns };
_Static_assert((int)MaxPatterns >= (int)PingPatterns, "run_test's table holds every test's patterns");

static void run_test(const struct Test *T, size_t Size) {
  static double Ns[MaxPatterns][MaxRounds];
  Bytes = Size;
  /* A frame's lines: a header line, the payload and an 8-byte trailer. */
  Lines = 1 + (Size + 8 + Line - 1) / Line;
  memset(Ring[0], 0, (size_t)Slots * Stride);
  memset(Ring[1], 0, (size_t)Slots * Stride);
  Handled = 0;
  Stop = 0;
  Pattern = 0;
  NextSeq = 1;
  pthread_t Thread;
  pthread_create(&Thread, NULL, T->Other, NULL);
  measure(T->Patterns, Rounds, Ns, T->Round);
  Stop = 1;
  if (T->Other == ping_answerer)
    store_frame(slot(0, NextSeq), NextSeq); /* wakes it to see Stop */
  pthread_join(Thread, NULL);
  report(T->Name, Size, T->Names, T->Patterns, Ns, Rounds, T->Unit);
}

static int parse_list(const char *S, size_t *Out, int Max) {
  int N = 0;
  while (*S && N < Max) {
    char *End;
    unsigned long V = strtoul(S, &End, 10);
    if (End == S)
      return -1;
    Out[N++] = V;
    S = *End == ',' ? End + 1 : End;
    if (*End && *End != ',')
      return -1;
  }
  return N;
}

static void usage(FILE *F) {
  fprintf(F, "usage: ring-copy [--bytes LIST] [--rounds N] [--messages N] [--cpus A,B]\n"
             "  --bytes LIST   payload sizes, multiples of 64 up to %d (default 1024,2048,4096,8192)\n"
             "  --rounds N     rounds, every pattern once each (default 21, at most %d)\n"
             "  --messages N   messages per pattern and round (default 20000)\n"
             "  --cpus A,B     the reader's and the writer's CPU (default 0,1)\n",
          MaxBytes, MaxRounds);
}

int main(int argc, char **argv) {
  size_t Sizes[16] = {1024, 2048, 4096, 8192}, Pair[2];
  int NSizes = 4;
  for (int I = 1; I < argc; ++I) {
    const char *A = argv[I], *V = I + 1 < argc ? argv[I + 1] : NULL;
    if (!strcmp(A, "--help") || !strcmp(A, "-h")) {
      usage(stdout);
      return 0;
    }
    int Ok = V != NULL;
    if (Ok && !strcmp(A, "--bytes")) {
      NSizes = parse_list(V, Sizes, 16);
      for (int J = 0; J < NSizes; ++J)
        Ok &= Sizes[J] && Sizes[J] % Line == 0 && Sizes[J] <= MaxBytes;
      Ok &= NSizes > 0;
    } else if (Ok && !strcmp(A, "--rounds")) {
      Rounds = atoi(V);
      Ok = Rounds > 0 && Rounds <= MaxRounds;
    } else if (Ok && !strcmp(A, "--messages")) {
      Messages = atol(V);
      Ok = Messages > 0;
    } else if (Ok && !strcmp(A, "--cpus")) {
      Ok = parse_list(V, Pair, 2) == 2;
      Cpu[0] = (int)Pair[0];
      Cpu[1] = (int)Pair[1];
    } else {
      Ok = 0;
    }
    if (!Ok) {
      fprintf(stderr, "ring-copy: bad argument '%s%s%s'\n", A, V ? " " : "", V ? V : "");
      usage(stderr);
      return 2;
    }
    ++I;
  }
  for (int R = 0; R < 2; ++R) {
    Ring[R] = aligned_alloc(4096, (size_t)Slots * Stride);
    if (!Ring[R]) {
      perror("ring-copy");
      return 1;
    }
  }
  pin(Cpu[0]);
  printf("%-8s %6s  %-26s %12s  %5s\n", "test", "bytes", "pattern", "median", "ratio");
  for (int S = 0; S < NSizes; ++S)
    run_test(&StreamTest, Sizes[S]);
  for (int S = 0; S < NSizes; ++S)
    run_test(&PingTest, Sizes[S]);
  ring_copy_total += Total;
  return 0;
}
