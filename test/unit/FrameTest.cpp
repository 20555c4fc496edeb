//===- FrameTest.cpp - Frame encoding, arrival in any order, validation ---===//
#include "wire/Frame.h"

#include <gtest/gtest.h>
#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

using namespace twochains::rt;

namespace {

constexpr size_t SlotSize = 4096;

struct Slot {
  alignas(64) uint8_t Bytes[SlotSize] = {};
};

std::vector<uint8_t> bytes(size_t N, uint8_t Seed) {
  std::vector<uint8_t> V(N);
  for (size_t I = 0; I < N; ++I)
    V[I] = uint8_t(Seed + I * 7);
  return V;
}

/// A Local or cached frame as a direct sender stores it (the ordered mark
/// in its trailer); a cached one names code key 0xfeed.
FrameSpec markedSpec(FrameKind Kind, const void *Payload, uint32_t Size, uint32_t Element,
                     uint64_t Sequence) {
  FrameSpec Spec;
  Spec.Kind = Kind;
  Spec.Package = 0x5eed;
  Spec.Element = Element;
  Spec.Code = Kind == FrameCached ? 0xfeedull : 0;
  Spec.Payload = Payload;
  Spec.PayloadSize = Size;
  Spec.Sequence = Sequence;
  Spec.Ordered = true;
  return Spec;
}

/// Rewrites a frame's header field, then re-seals it with a valid trailer,
/// as a buggy or hostile sender could.
template <typename Fn> void reseal(Slot &S, size_t Size, uint64_t Seq, Fn Change) {
  FrameHeader H;
  std::memcpy(&H, S.Bytes, sizeof H);
  Change(H);
  std::memcpy(S.Bytes, &H, sizeof H);
  FrameTrailer T = {uint32_t(Seq), frameChecksum(S.Bytes, Size - FrameTrailerSize, Seq)};
  std::memcpy(S.Bytes + Size - FrameTrailerSize, &T, sizeof T);
}

TEST(Frame, OneIntegerLocalMessageIsOneLine) {
  Slot S;
  int32_t Value = 0x12345678;
  FrameSpec Spec;
  Spec.Package = 0xabcdef;
  Spec.Element = 3;
  Spec.Payload = &Value;
  Spec.PayloadSize = sizeof Value;
  Spec.Sequence = 7;
  size_t Size = 0;
  ASSERT_EQ(encodeFrame(S.Bytes, SlotSize, Spec, &Size), TC_OK);
  EXPECT_EQ(Size, 64u);
  FrameView View;
  ASSERT_EQ(checkFrame(S.Bytes, SlotSize, 7, &View), TC_OK);
  EXPECT_EQ(View.Size, 64u);
  EXPECT_EQ(View.Header.Kind, FrameLocal);
  EXPECT_EQ(View.Header.Element, 3u);
  EXPECT_EQ(View.Header.Package, 0xabcdefu);
  EXPECT_EQ(View.Image, nullptr);
  int32_t Got;
  std::memcpy(&Got, View.Payload, sizeof Got);
  EXPECT_EQ(Got, Value);
}

// An answer to a call: laid out as a Local frame, with the call's sequence
// where a package would be, so 24 answer bytes are one line.
TEST(Frame, AnswerOfTwentyFourBytesIsOneLine) {
  Slot S;
  std::vector<uint8_t> Answer = bytes(24, 9);
  FrameSpec Spec;
  Spec.Kind = FrameAnswer;
  Spec.Package = 4242; // the call's frame
  Spec.Payload = Answer.data();
  Spec.PayloadSize = 24;
  Spec.Sequence = 11;
  size_t Size = 0;
  ASSERT_EQ(encodeFrame(S.Bytes, SlotSize, Spec, &Size), TC_OK);
  EXPECT_EQ(Size, 64u);
  FrameView View;
  ASSERT_EQ(checkFrame(S.Bytes, SlotSize, 11, &View), TC_OK);
  EXPECT_EQ(View.Header.Kind, FrameAnswer);
  EXPECT_EQ(View.Header.Package, 4242u);
  EXPECT_EQ(std::memcmp(View.Payload, Answer.data(), 24), 0);
  // One byte more takes a second line.
  Answer.push_back(1);
  Spec.PayloadSize = 25;
  Spec.Payload = Answer.data();
  ASSERT_EQ(encodeFrame(S.Bytes, SlotSize, Spec, &Size), TC_OK);
  EXPECT_EQ(Size, 128u);
  ASSERT_EQ(checkFrame(S.Bytes, SlotSize, 11, &View), TC_OK);
  EXPECT_EQ(std::memcmp(View.Payload, Answer.data(), 25), 0);
  // An answer names a call, never an element or code.
  Spec.Element = 1;
  EXPECT_EQ(encodeFrame(S.Bytes, SlotSize, Spec, &Size), TC_ERR_INVALID_PARAM);
  Spec.Element = 0;
  ASSERT_EQ(encodeFrame(S.Bytes, SlotSize, Spec, &Size), TC_OK);
  reseal(S, Size, 11, [](FrameHeader &H) { H.Element = 2; });
  EXPECT_EQ(checkFrame(S.Bytes, SlotSize, 11, nullptr), TC_ERR_UNKNOWN_ELEMENT);
  ASSERT_EQ(encodeFrame(S.Bytes, SlotSize, Spec, &Size), TC_OK);
  reseal(S, Size, 11, [](FrameHeader &H) { H.Code = 5; });
  EXPECT_EQ(checkFrame(S.Bytes, SlotSize, 11, nullptr), TC_ERR_BAD_LENGTH);
}

TEST(Frame, InjectedFrameCarriesImageThenPayload) {
  Slot S;
  std::vector<uint8_t> Image = bytes(128, 1), Payload = bytes(100, 9);
  FrameSpec Spec;
  Spec.Kind = FrameInjected;
  Spec.Image = Image.data();
  Spec.ImageSize = Image.size();
  Spec.Payload = Payload.data();
  Spec.PayloadSize = Payload.size();
  Spec.Sequence = 1;
  size_t Size = 0;
  ASSERT_EQ(encodeFrame(S.Bytes, SlotSize, Spec, &Size), TC_OK);
  EXPECT_EQ(Size, 64u + 128u + 128u);
  EXPECT_EQ(Size % FrameLine, 0u);
  FrameView View;
  ASSERT_EQ(checkFrame(S.Bytes, SlotSize, 1, &View), TC_OK);
  EXPECT_EQ(View.Image, S.Bytes + 64);
  EXPECT_EQ(0, std::memcmp(View.Image, Image.data(), Image.size()));
  EXPECT_EQ(View.Payload, S.Bytes + 64 + 128);
  EXPECT_EQ(0, std::memcmp(View.Payload, Payload.data(), Payload.size()));
}

TEST(Frame, CachedFrameNamesCodeAndIsOneLineForOneInteger) {
  Slot S;
  int32_t Value = 42;
  FrameSpec Spec;
  Spec.Kind = FrameCached;
  Spec.ImageSize = 1472;
  Spec.Code = 0x1122334455667788ull;
  Spec.Payload = &Value;
  Spec.PayloadSize = sizeof Value;
  Spec.Sequence = 5;
  size_t Size = 0;
  ASSERT_EQ(encodeFrame(S.Bytes, SlotSize, Spec, &Size), TC_ERR_INVALID_PARAM)
      << "only injected frames have an image";
  Spec.ImageSize = 0;
  ASSERT_EQ(encodeFrame(S.Bytes, SlotSize, Spec, &Size), TC_OK);
  EXPECT_EQ(Size, 64u);
  FrameView View;
  ASSERT_EQ(checkFrame(S.Bytes, SlotSize, 5, &View), TC_OK);
  EXPECT_EQ(View.Header.Kind, FrameCached);
  EXPECT_EQ(View.Header.Code, 0x1122334455667788ull);
  EXPECT_EQ(View.Image, nullptr);
  int32_t Got;
  std::memcpy(&Got, View.Payload, sizeof Got);
  EXPECT_EQ(Got, Value);
}

TEST(Frame, SizesAreWholeLines) {
  for (uint32_t Payload : {0u, 1u, 8u, 9u, 56u, 57u, 120u, 1000u})
    for (uint32_t Image : {64u, 1408u}) {
      size_t N = frameSize(FrameInjected, Image, Payload);
      EXPECT_EQ(N % FrameLine, 0u);
      EXPECT_GE(N, size_t(Image) + Payload + FrameTrailerSize);
    }
  // One line: 24 bytes of payload for Local and cached frames alike — the
  // paper's Indirect Put of 2 integers (a count and two index/value pairs,
  // 20 bytes) is one line either way.
  EXPECT_EQ(frameSize(FrameLocal, 0, 24), 64u);
  EXPECT_EQ(frameSize(FrameLocal, 0, 25), 128u);
  EXPECT_EQ(frameSize(FrameCached, 0, 24), 64u);
  EXPECT_EQ(frameSize(FrameCached, 0, 25), 128u);
  EXPECT_EQ(frameSize(FrameCached, 1408, 12), 64u) << "a cached frame carries no image";
}

TEST(Frame, OneLinePayloadsTakeThePlaceOfUnusedFields) {
  for (FrameKind Kind : {FrameLocal, FrameCached}) {
    size_t Max = Kind == FrameLocal ? LocalInlinePayload : CachedInlinePayload;
    std::vector<uint8_t> Payload = bytes(Max, 0x41);
    FrameSpec Spec;
    Spec.Kind = Kind;
    Spec.Code = Kind == FrameCached ? 0x0102030405060708ull : 0;
    Spec.Payload = Payload.data();
    Spec.PayloadSize = uint32_t(Max);
    Spec.Sequence = 11;
    Slot S;
    size_t Size;
    ASSERT_EQ(encodeFrame(S.Bytes, SlotSize, Spec, &Size), TC_OK);
    EXPECT_EQ(Size, 64u);
    FrameView View;
    ASSERT_EQ(checkFrame(S.Bytes, SlotSize, 11, &View), TC_OK);
    EXPECT_EQ(0, std::memcmp(View.Payload, Payload.data(), Max));
    EXPECT_EQ(View.Header.Code, Spec.Code) << "a cached frame keeps its code key";
    EXPECT_EQ(View.Header.Sequence, 11u) << "the trailer's sequence";
    EXPECT_EQ(checkFrame(S.Bytes, SlotSize, 11 + 64, nullptr), TC_ERR_INCOMPLETE)
        << "an older frame in the slot";
    EXPECT_EQ(View.Header.ImageSize, 0u) << "covered fields read as zero";
    EXPECT_EQ(View.Header.PayloadOffset, 0u);
    // The same line claiming to be injected: no room for an image.
    // (A cached line's code key, where an injected frame's sequence goes,
    // is not the sequence.)
    reseal(S, 64, 11, [](FrameHeader &H) { H.Kind = FrameInjected; });
    EXPECT_EQ(checkFrame(S.Bytes, SlotSize, 11, nullptr),
              Kind == FrameCached ? TC_ERR_SEQUENCE : TC_ERR_BAD_LENGTH);
  }
}

TEST(Frame, RefusesWhatDoesNotFitOrMakesNoSense) {
  Slot S;
  std::vector<uint8_t> Big = bytes(SlotSize, 0);
  FrameSpec Spec;
  Spec.Payload = Big.data();
  Spec.PayloadSize = SlotSize;
  size_t Size = 123;
  EXPECT_EQ(encodeFrame(S.Bytes, SlotSize, Spec, &Size), TC_ERR_TOO_LARGE);
  EXPECT_EQ(Size, 123u) << "outputs are set only on success";
  FrameSpec Injected;
  Injected.Kind = FrameInjected; // no image
  EXPECT_EQ(encodeFrame(S.Bytes, SlotSize, Injected, &Size), TC_ERR_INVALID_PARAM);
  std::vector<uint8_t> Odd = bytes(100, 0);
  Injected.Image = Odd.data();
  Injected.ImageSize = 100; // not whole lines
  EXPECT_EQ(encodeFrame(S.Bytes, SlotSize, Injected, &Size), TC_ERR_INVALID_PARAM);
  FrameSpec NoPayload;
  NoPayload.PayloadSize = 4; // but no pointer
  EXPECT_EQ(encodeFrame(S.Bytes, SlotSize, NoPayload, &Size), TC_ERR_INVALID_PARAM);
}

// Bytes may land in any order (shared-memory memcpy, TCP emulation): the
// frame must read as incomplete until the last byte is there.
TEST(Frame, CompleteOnlyWhenEveryByteHasLanded) {
  std::vector<uint8_t> Image = bytes(192, 3), Payload = bytes(77, 5);
  FrameSpec Spec;
  Spec.Kind = FrameInjected;
  Spec.Image = Image.data();
  Spec.ImageSize = Image.size();
  Spec.Payload = Payload.data();
  Spec.PayloadSize = Payload.size();
  Spec.Sequence = 42;
  Slot Source;
  size_t Size = 0;
  ASSERT_EQ(encodeFrame(Source.Bytes, SlotSize, Spec, &Size), TC_OK);

  std::mt19937 Rng(1234);
  for (int Round = 0; Round < 50; ++Round) {
    // The slot holds what was there before (here: noise), not zeroes: a
    // chunk of the new frame that equals the old bytes cannot be told
    // apart from one that has landed, and needs not be.
    Slot Target;
    for (uint8_t &B : Target.Bytes)
      B = uint8_t(Rng() | 1);
    std::vector<size_t> Chunks(Size / 8);
    std::iota(Chunks.begin(), Chunks.end(), 0);
    std::shuffle(Chunks.begin(), Chunks.end(), Rng);
    for (size_t I = 0; I < Chunks.size(); ++I) {
      std::memcpy(Target.Bytes + Chunks[I] * 8, Source.Bytes + Chunks[I] * 8, 8);
      tc_status_t St = checkFrame(Target.Bytes, SlotSize, 42, nullptr);
      if (I + 1 < Chunks.size())
        ASSERT_EQ(St, TC_ERR_INCOMPLETE) << "round " << Round << " chunk " << I;
      else
        ASSERT_EQ(St, TC_OK);
    }
  }
}

TEST(Frame, OlderFrameInTheSlotIsNotTheExpectedOne) {
  Slot S;
  int32_t V = 1;
  FrameSpec Spec;
  Spec.Payload = &V;
  Spec.PayloadSize = 4;
  Spec.Sequence = 5;
  size_t Size;
  ASSERT_EQ(encodeFrame(S.Bytes, SlotSize, Spec, &Size), TC_OK);
  EXPECT_EQ(checkFrame(S.Bytes, SlotSize, 5 + 16, nullptr), TC_ERR_INCOMPLETE);
}

TEST(Frame, CorruptionIsNeverComplete) {
  Slot S;
  std::vector<uint8_t> Payload = bytes(300, 11);
  FrameSpec Spec;
  Spec.Payload = Payload.data();
  Spec.PayloadSize = Payload.size();
  Spec.Sequence = 9;
  size_t Size;
  ASSERT_EQ(encodeFrame(S.Bytes, SlotSize, Spec, &Size), TC_OK);
  for (size_t I = 0; I < Size - FrameTrailerSize; I += 13) {
    Slot C = S;
    C.Bytes[I] ^= 0x20;
    EXPECT_EQ(checkFrame(C.Bytes, SlotSize, 9, nullptr), TC_ERR_INCOMPLETE)
        << "flipped byte " << I;
  }
}

TEST(Frame, ValidatesEveryFieldOfACompleteFrame) {
  std::vector<uint8_t> Image = bytes(64, 2), Payload = bytes(40, 4);
  FrameSpec Spec;
  Spec.Kind = FrameInjected;
  Spec.Image = Image.data();
  Spec.ImageSize = 64;
  Spec.Payload = Payload.data();
  Spec.PayloadSize = 40;
  Spec.Sequence = 3;
  Slot Good;
  size_t Size;
  ASSERT_EQ(encodeFrame(Good.Bytes, SlotSize, Spec, &Size), TC_OK);

  struct Case {
    const char *What;
    void (*Change)(FrameHeader &);
    tc_status_t Expect;
  } Cases[] = {
      {"magic", [](FrameHeader &H) { H.Magic ^= 1; }, TC_ERR_BAD_MAGIC},
      {"version", [](FrameHeader &H) { H.Version = 9; }, TC_ERR_BAD_VERSION},
      {"kind", [](FrameHeader &H) { H.Kind = 7; }, TC_ERR_BAD_KIND},
      {"kind past bundle", [](FrameHeader &H) { H.Kind = FrameBundle + 1; }, TC_ERR_BAD_KIND},
      {"answer with an image", [](FrameHeader &H) { H.Kind = FrameAnswer; }, TC_ERR_BAD_LENGTH},
      {"sequence", [](FrameHeader &H) { H.Sequence += 64; }, TC_ERR_SEQUENCE},
      {"payload past the trailer", [](FrameHeader &H) { H.PayloadSize = 4000; }, TC_ERR_BAD_LENGTH},
      {"payload over the header", [](FrameHeader &H) { H.PayloadOffset = 8; }, TC_ERR_BAD_LENGTH},
      {"image over the payload", [](FrameHeader &H) { H.ImageSize = 128; }, TC_ERR_BAD_LENGTH},
      {"image not whole lines", [](FrameHeader &H) { H.ImageSize = 40; }, TC_ERR_BAD_LENGTH},
      {"payload inside the header line", [](FrameHeader &H) { H.PayloadOffset = 48; },
       TC_ERR_BAD_LENGTH},
      {"local frame with an image", [](FrameHeader &H) { H.Kind = FrameLocal; }, TC_ERR_BAD_LENGTH},
      {"local frame naming code",
       [](FrameHeader &H) {
         H.Kind = FrameLocal;
         H.ImageSize = 0;
         H.Code = 1;
       },
       TC_ERR_BAD_LENGTH},
      {"cached frame carrying an image", [](FrameHeader &H) { H.Kind = FrameCached; },
       TC_ERR_BAD_LENGTH},
  };
  for (const Case &C : Cases) {
    Slot S = Good;
    reseal(S, Size, 3, C.Change);
    EXPECT_EQ(checkFrame(S.Bytes, SlotSize, 3, nullptr), C.Expect) << C.What;
  }
  // A header claiming more lines than the slot has never completes (the
  // executor gives it up as incomplete): it cannot be told from a header
  // whose bytes are still landing.
  Slot S = Good;
  FrameHeader H;
  std::memcpy(&H, S.Bytes, sizeof H);
  H.Lines = SlotSize / FrameLine + 1;
  std::memcpy(S.Bytes, &H, sizeof H);
  EXPECT_EQ(checkFrame(S.Bytes, SlotSize, 3, nullptr), TC_ERR_INCOMPLETE);
}

/// A frame whose payload went ahead: one flag in the header's last field,
/// which a longer frame otherwise leaves zero, and a PayloadAhead in the
/// slot. Any other bit there, the flag beside another payload, or on an
/// answer, is malformed, on the copying path and on the direct one alike;
/// and the flag never makes a one-line frame.
TEST(Frame, PayloadAheadIsOneFlagAndWhatNamesIt) {
  PayloadAhead Named = {PayloadAheadMagic, 100000, 3, {0, 0}};
  FrameSpec Spec = markedSpec(FrameLocal, &Named, sizeof Named, 2, 3);
  Spec.Flags = FramePayloadAhead;
  Slot Good;
  size_t Size;
  ASSERT_EQ(encodeFrame(Good.Bytes, SlotSize, Spec, &Size), TC_OK);
  EXPECT_EQ(Size, 2 * FrameLine);
  FrameView V;
  ASSERT_EQ(checkFrame(Good.Bytes, SlotSize, 3, &V), TC_OK);
  EXPECT_EQ(V.Header.Inline[0], FramePayloadAhead);
  EXPECT_EQ(V.Header.PayloadSize, sizeof Named);
  Slot Private;
  ASSERT_TRUE(captureMarkedFrame(Good.Bytes, SlotSize, 3, Private.Bytes, &V));
  EXPECT_EQ(V.Header.Inline[0], FramePayloadAhead);

  struct Case {
    const char *What;
    void (*Change)(FrameHeader &);
    tc_status_t Expect;
  } Cases[] = {
      {"another flag", [](FrameHeader &H) { H.Inline[0] = 2; }, TC_ERR_BAD_KIND},
      {"a byte past the flag", [](FrameHeader &H) { H.Inline[7] = 1; }, TC_ERR_BAD_KIND},
      {"the flag beside a shorter payload", [](FrameHeader &H) { H.PayloadSize = 24; },
       TC_ERR_BAD_LENGTH},
      {"the flag on an answer", [](FrameHeader &H) { H.Kind = FrameAnswer; H.Element = 0; },
       TC_ERR_BAD_LENGTH},
  };
  for (const Case &C : Cases) {
    Slot S = Good;
    reseal(S, Size, 3, C.Change);
    EXPECT_EQ(checkFrame(S.Bytes, SlotSize, 3, nullptr), C.Expect) << C.What;
    // The direct path takes none of them; captureFrame tells why.
    Slot Marked = Good;
    FrameHeader H;
    std::memcpy(&H, Marked.Bytes, sizeof H);
    C.Change(H);
    std::memcpy(Marked.Bytes, &H, sizeof H);
    EXPECT_FALSE(captureMarkedFrame(Marked.Bytes, SlotSize, 3, Private.Bytes, &V)) << C.What;
  }

  Spec.PayloadSize = 24; // a flag with what would be a one-line payload
  EXPECT_EQ(encodeFrame(Good.Bytes, SlotSize, Spec, &Size), TC_ERR_INVALID_PARAM);
  Spec.PayloadSize = sizeof Named;
  Spec.Flags = 2;
  EXPECT_EQ(encodeFrame(Good.Bytes, SlotSize, Spec, &Size), TC_ERR_INVALID_PARAM);
}

// A header lands in pieces: magic and sequence may be there before the
// length. That is a frame on its way, never a bad one (tc-perf saw frames
// dropped as "length outside the slot" while they landed).
TEST(Frame, HeaderLandingInPiecesIsIncompleteNotBad) {
  int32_t Value = 5;
  FrameSpec Spec;
  Spec.Payload = &Value;
  Spec.PayloadSize = sizeof Value;
  Spec.Sequence = 3;
  Slot Whole, S;
  size_t Size;
  ASSERT_EQ(encodeFrame(Whole.Bytes, SlotSize, Spec, &Size), TC_OK);
  // Everything but the 2 bytes of the length (they are still 0).
  std::memcpy(S.Bytes, Whole.Bytes, Size);
  std::memset(S.Bytes + offsetof(FrameHeader, Lines), 0, 2);
  EXPECT_EQ(checkFrame(S.Bytes, SlotSize, 3, nullptr), TC_ERR_INCOMPLETE);
  // The length arrives: complete.
  std::memcpy(S.Bytes + offsetof(FrameHeader, Lines), Whole.Bytes + offsetof(FrameHeader, Lines), 2);
  EXPECT_EQ(checkFrame(S.Bytes, SlotSize, 3, nullptr), TC_OK);
}

TEST(Frame, ChecksumSeesEveryWordAndTheSequence) {
  std::vector<uint8_t> A = bytes(256, 1);
  uint32_t Base = frameChecksum(A.data(), A.size(), 1);
  EXPECT_NE(Base, frameChecksum(A.data(), A.size(), 2));
  for (size_t I = 0; I < A.size(); ++I) {
    std::vector<uint8_t> B = A;
    B[I] ^= 1;
    EXPECT_NE(Base, frameChecksum(B.data(), B.size(), 1)) << "byte " << I;
  }
  // Words in another order: a landing that mixes frames must not pass.
  for (size_t I = 0; I + 8 < A.size(); I += 8) {
    std::vector<uint8_t> B = A;
    std::swap_ranges(B.begin() + I, B.begin() + I + 8, B.begin() + I + 8);
    EXPECT_NE(Base, frameChecksum(B.data(), B.size(), 1)) << "words at " << I;
  }
}

} // namespace

// A writer thread puts frames into a small ring while a reader polls it, as
// a sender's puts and the executor race over shared memory: the reader
// must see each frame exactly once, whole, in order, and never a spurious
// error from reading a slot while it is being rewritten.
#include "wire/Ring.h"
#include <atomic>
#include <thread>

TEST(Frame, ConcurrentWriterAndReader) {
  constexpr uint32_t Slots = 4;
  constexpr size_t Size = 512;
  constexpr uint64_t Total = 20000;
  alignas(64) static uint8_t RingBytes[Slots][Size];
  std::memset(RingBytes, 0, sizeof RingBytes);
  std::atomic<uint64_t> Finished{0};
  std::atomic<bool> Stop{false};

  std::thread Writer([&] {
    SenderRing Ring(Slots);
    std::vector<uint8_t> Staging(Size);
    for (uint64_t I = 0; I < Total && !Stop;) {
      Ring.credit(Finished.load(std::memory_order_acquire));
      uint64_t Seq;
      uint32_t Slot;
      if (Ring.reserve(&Seq, &Slot) != TC_OK)
        continue;
      uint64_t Payload[20];
      for (int K = 0; K < 20; ++K)
        Payload[K] = Seq * 100 + K;
      FrameSpec Spec;
      Spec.Payload = Payload;
      Spec.PayloadSize = uint32_t((Seq % 20 + 1) * 8); // frames of varying length
      Spec.Sequence = Seq;
      size_t N = 0;
      if (encodeFrame(Staging.data(), Size, Spec, &N) != TC_OK)
        break;
      // Copy in 8-byte pieces, back to front, so the trailer lands first.
      for (size_t Off = N; Off > 0; Off -= 8)
        __atomic_store_n(reinterpret_cast<uint64_t *>(&RingBytes[Slot][Off - 8]),
                         *reinterpret_cast<uint64_t *>(&Staging[Off - 8]), __ATOMIC_RELAXED);
      ++I;
    }
  });

  ReceiverRing Ring(Slots, 2);
  uint64_t Seen = 0;
  std::string Problem;
  while (Seen < Total) {
    FrameView V;
    tc_status_t St = checkFrame(RingBytes[Ring.expectedSlot()], Size, Ring.expected(), &V);
    if (St == TC_ERR_INCOMPLETE)
      continue;
    uint64_t First = 0;
    if (St == TC_OK)
      std::memcpy(&First, V.Payload, 8);
    if (St != TC_OK || V.Header.Sequence != Seen || First != Seen * 100) {
      Problem = "frame " + std::to_string(Seen) + ": " + tc_status_string(St);
      break;
    }
    ++Seen;
    if (Ring.finish())
      Finished.store(Ring.takeCreditReport(), std::memory_order_release);
    else if (Ring.creditPending())
      Finished.store(Ring.takeCreditReport(), std::memory_order_release);
  }
  Stop = true;
  Writer.join();
  EXPECT_EQ(Problem, "");
  EXPECT_EQ(Seen, Total);
}

// Ordered placement trusts the trailer: a frame whose bytes are all there
// passes without the checksum, and fields are still checked.
TEST(Frame, OrderedPlacementSkipsOnlyTheChecksum) {
  alignas(64) uint8_t S[4096] = {};
  int32_t V = 7;
  FrameSpec Spec;
  Spec.Payload = &V;
  Spec.PayloadSize = 4;
  Spec.Sequence = 2;
  size_t Size;
  ASSERT_EQ(encodeFrame(S, sizeof S, Spec, &Size), TC_OK);
  S[50] ^= 1; // the checksum no longer matches
  EXPECT_EQ(checkFrame(S, sizeof S, 2, nullptr, Completion::Marked), TC_ERR_INCOMPLETE);
  EXPECT_EQ(checkFrame(S, sizeof S, 2, nullptr, Completion::Ordered), TC_OK);
  S[0] ^= 1; // bad magic: still refused
  EXPECT_EQ(checkFrame(S, sizeof S, 2, nullptr, Completion::Ordered), TC_ERR_BAD_MAGIC);
  EXPECT_EQ(checkFrame(S, sizeof S, 3, nullptr, Completion::Ordered), TC_ERR_INCOMPLETE);
}

// A frame stored directly (Spec.Ordered) carries the ordered mark, not a
// checksum: accepted on the mark alone, unless a checksum is demanded (a
// resend lands over it), and its fields are checked all the same.
TEST(Frame, OrderedMarkStandsInForTheChecksum) {
  for (uint32_t PayloadSize : {4u, 200u}) {
    alignas(64) uint8_t S[4096] = {};
    std::vector<uint8_t> P = bytes(PayloadSize, 3);
    FrameSpec Spec;
    Spec.Payload = P.data();
    Spec.PayloadSize = PayloadSize;
    Spec.Sequence = 77;
    Spec.Ordered = true;
    size_t Size;
    ASSERT_EQ(encodeFrame(S, sizeof S, Spec, &Size), TC_OK);
    FrameTrailer T;
    std::memcpy(&T, S + Size - FrameTrailerSize, sizeof T);
    EXPECT_EQ(T.Sequence, 77u);
    EXPECT_EQ(T.Checksum, orderedMark(77));
    FrameView V;
    ASSERT_EQ(checkFrame(S, sizeof S, 77, &V), TC_OK) << PayloadSize;
    EXPECT_EQ(std::memcmp(V.Payload, P.data(), PayloadSize), 0);
    EXPECT_EQ(checkFrame(S, sizeof S, 77, nullptr, Completion::Checksum), TC_ERR_INCOMPLETE);
    alignas(64) uint8_t Copy[4096];
    EXPECT_EQ(captureFrame(S, sizeof S, 77, Copy, &V), TC_OK);
    EXPECT_EQ(captureFrame(S, sizeof S, 77, Copy, &V, Completion::Checksum), TC_ERR_INCOMPLETE);
    // The mark is of this sequence only.
    EXPECT_EQ(checkFrame(S, sizeof S, 77 + 64, nullptr), TC_ERR_INCOMPLETE);
    S[1] ^= 1;
    EXPECT_EQ(checkFrame(S, sizeof S, 77, nullptr), TC_ERR_BAD_MAGIC);
  }
}

// A frame put with its checksum must never pass for one stored in order
// (whose trailer alone proves it whole): a checksum that would equal the
// sequence's mark is changed, on both sides. The word and sequence below
// are such a collision, found by search.
TEST(Frame, AChecksumNeverPassesForTheMark) {
  uint64_t Word = 0x2fa34db8;
  EXPECT_NE(frameChecksum(&Word, sizeof Word, 7), orderedMark(7));
  EXPECT_NE(frameChecksum(&Word, sizeof Word, 8), frameChecksum(&Word, sizeof Word, 7));
}

// A longer frame's first line ends with its sequence (the idle receiver's
// one load). If the other half of that word could equal the mark (it was
// zero, and one sequence in 2^32 has a zero mark), a first line landing
// over an older one-line frame would read as that older frame, complete:
// on a machine that reorders stores, the echo may land before the header.
TEST(Frame, AFirstLineNeverPassesForAOneLineFrame) {
  constexpr uint64_t ZeroMark = 0xb442a4c9; // orderedMark(ZeroMark) == 0
  static_assert(orderedMark(ZeroMark) == 0, "the sequence whose mark is zero");
  constexpr uint64_t Slots = 4;
  Slot S, Longer, Private;
  uint32_t Old[2] = {1, 2};
  FrameSpec Spec;
  Spec.Kind = FrameCached;
  Spec.Code = 0xc0de;
  Spec.Payload = Old;
  Spec.PayloadSize = sizeof Old;
  Spec.Sequence = ZeroMark - Slots;
  Spec.Ordered = true;
  size_t Size;
  ASSERT_EQ(encodeFrame(S.Bytes, SlotSize, Spec, &Size), TC_OK);
  ASSERT_EQ(Size, FrameLine);
  std::vector<uint8_t> P = bytes(200, 5);
  Spec.Kind = FrameLocal;
  Spec.Code = 0;
  Spec.Payload = P.data();
  Spec.PayloadSize = uint32_t(P.size());
  Spec.Sequence = ZeroMark;
  ASSERT_EQ(encodeFrame(Longer.Bytes, SlotSize, Spec, &Size), TC_OK);
  ASSERT_GT(Size, FrameLine);
  // Only the new first line's last word has landed.
  std::memcpy(S.Bytes + sizeof(FrameHeader), Longer.Bytes + sizeof(FrameHeader), 8);
  EXPECT_TRUE(frameMayHaveArrived(S.Bytes, ZeroMark));
  FrameView V;
  EXPECT_FALSE(captureMarkedLine(S.Bytes, ZeroMark, Private.Bytes, &V));
  EXPECT_EQ(captureFrame(S.Bytes, SlotSize, ZeroMark, Private.Bytes, &V), TC_ERR_INCOMPLETE);
  std::memcpy(S.Bytes, Longer.Bytes, Size);
  EXPECT_EQ(captureFrame(S.Bytes, SlotSize, ZeroMark, Private.Bytes, &V), TC_OK);
  EXPECT_EQ(V.Header.PayloadSize, P.size());
}

// Where the trailer will go, an older frame's payload may hold the
// expected sequence by chance: with a checksum or any other word beside
// it, the frame still counts as landing.
TEST(Frame, StaleWordWithTheSequenceIsNotAMark) {
  alignas(64) uint8_t S[4096] = {};
  std::vector<uint8_t> P = bytes(100, 9);
  FrameSpec Spec;
  Spec.Payload = P.data();
  Spec.PayloadSize = 100;
  Spec.Sequence = 5;
  Spec.Ordered = true;
  size_t Size;
  ASSERT_EQ(encodeFrame(S, sizeof S, Spec, &Size), TC_OK);
  FrameTrailer Stale = {5, 0x12345678};
  std::memcpy(S + Size - FrameTrailerSize, &Stale, sizeof Stale);
  EXPECT_EQ(checkFrame(S, sizeof S, 5, nullptr), TC_ERR_INCOMPLETE);
  EXPECT_NE(orderedMark(5), orderedMark(6));
  EXPECT_NE(orderedMark(5), orderedMark(5 + (1ull << 32)) ^ 1);
}

namespace {

/// What the receiver does: the frame is captured into a private copy, and
/// everything that is checked and run is read from the copy.
TEST(FrameCapture, ViewPointsIntoThePrivateCopyNotTheSlot) {
  Slot S, Private;
  std::vector<uint8_t> Payload = bytes(300, 9);
  FrameSpec Spec;
  Spec.Kind = FrameLocal;
  Spec.Package = 7;
  Spec.Element = 3;
  Spec.Payload = Payload.data();
  Spec.PayloadSize = uint32_t(Payload.size());
  Spec.Sequence = 41;
  size_t Size = 0;
  ASSERT_EQ(encodeFrame(S.Bytes, SlotSize, Spec, &Size), TC_OK);
  FrameView V;
  ASSERT_EQ(captureFrame(S.Bytes, SlotSize, 41, Private.Bytes, &V), TC_OK);
  EXPECT_GE(V.Payload, Private.Bytes);
  EXPECT_LT(V.Payload, Private.Bytes + SlotSize);
  // The peer rewrites its slot, header and payload, and seals it again.
  std::memset(S.Bytes + V.Header.PayloadOffset, 0xee, Payload.size());
  reseal(S, Size, 41, [](FrameHeader &H) { H.PayloadSize = 4000; });
  EXPECT_EQ(V.Header.PayloadSize, Payload.size());
  EXPECT_EQ(std::memcmp(V.Payload, Payload.data(), Payload.size()), 0);
}

TEST(FrameCapture, OneLineFramesToo) {
  Slot S, Private;
  uint32_t Value[2] = {12, 34};
  FrameSpec Spec;
  Spec.Kind = FrameLocal;
  Spec.Payload = Value;
  Spec.PayloadSize = sizeof Value;
  Spec.Sequence = 5;
  size_t Size = 0;
  ASSERT_EQ(encodeFrame(S.Bytes, SlotSize, Spec, &Size), TC_OK);
  ASSERT_EQ(Size, FrameLine);
  FrameView V;
  ASSERT_EQ(captureFrame(S.Bytes, SlotSize, 5, Private.Bytes, &V), TC_OK);
  S.Bytes[LocalInlineOffset] ^= 0xff;
  uint32_t Seen[2];
  std::memcpy(Seen, V.Payload, sizeof Seen);
  EXPECT_EQ(Seen[0], 12u);
  EXPECT_EQ(Seen[1], 34u);
}

/// A one-line frame carries every payload size up to 24 bytes exactly:
/// its bytes, then zeros.
TEST(FrameCapture, OneLinePayloadsOfEverySize) {
  for (uint32_t N = 0; N <= LocalInlinePayload; ++N) {
    Slot S, Private;
    std::memset(S.Bytes, 0xaa, FrameLine);
    std::vector<uint8_t> P = bytes(N + 1, uint8_t(N)); // one more byte, never sent
    FrameSpec Spec;
    Spec.Payload = P.data();
    Spec.PayloadSize = N;
    Spec.Sequence = 3;
    Spec.Ordered = true;
    size_t Size = 0;
    ASSERT_EQ(encodeFrame(S.Bytes, SlotSize, Spec, &Size), TC_OK);
    ASSERT_EQ(Size, FrameLine);
    for (size_t I = 0; I < LocalInlinePayload; ++I)
      ASSERT_EQ(S.Bytes[LocalInlineOffset + I], I < N ? P[I] : 0) << N << " bytes, byte " << I;
    FrameView V;
    ASSERT_TRUE(captureMarkedLine(S.Bytes, 3, Private.Bytes, &V)) << N;
    EXPECT_EQ(V.Header.PayloadSize, N);
    EXPECT_EQ(std::memcmp(V.Payload, P.data(), N), 0) << N;
  }
}

/// A corked sender's message: frames back to back, each as long as its
/// header says; anything that does not add up is refused whole.
TEST(FrameBatch, SplitsOnlyWhatAddsUp) {
  std::vector<uint8_t> M;
  std::vector<uint8_t> P = bytes(200, 1);
  for (uint32_t PayloadSize : {8u, 200u, 24u}) {
    Slot S;
    FrameSpec Spec;
    Spec.Payload = P.data();
    Spec.PayloadSize = PayloadSize;
    Spec.Sequence = M.size();
    size_t Size;
    ASSERT_EQ(encodeFrame(S.Bytes, SlotSize, Spec, &Size), TC_OK);
    M.insert(M.end(), S.Bytes, S.Bytes + Size);
  }
  uint32_t L[4];
  ASSERT_TRUE(splitFrameBatch(M.data(), M.size(), 3, SlotSize, L));
  EXPECT_EQ(L[0], 64u);
  EXPECT_EQ(L[1], 320u);
  EXPECT_EQ(L[2], 64u);
  EXPECT_FALSE(splitFrameBatch(M.data(), M.size(), 2, SlotSize, L)); // bytes left over
  EXPECT_FALSE(splitFrameBatch(M.data(), M.size(), 4, SlotSize, L)); // too few bytes
  EXPECT_FALSE(splitFrameBatch(M.data(), M.size(), 3, 256, L));      // longer than a slot
  EXPECT_FALSE(splitFrameBatch(M.data(), M.size() - 64, 3, SlotSize, L)); // cut short
  uint16_t Zero = 0;
  std::memcpy(M.data() + 64 + offsetof(FrameHeader, Lines), &Zero, sizeof Zero);
  EXPECT_FALSE(splitFrameBatch(M.data(), M.size(), 3, SlotSize, L)); // a frame of no lines
  uint16_t Huge = 0xffff;
  std::memcpy(M.data() + 64 + offsetof(FrameHeader, Lines), &Huge, sizeof Huge);
  EXPECT_FALSE(splitFrameBatch(M.data(), M.size(), 3, SIZE_MAX, L)); // past the message
}

/// The executor's inline capture of a one-line frame stored in order takes
/// what captureFrame takes, reads it the same, and leaves everything else
/// to captureFrame.
TEST(FrameCapture, TheInlineLinePathAgreesWithCaptureFrame) {
  for (FrameKind Kind : {FrameLocal, FrameCached}) {
    Slot S, Private, Line;
    uint32_t Value[3] = {12, 34, 56};
    FrameSpec Spec = markedSpec(Kind, Value, sizeof Value, 4, 9);
    size_t Size = 0;
    ASSERT_EQ(encodeFrame(S.Bytes, SlotSize, Spec, &Size), TC_OK);
    FrameView V, L;
    ASSERT_EQ(captureFrame(S.Bytes, SlotSize, 9, Private.Bytes, &V), TC_OK);
    ASSERT_TRUE(captureMarkedLine(S.Bytes, 9, Line.Bytes, &L));
    EXPECT_EQ(std::memcmp(&L.Header, &V.Header, sizeof L.Header), 0);
    EXPECT_EQ(L.Size, V.Size);
    EXPECT_EQ(L.Payload, Line.Bytes + LocalInlineOffset);
    EXPECT_EQ(std::memcmp(L.Payload, Value, sizeof Value), 0);
    EXPECT_EQ(L.Header.Code, Spec.Code);
    // What the jam reads is the copy, not the slot.
    S.Bytes[LocalInlineOffset] ^= 0xff;
    EXPECT_EQ(L.Payload[0], 12);
    S.Bytes[LocalInlineOffset] ^= 0xff;
    // Another sequence, a frame put with its checksum, a bad field: not
    // for the inline path (captureFrame decides).
    EXPECT_FALSE(captureMarkedLine(S.Bytes, 9 + 64, Line.Bytes, &L));
    Spec.Ordered = false;
    ASSERT_EQ(encodeFrame(S.Bytes, SlotSize, Spec, &Size), TC_OK);
    EXPECT_FALSE(captureMarkedLine(S.Bytes, 9, Line.Bytes, &L));
    EXPECT_EQ(captureFrame(S.Bytes, SlotSize, 9, Private.Bytes, &V), TC_OK);
    Spec.Ordered = true;
    ASSERT_EQ(encodeFrame(S.Bytes, SlotSize, Spec, &Size), TC_OK);
    uint32_t Huge = 25;
    std::memcpy(S.Bytes + offsetof(FrameHeader, PayloadSize), &Huge, sizeof Huge);
    EXPECT_FALSE(captureMarkedLine(S.Bytes, 9, Line.Bytes, &L));
    EXPECT_EQ(captureFrame(S.Bytes, SlotSize, 9, Private.Bytes, &V), TC_ERR_BAD_LENGTH);
    if (Kind == FrameLocal) {
      Huge = sizeof Value;
      std::memcpy(S.Bytes + offsetof(FrameHeader, PayloadSize), &Huge, sizeof Huge);
      uint64_t Other = 10;
      std::memcpy(S.Bytes + offsetof(FrameHeader, Sequence), &Other, sizeof Other);
      EXPECT_FALSE(captureMarkedLine(S.Bytes, 9, Line.Bytes, &L));
      EXPECT_EQ(captureFrame(S.Bytes, SlotSize, 9, Private.Bytes, &V), TC_ERR_SEQUENCE);
    }
  }
}

/// A direct sender's frames of more than a line are stored by
/// storeMarkedFrame, not encodeFrame: the same bytes, every size.
TEST(FrameCapture, StoreMarkedFrameStoresWhatEncodeFrameDoes) {
  for (FrameKind Kind : {FrameLocal, FrameCached})
    for (uint32_t Size : {25u, 36u, 55u, 56u, 57u, 100u, 120u, 121u, 1000u, 4024u}) {
      Slot Encoded, Stored;
      std::memset(Stored.Bytes, 0xa5, SlotSize); // what an older frame left
      std::memset(Encoded.Bytes, 0xa5, SlotSize);
      std::vector<uint8_t> Payload = bytes(Size, uint8_t(Size));
      FrameSpec Spec = markedSpec(Kind, Payload.data(), Size, 3, 70);
      size_t N = 0;
      ASSERT_EQ(encodeFrame(Encoded.Bytes, SlotSize, Spec, &N), TC_OK) << Size;
      EXPECT_EQ(storeMarkedFrame(Stored.Bytes, Kind, 0x5eed, Spec.Code, 3, Payload.data(), Size,
                                 70),
                N);
      EXPECT_EQ(std::memcmp(Encoded.Bytes, Stored.Bytes, SlotSize), 0) << Size;
    }
}

/// The receiver's path for such frames accepts what captureFrame accepts,
/// reads it the same, copies the payload, and leaves anything else to
/// captureFrame.
TEST(FrameCapture, TheInlineFramePathAgreesWithCaptureFrame) {
  for (FrameKind Kind : {FrameLocal, FrameCached}) {
    Slot S, Private, Fast;
    std::vector<uint8_t> Payload = bytes(100, 7);
    FrameSpec Spec = markedSpec(Kind, Payload.data(), uint32_t(Payload.size()), 4, 9);
    size_t Size = 0;
    ASSERT_EQ(encodeFrame(S.Bytes, SlotSize, Spec, &Size), TC_OK);
    FrameView V, F;
    ASSERT_EQ(captureFrame(S.Bytes, SlotSize, 9, Private.Bytes, &V), TC_OK);
    ASSERT_TRUE(captureMarkedFrame(S.Bytes, SlotSize, 9, Fast.Bytes, &F));
    EXPECT_EQ(std::memcmp(&F.Header, &V.Header, sizeof F.Header), 0);
    EXPECT_EQ(F.Size, V.Size);
    EXPECT_EQ(F.Image, nullptr);
    EXPECT_EQ(F.Payload, Fast.Bytes + (V.Payload - Private.Bytes));
    EXPECT_EQ(std::memcmp(F.Payload, Payload.data(), Payload.size()), 0);
    // What the jam reads is the copy, not the slot.
    S.Bytes[FrameLine] ^= 0xff;
    EXPECT_EQ(F.Payload[0], Payload[0]);
    S.Bytes[FrameLine] ^= 0xff;
    // Another sequence, a frame put with its checksum, a one-line frame:
    // not for this path.
    EXPECT_FALSE(captureMarkedFrame(S.Bytes, SlotSize, 9 + 64, Fast.Bytes, &F));
    Spec.Ordered = false;
    ASSERT_EQ(encodeFrame(S.Bytes, SlotSize, Spec, &Size), TC_OK);
    EXPECT_FALSE(captureMarkedFrame(S.Bytes, SlotSize, 9, Fast.Bytes, &F));
    EXPECT_EQ(captureFrame(S.Bytes, SlotSize, 9, Private.Bytes, &V), TC_OK);
    Spec.Ordered = true;
    Spec.PayloadSize = 8;
    ASSERT_EQ(encodeFrame(S.Bytes, SlotSize, Spec, &Size), TC_OK);
    EXPECT_FALSE(captureMarkedFrame(S.Bytes, SlotSize, 9, Fast.Bytes, &F));
    Spec.PayloadSize = uint32_t(Payload.size());
    // Fields that captureFrame refuses, each: refused here too, the
    // trailer still showing the frame whole.
    struct Change {
      size_t Offset;
      uint64_t Value;
      size_t Bytes;
      tc_status_t Refused;
    };
    const Change Changes[] = {
        {offsetof(FrameHeader, PayloadSize), 200, 4, TC_ERR_BAD_LENGTH},
        {offsetof(FrameHeader, PayloadOffset), 32, 4, TC_ERR_BAD_LENGTH},
        {offsetof(FrameHeader, ImageSize), 64, 4, TC_ERR_BAD_LENGTH},
        {offsetof(FrameHeader, Sequence), 10, 8, TC_ERR_SEQUENCE},
        {offsetof(FrameHeader, Version), 9, 1, TC_ERR_BAD_VERSION},
        {offsetof(FrameHeader, Magic), 0x1234, 4, TC_ERR_BAD_MAGIC},
    };
    for (const Change &C : Changes) {
      ASSERT_EQ(encodeFrame(S.Bytes, SlotSize, Spec, &Size), TC_OK);
      std::memcpy(S.Bytes + C.Offset, &C.Value, C.Bytes);
      EXPECT_FALSE(captureMarkedFrame(S.Bytes, SlotSize, 9, Fast.Bytes, &F)) << C.Offset;
      EXPECT_EQ(captureFrame(S.Bytes, SlotSize, 9, Private.Bytes, &V), C.Refused) << C.Offset;
    }
    if (Kind == FrameLocal) {
      ASSERT_EQ(encodeFrame(S.Bytes, SlotSize, Spec, &Size), TC_OK);
      uint64_t Code = 1;
      std::memcpy(S.Bytes + offsetof(FrameHeader, Code), &Code, sizeof Code);
      EXPECT_FALSE(captureMarkedFrame(S.Bytes, SlotSize, 9, Fast.Bytes, &F));
      EXPECT_EQ(captureFrame(S.Bytes, SlotSize, 9, Private.Bytes, &V), TC_ERR_BAD_LENGTH);
    }
    // A length past the slot.
    ASSERT_EQ(encodeFrame(S.Bytes, SlotSize, Spec, &Size), TC_OK);
    EXPECT_FALSE(captureMarkedFrame(S.Bytes, Size - FrameLine, 9, Fast.Bytes, &F));
  }
}

/// A frame whose bytes change while it is copied (a peer rewriting it, or
/// bytes still landing) does not pass: the checksum is over the copy.
TEST(FrameCapture, ACopyThatDoesNotMatchItsTrailerIsIncomplete) {
  Slot S, Private;
  std::vector<uint8_t> Payload = bytes(200, 1);
  FrameSpec Spec;
  Spec.Kind = FrameLocal;
  Spec.Payload = Payload.data();
  Spec.PayloadSize = uint32_t(Payload.size());
  Spec.Sequence = 2;
  size_t Size = 0;
  ASSERT_EQ(encodeFrame(S.Bytes, SlotSize, Spec, &Size), TC_OK);
  S.Bytes[100] ^= 1; // changed after sealing
  FrameView V;
  EXPECT_EQ(captureFrame(S.Bytes, SlotSize, 2, Private.Bytes, &V), TC_ERR_INCOMPLETE);
  S.Bytes[100] ^= 1;
  EXPECT_EQ(captureFrame(S.Bytes, SlotSize, 2, Private.Bytes, &V), TC_OK);
  // The same validation as checkFrame: a resealed bad field is still bad.
  reseal(S, Size, 2, [](FrameHeader &H) { H.Magic ^= 1; });
  EXPECT_EQ(captureFrame(S.Bytes, SlotSize, 2, Private.Bytes, &V), TC_ERR_BAD_MAGIC);
}

} // namespace

// The job policy's capture (TC_CODE_TRUST_JOB, docs/security.md "Code
// trust"): the same checks, on a private copy of the header (and image);
// the payload read where it landed.
namespace {

/// Frames of every kind and layout the receiver takes: one line and more,
/// put with a checksum and stored in order.
std::vector<FrameSpec> inRingSpecs(const std::vector<uint8_t> &Image,
                                   const std::vector<uint8_t> &Payload) {
  std::vector<FrameSpec> Specs;
  for (bool Ordered : {false, true}) {
    for (uint32_t Size : {0u, 4u, 24u, 25u, 300u})
      for (FrameKind Kind : {FrameLocal, FrameCached, FrameAnswer}) {
        FrameSpec S;
        S.Kind = Kind;
        S.Package = 0x5eed;
        S.Element = Kind == FrameAnswer ? 0 : 3;
        S.Code = Kind == FrameCached ? 0xfeedull : 0;
        S.Payload = Payload.data();
        S.PayloadSize = Size;
        S.Sequence = 77;
        S.Ordered = Ordered;
        Specs.push_back(S);
      }
    FrameSpec S;
    S.Kind = FrameInjected;
    S.Package = 0x5eed;
    S.Element = 3;
    S.Code = 0xc0de;
    S.Image = Image.data();
    S.ImageSize = uint32_t(Image.size());
    S.Payload = Payload.data();
    S.PayloadSize = 100;
    S.Sequence = 77;
    S.Ordered = Ordered;
    Specs.push_back(S);
  }
  return Specs;
}

TEST(FrameCapture, InRingTakesWhatCaptureFrameTakesButLeavesThePayload) {
  std::vector<uint8_t> Image = bytes(128, 1), Payload = bytes(300, 9);
  for (const FrameSpec &Spec : inRingSpecs(Image, Payload))
    for (Completion How : {Completion::Checksum, Completion::Marked, Completion::Ordered}) {
      std::string What = "kind " + std::to_string(Spec.Kind) + ", " +
                         std::to_string(Spec.PayloadSize) + " B" +
                         (Spec.Ordered ? ", ordered" : "") + ", completion " +
                         std::to_string(int(How));
      Slot S, Copied, Header;
      size_t Size = 0;
      ASSERT_EQ(encodeFrame(S.Bytes, SlotSize, Spec, &Size), TC_OK) << What;
      FrameView V, R;
      tc_status_t Want = captureFrame(S.Bytes, SlotSize, 77, Copied.Bytes, &V, How);
      ASSERT_EQ(captureFrameInRing(S.Bytes, SlotSize, 77, Header.Bytes, &R, How), Want) << What;
      if (Want != TC_OK)
        continue; // a marked frame under Completion::Checksum: not whole yet, for both
      EXPECT_EQ(std::memcmp(&R.Header, &V.Header, sizeof R.Header), 0) << What;
      EXPECT_EQ(R.Size, V.Size) << What;
      // The payload: at the same place, but in the slot.
      EXPECT_EQ(R.Payload, S.Bytes + (V.Payload - Copied.Bytes)) << What;
      EXPECT_EQ(std::memcmp(R.Payload, Payload.data(), Spec.PayloadSize), 0) << What;
      // The image: copied, as captureFrame copies it (never run from the ring).
      if (Spec.Kind == FrameInjected) {
        EXPECT_EQ(R.Image, Header.Bytes + (V.Image - Copied.Bytes)) << What;
        EXPECT_EQ(std::memcmp(R.Image, Image.data(), Image.size()), 0) << What;
      } else {
        EXPECT_EQ(R.Image, nullptr) << What;
      }
      // A peer rewriting the slot: what was checked (the header) stays;
      // the payload the jam reads is the slot's, rewritten.
      uint32_t Checked = R.Header.PayloadSize;
      reseal(S, Size, 77, [](FrameHeader &H) { H.PayloadSize = 4000; });
      EXPECT_EQ(R.Header.PayloadSize, Checked) << What;
      if (Spec.PayloadSize) {
        S.Bytes[R.Payload - S.Bytes] ^= 0xff;
        EXPECT_EQ(R.Payload[0], uint8_t(Payload[0] ^ 0xff)) << What;
      }
    }
}

/// The checksum is taken over the slot in one pass, the header copied as
/// it is summed: bytes landing in any order, over an older frame's, pass
/// only once the last has landed.
TEST(FrameCapture, InRingCompleteOnlyWhenEveryByteHasLanded) {
  std::vector<uint8_t> Image = bytes(192, 3), Payload = bytes(200, 5);
  for (FrameKind Kind : {FrameInjected, FrameLocal}) {
    FrameSpec Spec;
    Spec.Kind = Kind;
    Spec.Image = Kind == FrameInjected ? Image.data() : nullptr;
    Spec.ImageSize = Kind == FrameInjected ? uint32_t(Image.size()) : 0;
    Spec.Code = Kind == FrameInjected ? 0xc0de : 0;
    Spec.Payload = Payload.data();
    Spec.PayloadSize = uint32_t(Payload.size());
    Spec.Sequence = 42;
    Slot Source;
    size_t Size = 0;
    ASSERT_EQ(encodeFrame(Source.Bytes, SlotSize, Spec, &Size), TC_OK);
    std::mt19937 Rng(99 + Kind);
    for (int Round = 0; Round < 30; ++Round) {
      Slot Target, Header;
      for (uint8_t &B : Target.Bytes)
        B = uint8_t(Rng() | 1);
      std::vector<size_t> Chunks(Size / 8);
      std::iota(Chunks.begin(), Chunks.end(), 0);
      std::shuffle(Chunks.begin(), Chunks.end(), Rng);
      for (size_t I = 0; I < Chunks.size(); ++I) {
        std::memcpy(Target.Bytes + Chunks[I] * 8, Source.Bytes + Chunks[I] * 8, 8);
        FrameView V;
        tc_status_t St = captureFrameInRing(Target.Bytes, SlotSize, 42, Header.Bytes, &V);
        if (I + 1 < Chunks.size()) {
          ASSERT_EQ(St, TC_ERR_INCOMPLETE)
              << "kind " << Kind << " round " << Round << " chunk " << I;
        } else {
          ASSERT_EQ(St, TC_OK);
          EXPECT_EQ(std::memcmp(V.Payload, Payload.data(), Payload.size()), 0);
          if (Kind == FrameInjected)
            EXPECT_EQ(std::memcmp(V.Image, Image.data(), Image.size()), 0);
        }
      }
    }
  }
}

/// Every bad field captureFrame refuses (resealed: the checksum is right),
/// and every byte changed after sealing, payload bytes included: the same
/// answer from the in-ring capture.
TEST(FrameCapture, InRingRefusesWhatCaptureFrameRefuses) {
  std::vector<uint8_t> Image = bytes(64, 2), Payload = bytes(40, 4);
  FrameSpec Spec;
  Spec.Kind = FrameInjected;
  Spec.Image = Image.data();
  Spec.ImageSize = 64;
  Spec.Code = 0xc0de;
  Spec.Payload = Payload.data();
  Spec.PayloadSize = 40;
  Spec.Sequence = 3;
  Slot Good;
  size_t Size;
  ASSERT_EQ(encodeFrame(Good.Bytes, SlotSize, Spec, &Size), TC_OK);
  void (*Changes[])(FrameHeader &) = {
      [](FrameHeader &H) { H.Magic ^= 1; },
      [](FrameHeader &H) { H.Version = 9; },
      [](FrameHeader &H) { H.Kind = 7; },
      [](FrameHeader &H) { H.Kind = FrameAnswer; },
      [](FrameHeader &H) { H.Sequence += 64; },
      [](FrameHeader &H) { H.PayloadSize = 4000; },
      [](FrameHeader &H) { H.PayloadOffset = 8; },
      [](FrameHeader &H) { H.PayloadOffset = 0xfffffff0u; },
      [](FrameHeader &H) { H.ImageSize = 128; },
      [](FrameHeader &H) { H.ImageSize = 40; },
      [](FrameHeader &H) { H.PayloadOffset = 48; },
      [](FrameHeader &H) { H.Kind = FrameLocal; },
      [](FrameHeader &H) { H.Kind = FrameCached; },
  };
  for (size_t C = 0; C < std::size(Changes); ++C) {
    Slot S = Good, Copied, Header;
    reseal(S, Size, 3, Changes[C]);
    FrameView V, R;
    tc_status_t Want = captureFrame(S.Bytes, SlotSize, 3, Copied.Bytes, &V);
    EXPECT_NE(Want, TC_OK) << "change " << C;
    EXPECT_EQ(captureFrameInRing(S.Bytes, SlotSize, 3, Header.Bytes, &R), Want) << "change " << C;
  }
  for (size_t I = 0; I < Size - FrameTrailerSize; I += 5) {
    Slot S = Good, Header;
    S.Bytes[I] ^= 0x20;
    FrameView R;
    EXPECT_EQ(captureFrameInRing(S.Bytes, SlotSize, 3, Header.Bytes, &R), TC_ERR_INCOMPLETE)
        << "flipped byte " << I;
  }
}

/// The direct sender's frames, in the ring: what captureMarkedLine and
/// captureMarkedFrame accept and refuse, the same, and the payload not
/// copied.
TEST(FrameCapture, TheInlinePathsInRingAgreeWithTheCopyingOnes) {
  std::vector<uint8_t> Payload = bytes(1000, 7);
  for (FrameKind Kind : {FrameLocal, FrameCached})
    for (uint32_t N : {0u, 1u, 8u, 24u, 25u, 100u, 1000u}) {
      Slot S, Private;
      FrameSpec Spec = markedSpec(Kind, Payload.data(), N, 4, 9);
      size_t Size = 0;
      ASSERT_EQ(encodeFrame(S.Bytes, SlotSize, Spec, &Size), TC_OK);
      FrameView V, R;
      bool Line = Size == FrameLine;
      bool Want = Line ? captureMarkedLine(S.Bytes, 9, Private.Bytes, &V)
                       : captureMarkedFrame(S.Bytes, SlotSize, 9, Private.Bytes, &V);
      ASSERT_TRUE(Want) << N;
      ASSERT_TRUE(Line ? captureMarkedLineInRing(S.Bytes, 9, &R)
                       : captureMarkedFrameInRing(S.Bytes, SlotSize, 9, &R))
          << N;
      EXPECT_EQ(std::memcmp(&R.Header, &V.Header, sizeof R.Header), 0) << N;
      EXPECT_EQ(R.Size, V.Size) << N;
      EXPECT_EQ(R.Image, nullptr) << N;
      EXPECT_EQ(R.Payload, S.Bytes + (V.Payload - Private.Bytes)) << N;
      EXPECT_EQ(std::memcmp(R.Payload, Payload.data(), N), 0) << N;
      // The other way's frames are not for it.
      EXPECT_FALSE(Line ? captureMarkedFrameInRing(S.Bytes, SlotSize, 9, &R)
                        : captureMarkedLineInRing(S.Bytes, 9, &R))
          << N;
      EXPECT_FALSE(Line ? captureMarkedLineInRing(S.Bytes, 9 + 64, &R)
                        : captureMarkedFrameInRing(S.Bytes, SlotSize, 9 + 64, &R))
          << N;
      // A bad length: refused by both.
      uint32_t Huge = Line ? 25 : uint32_t(Size);
      std::memcpy(S.Bytes + offsetof(FrameHeader, PayloadSize), &Huge, sizeof Huge);
      EXPECT_EQ(Line ? captureMarkedLine(S.Bytes, 9, Private.Bytes, &V)
                     : captureMarkedFrame(S.Bytes, SlotSize, 9, Private.Bytes, &V),
                false)
          << N;
      EXPECT_FALSE(Line ? captureMarkedLineInRing(S.Bytes, 9, &R)
                        : captureMarkedFrameInRing(S.Bytes, SlotSize, 9, &R))
          << N;
      // Put with a checksum: neither inline path.
      Spec.Ordered = false;
      ASSERT_EQ(encodeFrame(S.Bytes, SlotSize, Spec, &Size), TC_OK);
      EXPECT_FALSE(Line ? captureMarkedLineInRing(S.Bytes, 9, &R)
                        : captureMarkedFrameInRing(S.Bytes, SlotSize, 9, &R))
          << N;
    }
}

} // namespace
