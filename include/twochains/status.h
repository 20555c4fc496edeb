/*===- twochains/status.h - Status codes of the Two-Chains runtime ---------===
 *
 * TC_OK is 0; every error is negative. tc_status_string() names each one.
 *
 *===----------------------------------------------------------------------===*/
#ifndef TWOCHAINS_STATUS_H
#define TWOCHAINS_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tc_status {
  TC_OK = 0,
  TC_ERR_INVALID_PARAM = -1, /* an argument is out of its documented range */
  TC_ERR_NO_MEMORY = -2,
  TC_ERR_NO_CREDIT = -3,  /* the peer's ring is full: progress and retry */
  TC_ERR_TOO_LARGE = -4,  /* a frame would not fit a slot, or an answer its call */
  TC_ERR_INCOMPLETE = -5, /* the frame's bytes have not all arrived; a call not
                                   answered yet (tc_call_test) */
  TC_ERR_BAD_MAGIC = -6,
  TC_ERR_BAD_VERSION = -7,
  TC_ERR_BAD_LENGTH = -8, /* a length or offset leaves the slot */
  TC_ERR_BAD_CHECKSUM = -9,
  TC_ERR_UNKNOWN_PACKAGE = -10,
  TC_ERR_UNKNOWN_ELEMENT = -11,
  TC_ERR_BAD_KIND = -12,
  TC_ERR_SEQUENCE = -13,       /* a frame out of the ring's order */
  TC_ERR_MISSING_IMPORT = -14, /* a jam names a symbol the receiver lacks */
  TC_ERR_BAD_IMAGE = -15,
  TC_ERR_IO = -16,
  TC_ERR_HASH_MISMATCH = -17,    /* code that does not hash to what its frame claims */
  TC_ERR_NOT_CACHED = -18,       /* a frame names code this receiver does not hold */
  TC_ERR_AUTH = -19,             /* peer authentication failed: wrong or missing key */
  TC_ERR_INSECURE = -20,         /* listening beyond loopback without a key */
  TC_ERR_BAD_OFFER = -21,        /* a handshake offer out of its bounds or malformed */
  TC_ERR_JAM_FAULT = -22,        /* a jam faulted (SIGSEGV, SIGBUS, SIGILL, SIGFPE): abandoned */
  TC_ERR_JAM_TIMEOUT = -23,      /* a jam ran past its time limit: abandoned */
  TC_ERR_QUARANTINED = -24,      /* an element refused for a peer after repeated faults,
                                   or a peer address after too long in abandoned frames */
  TC_ERR_TOO_MANY_PEERS = -25,   /* the context's limit on peers is reached */
  TC_ERR_PACKAGE_MISMATCH = -26, /* a package both sides have, built differently */
  TC_ERR_BAD_MANIFEST = -27,     /* a package manifest malformed or of another version */
  TC_ERR_NO_ISA_IMAGE = -28,     /* injected: the package has no image for the receiver's ISA */
  TC_ERR_TIMED_OUT = -29,        /* a wait ran out of its time: no answer, nothing wrong seen */
  TC_ERR_REFUSED = -30,          /* the peer refused: it does not take what was sent */
  TC_ERR_UNTRUSTED = -31         /* deployed code the receiver's code-trust policy does not
                                    admit: unsigned, signed by a key it does not trust, or a
                                    signature that does not verify (docs/deploying.md); under
                                    the verified policy also a jam not built for the sandbox,
                                    one its verifier rejects, or a ried (docs/verified.md) */
} tc_status_t;

/* A short, constant English description; never NULL. */
const char *tc_status_string(tc_status_t status);

#ifdef __cplusplus
}
#endif

#endif /* TWOCHAINS_STATUS_H */
