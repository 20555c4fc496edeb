//===- ControlMessageTest.cpp - One way to receive a control message's body ===//
//
// Calls, code shipped ahead and ried pushes receive their bodies through
// receiveBody: whatever happens to a body, its owner hears of it exactly
// once. (A ried push whose rendezvous receive failed at once used to be
// dropped without an answer, so its sender waited out its whole timeout.)
//
//===----------------------------------------------------------------------===//
#include "control/ControlMessage.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

using namespace twochains::rt;

namespace {

struct Outcome {
  int Calls = 0;
  tc_status_t Status = TC_ERR_INCOMPLETE;
};

void record(void *Arg, tc_status_t St) {
  auto *O = static_cast<Outcome *>(Arg);
  ++O->Calls;
  O->Status = St;
}

ucs_status_ptr_t failAtOnce(ucp_worker_h, void *, void *, size_t, const ucp_request_param_t *) {
  return UCS_STATUS_PTR(UCS_ERR_NO_MEMORY);
}

ucs_status_ptr_t completeAtOnce(ucp_worker_h, void *Data, void *Dest, size_t Length,
                                const ucp_request_param_t *) {
  std::memcpy(Dest, Data, Length);
  return nullptr;
}

/// Puts another receive in UCX's place for one test.
class ReceiveDataSwap {
public:
  explicit ReceiveDataSwap(ReceiveDataFn Fn) : Saved(ReceiveData) { ReceiveData = Fn; }
  ~ReceiveDataSwap() { ReceiveData = Saved; }

private:
  ReceiveDataFn Saved;
};

/// A context of the core and the control part alone.
struct ControlOnly : CoreContext {
  ControlContext Part;
  ControlOnly() { Control = &Part; }
};

} // namespace

TEST(ControlMessage, EagerBodyIsCopiedAndReported) {
  ControlOnly Ctx;
  std::vector<uint8_t> Data = {1, 2, 3, 4}, Dest(4);
  ucp_am_recv_param_t Param = {};
  Outcome O;
  receiveBody(&Ctx, Data.data(), Data.size(), &Param, Dest.data(), record, &O);
  EXPECT_EQ(O.Calls, 1);
  EXPECT_EQ(O.Status, TC_OK);
  EXPECT_EQ(Dest, Data);
}

TEST(ControlMessage, RendezvousBodyThatFailsAtOnceIsReportedAsIoError) {
  ReceiveDataSwap Swap(failAtOnce);
  ControlOnly Ctx;
  std::vector<uint8_t> Dest(4096);
  ucp_am_recv_param_t Param = {};
  Param.recv_attr = UCP_AM_RECV_ATTR_FLAG_RNDV;
  Outcome O;
  receiveBody(&Ctx, nullptr, Dest.size(), &Param, Dest.data(), record, &O);
  EXPECT_EQ(O.Calls, 1) << "a body that never comes must still be answered";
  EXPECT_EQ(O.Status, TC_ERR_IO);
}

TEST(ControlMessage, RendezvousBodyThatCompletesAtOnceIsReported) {
  ReceiveDataSwap Swap(completeAtOnce);
  ControlOnly Ctx;
  std::vector<uint8_t> Data(4096, 7), Dest(4096);
  ucp_am_recv_param_t Param = {};
  Param.recv_attr = UCP_AM_RECV_ATTR_FLAG_RNDV;
  Outcome O;
  receiveBody(&Ctx, Data.data(), Data.size(), &Param, Dest.data(), record, &O);
  EXPECT_EQ(O.Calls, 1);
  EXPECT_EQ(O.Status, TC_OK);
  EXPECT_EQ(Dest, Data);
}
