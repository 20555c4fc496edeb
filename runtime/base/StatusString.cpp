//===- StatusString.cpp - What a status means, in words -------------------===//
#include "base/StatusString.h"

const char *twochains::rt::statusString(tc_status_t Status) {
  switch (Status) {
  case TC_OK: return "success";
  case TC_ERR_INVALID_PARAM: return "invalid parameter";
  case TC_ERR_NO_MEMORY: return "out of memory";
  case TC_ERR_NO_CREDIT: return "no credit: the peer's ring is full";
  case TC_ERR_TOO_LARGE: return "too large: a frame for its slot, or an answer for its call";
  case TC_ERR_INCOMPLETE: return "frame not completely arrived";
  case TC_ERR_BAD_MAGIC: return "bad frame magic";
  case TC_ERR_BAD_VERSION: return "unsupported frame version";
  case TC_ERR_BAD_LENGTH: return "frame length or offset outside the slot";
  case TC_ERR_BAD_CHECKSUM: return "frame checksum mismatch";
  case TC_ERR_UNKNOWN_PACKAGE: return "unknown package";
  case TC_ERR_UNKNOWN_ELEMENT: return "unknown element";
  case TC_ERR_BAD_KIND: return "unknown frame kind";
  case TC_ERR_SEQUENCE: return "frame out of sequence";
  case TC_ERR_MISSING_IMPORT: return "missing import";
  case TC_ERR_BAD_IMAGE: return "invalid jam image";
  case TC_ERR_IO: return "input/output error";
  case TC_ERR_HASH_MISMATCH: return "code does not hash to the hash its frame claims";
  case TC_ERR_NOT_CACHED: return "frame names code this receiver does not hold";
  case TC_ERR_AUTH: return "peer authentication failed: wrong or missing key";
  case TC_ERR_INSECURE:
    return "refused to listen beyond loopback without a key (set TC_KEY_FILE or TC_KEY, "
           "or create the context with TC_CONTEXT_INSECURE)";
  case TC_ERR_BAD_OFFER: return "handshake offer malformed or out of bounds";
  case TC_ERR_JAM_FAULT: return "a jam faulted on the receiver; its frame was abandoned";
  case TC_ERR_JAM_TIMEOUT: return "a jam ran past its time limit; its frame was abandoned";
  case TC_ERR_QUARANTINED:
    return "quarantined: the element after repeated faults from this peer, or the peer's "
           "address after its abandoned frames took more than their budget";
  case TC_ERR_TOO_MANY_PEERS: return "the context's limit on peers is reached";
  case TC_ERR_PACKAGE_MISMATCH: return "a package both sides have is built differently";
  case TC_ERR_BAD_MANIFEST: return "malformed package manifest, or one of an unsupported version";
  case TC_ERR_NO_ISA_IMAGE: return "the package has no image for the receiver's instruction set";
  case TC_ERR_TIMED_OUT: return "timed out: no answer within the time given";
  case TC_ERR_REFUSED: return "refused by the peer";
  case TC_ERR_UNTRUSTED:
    return "code the receiver's code-trust policy does not admit (not signed by a key it "
           "trusts, or not verified into its sandbox)";
  }
  return "unknown status";
}

extern "C" const char *tc_status_string(tc_status_t Status) {
  return twochains::rt::statusString(Status);
}
