/*===- twochains/twochains.h - The Two-Chains runtime C API ----------------===
 *
 * A context owns its UCX contexts and workers (a control worker for
 * connections and control messages, a data worker for frames), the
 * packages loaded into it, and the mailbox: one ring of fixed-size slots
 * per connected sender, in memory that UCX allocates and registers.
 * Connections use UCX's own sockaddr connection establishment and an
 * authenticated handshake; a frame moves as one store into the ring where
 * UCX maps it here (shared memory), one ucp_put_nbx (RDMA), or one active
 * message (TCP). Jobs of many processes (tc_job_*) connect their ranks on
 * demand; code a peer lacks can be deployed into it (tc_deploy).
 *
 *   receiver: tc_context_create, tc_context_add_package, tc_listen,
 *             then tc_progress in a loop (it runs the frames that arrived)
 *   sender:   tc_context_create, tc_context_add_package, tc_connect,
 *             tc_send ..., tc_flush, tc_peer_close
 *
 * Every function returns TC_OK or a negative tc_status_t; outputs are set
 * only on success; errors are logged once, where they are found.
 *
 *===----------------------------------------------------------------------===*/
#ifndef TWOCHAINS_TWOCHAINS_H
#define TWOCHAINS_TWOCHAINS_H

#include <stddef.h>
#include <stdint.h>
#include "twochains/package.h"
#include "twochains/status.h"
#include "twochains/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The loaded library's version, TC_VERSION_NUMBER(major, minor, patch),
 * and as text ("0.5.0"). Compare with TC_VERSION, the headers'. */
unsigned tc_get_version(void);
const char *tc_get_version_string(void);

/* Logging. Every error is logged once, where it is found, through the
 * handler: by default "twochains: <level>: <message>" on stderr. Messages
 * above the level are not made at all (default TC_LOG_WARN, or the
 * environment's TC_LOG_LEVEL=error|warn|info|debug). The handler may be
 * called from any thread, one call at a time; it must not call back into
 * Two-Chains. */
typedef enum tc_log_level {
  TC_LOG_ERROR = 0,
  TC_LOG_WARN = 1,
  TC_LOG_INFO = 2,
  TC_LOG_DEBUG = 3
} tc_log_level_t;
typedef void (*tc_log_fn)(tc_log_level_t level, const char *message, void *arg);
/* Installs fn (NULL: the default) and returns the previous handler (NULL
 * if it was the default), as libbpf_set_print does. */
tc_log_fn tc_set_log_handler(tc_log_fn fn, void *arg);
tc_status_t tc_set_log_level(tc_log_level_t level);

typedef struct tc_context tc_context_t;
typedef struct tc_peer tc_peer_t;

/* 2 added mailbox_mode and code_cache_size; 3 the job's key; 4
 * containment; 5 embedding; 6 quarantine by address and connections
 * before authentication; 7 the code-trust policy; 8 payloads ahead. Older
 * structs are still accepted (they end at flags, code_cache_size, key_file,
 * forward_allow, ucp_worker, reserved6 and trusted_signers). */
#define TC_CONTEXT_PARAMS_VERSION 8u

typedef enum tc_wait_mode {
  TC_WAIT_AUTO = 0,       /* the ISA's low-power wait if the CPU has one, else PAUSE */
  TC_WAIT_POLL = 1,       /* spin without any hint */
  TC_WAIT_PAUSE = 2,      /* x86 PAUSE / aarch64 YIELD between polls */
  TC_WAIT_LOWPOWER = 3    /* aarch64 WFE; x86 UMWAIT (WAITPKG) or MWAITX (AMD);
                             TC_ERR_INVALID_PARAM if the CPU has none */
} tc_wait_mode_t;

/* Where injected code runs on a receiver (docs/code-cache.md). */
typedef enum tc_mailbox_mode {
  TC_MAILBOX_DEFAULT = 0,     /* the TC_MAILBOX_MODE environment variable
                                 ("code-cache", "no-cache"), else
                                 TC_MAILBOX_CODE_CACHE */
  TC_MAILBOX_CODE_CACHE = 1,  /* code is installed once, keyed by its SHA-256,
                                 into a cache whose pages are never writable
                                 and executable at once; senders ship code
                                 only when this receiver lacks it */
  TC_MAILBOX_IN_PLACE = 2,    /* the paper's mode, where code ran where it
                                 landed: no longer offered (a peer could
                                 rewrite code after it was checked);
                                 tc_context_create refuses it */
  TC_MAILBOX_NO_CACHE = 3     /* code travels in every injected frame and is
                                 copied into W^X pages for each run */
} tc_mailbox_mode_t;

/* Who may put code into this process (docs/security.md, "Code trust";
 * docs/deploying.md). */
typedef enum tc_code_trust {
  TC_CODE_TRUST_DEFAULT = 0, /* the TC_CODE_TRUST environment variable
                                 ("package", "job", "signed",
                                 "verified"), else TC_CODE_TRUST_PACKAGE */
  TC_CODE_TRUST_PACKAGE = 1, /* only the images of the packages this
                                 receiver loaded run; peers choose which
                                 elements, with what payload, nothing more */
  TC_CODE_TRUST_JOB = 2,     /* any authenticated peer may deploy code of
                                 its own (the paper's model: holders of the
                                 job's key are trusted as far as the rieds
                                 they could push); jams read their payload
                                 in the ring */
  TC_CODE_TRUST_SIGNED = 3,  /* only packages whose manifest is signed by a
                                 key in trusted_signers, whoever sends them */
  TC_CODE_TRUST_VERIFIED = 4 /* any authenticated peer may deploy packages
                                 of sandboxed jams, each admitted only if
                                 this receiver's verifier accepts it and run
                                 in a sandbox region of its package; no
                                 native library of theirs is loaded; with
                                 trusted_signers, signed packages run as
                                 under TC_CODE_TRUST_SIGNED (docs/verified.md) */
} tc_code_trust_t;

typedef struct tc_context_params {
  uint32_t version;       /* TC_CONTEXT_PARAMS_VERSION */
  uint32_t slots;         /* slots per sender's ring (0: TC_SLOTS, else 64;
                             a job's may be fewer: docs/jobs.md, "Rings") */
  uint32_t slot_size;     /* bytes per slot, a multiple of 64 (0: TC_SLOT_SIZE,
                             else 4096) */
  uint32_t credit_batch;  /* frames per credit report (0: slots / 4) */
  uint32_t wait_mode;     /* tc_wait_mode_t, for the executor thread;
                             TC_WAIT_POLL: no wait ever sleeps (tc_wait) */
  uint32_t flags;         /* TC_CONTEXT_ACCEPT_RIEDS, TC_CONTEXT_ORDERED_PLACEMENT,
                             TC_CONTEXT_INSECURE, TC_CONTEXT_THREADS (below) */
  /* version 2 */
  uint32_t mailbox_mode;  /* tc_mailbox_mode_t */
  uint32_t code_cache_size; /* bytes of installed code the cache holds before
                               it evicts, rounded up to 64 (0: 1 MiB) */
  /* version 3: the job's secret, which peers prove they hold before anything
   * they send is parsed (docs/security.md). The first of: key_size bytes at
   * key; the file key_file (readable by its owner alone); the file named by
   * the environment variable TC_KEY_FILE; the bytes of TC_KEY. 16 to 4096
   * bytes. Peers must hold the same key, or both none. */
  uint32_t key_size;
  const void *key;
  const char *key_file;
  /* version 4: containment (docs/containment.md) */
  uint32_t jam_time_limit_ms; /* a jam running longer is abandoned. 0: the
                                 environment variable TC_JAM_TIME_LIMIT_MS,
                                 else 1000; TC_JAM_NO_TIME_LIMIT: none */
  uint32_t quarantine_faults; /* faults and overruns of one element from one
                                 peer before that peer's frames of it are
                                 refused (0: 3; TC_NEVER_QUARANTINE: never) */
  uint32_t max_peers;         /* authenticated peers at once (0: 256); a
                                 connection still authenticating takes one
                                 of max_startups instead */
  uint32_t reserved4;
  const char *forward_allow;  /* "host:port,host:port": where tc_jam_forward
                                 may connect; NULL or "": nowhere */
  /* version 5: embedding (docs/runtime.md, "Embedding"). An application's
   * own UCX worker (ucp_worker_h), created on a context (ucp_context_h) with
   * UCP_FEATURE_AM, to carry the control traffic: the listener, connections,
   * handshakes and frames by message. Two-Chains registers its active
   * messages 0x7c01-0x7c13 on it (TC_AM_ID_FIRST..TC_AM_ID_LAST; the
   * application keeps the others) and never destroys it. NULL: a context
   * and worker of its own. RMA frames always use a context of Two-Chains'
   * own, with every transport but TCP. */
  void *ucp_context;
  void *ucp_worker;
  /* version 6: quarantine by peer address (docs/containment.md). The time
   * one address's abandoned frames (faults, overruns; each at least 1 ms)
   * may take within a window; past it, that address's frames and new
   * connections are refused for a window. The addresses of one host
   * (loopback's) together may take twice the budget. Kept across
   * connections: a reconnect does not reset it. */
  uint32_t quarantine_budget_ms; /* 0: TC_QUARANTINE_BUDGET_MS, else 4000;
                                    TC_NEVER_QUARANTINE: never */
  uint32_t quarantine_window_ms; /* 0: TC_QUARANTINE_WINDOW_MS, else 60000 */
  /* version 6: connections that have not authenticated yet, which anyone who
   * reaches the port can open (docs/security.md, "Before authentication").
   * 0: the environment variable named, else the default. */
  uint32_t handshake_timeout_ms;     /* one that has not authenticated by then is
                                        closed (TC_HANDSHAKE_TIMEOUT_MS, else 3000
                                        for each 1024 of max_peers) */
  uint32_t max_startups;             /* at once, in all (TC_MAX_STARTUPS, else 32) */
  uint32_t max_startups_per_address; /* at once, from one address
                                        (TC_MAX_STARTUPS_PER_ADDRESS, else 4) */
  uint32_t reserved6;
  /* version 7: the code-trust policy (tc_code_trust_t) and, for
   * TC_CODE_TRUST_SIGNED (optional for TC_CODE_TRUST_VERIFIED), the file of trusted signers ("tc-ed25519 <public
   * key in hex> [comment]" per line, as twochains-pkg-gen --print-signer
   * prints them; NULL: the file named by TC_TRUSTED_SIGNERS). */
  uint32_t code_trust;
  uint32_t reserved7;
  const char *trusted_signers;
  /* version 8: payloads larger than a slot, which travel ahead of their
   * frames (docs/scaling.md, "Payloads larger than a slot"): the bytes of
   * them one sender may have on their way to this side at once, which also
   * bounds one payload; all senders together at most 16 times that. 0: the
   * environment variable TC_PAYLOAD_AHEAD_BYTES, else 4 MiB, at most 1 GiB;
   * TC_NO_PAYLOADS_AHEAD: none taken (a frame must fit a slot). */
  uint32_t payload_ahead_bytes;
  uint32_t reserved8;
} tc_context_params_t;

#define TC_AM_ID_FIRST 0x7c01u
#define TC_AM_ID_LAST 0x7c13u

#define TC_JAM_NO_TIME_LIMIT 0xffffffffu
#define TC_NEVER_QUARANTINE 0xffffffffu
#define TC_NO_PAYLOADS_AHEAD 0xffffffffu

/* Let connected peers drive ried libraries over to this process (see
 * tc_ried_push). Off by default: a pushed ried is code that runs here. */
#define TC_CONTEXT_ACCEPT_RIEDS 1u
/* Ordered placement, as in the paper: the transport writes every frame's
 * bytes in order, so a trailer holding the expected sequence means the
 * frame is complete, and the checksum is not computed. Only for transports
 * that guarantee it; the default mode is correct for any order. */
#define TC_CONTEXT_ORDERED_PLACEMENT 2u
/* Allow tc_listen on an address beyond loopback without a key: anyone who
 * can reach the port may then run the packages' elements here. */
#define TC_CONTEXT_INSECURE 4u
/* Threads (docs/runtime.md, "Threads"): several application threads call
 * this context at once (sends, flushes, progress, connects). Every call then
 * holds the context's lock; without the flag, calls take it only while the
 * executor thread runs, and the application calls from one thread at a
 * time, as with a UCX worker in serialised mode. */
#define TC_CONTEXT_THREADS 8u

tc_status_t tc_context_create(const tc_context_params_t *params, tc_context_t **context);
void tc_context_destroy(tc_context_t *context);

/* Jobs (docs/jobs.md): P processes launched together (mpirun, srun), each
 * with one context that both sends and receives. tc_job_join gives every
 * rank every rank's address, and no more: the connection to a rank is made
 * when it is first used (tc_job_peer), in the background, while frames
 * sent to it wait (bounded); two ranks that connect to each other at once
 * end with one connection. A rank sends to itself like to any other.
 *
 * Where the addresses come from, the first of:
 *   - blobs: every rank's tc_context_address blob, in rank order (the
 *     application listened and exchanged them itself);
 *   - allgather: the application's collective (MPI_Allgather: see
 *     twochains/mpi.h), given each rank's fixed-size share;
 *   - PMIx, when a PMIx server launched this process (mpirun, prterun,
 *     srun); params may then be NULL.
 * Unless the context listens already, it listens on a free port: on every
 * interface if it has a key (or TC_CONTEXT_INSECURE), else on loopback
 * (listen_address overrides). Ranks must share the key and packages. */
typedef int (*tc_allgather_fn)(const void *mine, void *all, size_t size, void *arg);
/* allgather: writes the size bytes at mine of every rank r to
 * all + r * size on every rank; returns 0, or nonzero if it failed. */

#define TC_JOB_PARAMS_VERSION 1u
typedef struct tc_job_params {
  uint32_t version;            /* TC_JOB_PARAMS_VERSION */
  uint32_t rank;               /* this process's rank (allgather, blobs) */
  uint32_t size;               /* the job's ranks (allgather, blobs) */
  int32_t connect_timeout_ms;  /* how long a rank's connection may take to
                                  make, retries included (0: 30000) */
  tc_allgather_fn allgather;
  void *allgather_arg;
  const void *const *blobs;    /* size blobs, by rank */
  const size_t *blob_sizes;
  const char *listen_address;  /* NULL: as said above */
} tc_job_params_t;

tc_status_t tc_job_join(tc_context_t *context, const tc_job_params_t *params);
/* This process's rank and the job's size (either may be NULL). */
tc_status_t tc_job_rank(const tc_context_t *context, unsigned *rank, unsigned *size);
/* The handle of a rank: valid until tc_context_destroy, whatever becomes of
 * the rank (tc_peer_close on it does nothing). Its connection is started if
 * it was not; it never waits. Until the connection is made, tc_send and
 * tc_send_args queue their frames on it (TC_ERR_NO_CREDIT when 4096 frames
 * or 4 MiB wait), tc_call_start returns TC_ERR_NO_CREDIT (tc_call waits),
 * and tc_flush waits for the connection too. Once the rank has gone, or
 * could not be connected within the connect timeout, every call on it
 * returns TC_ERR_IO (and a TC_EVENT_PEER_GONE was posted). */
tc_status_t tc_job_peer(tc_context_t *context, unsigned rank, tc_peer_t **peer);
/* Collective: returns once every frame sent in the job, and every frame
 * those frames sent (forwards, replies), has run or been refused, on every
 * rank (a barrier that holds with forwards). Every rank calls it; it runs
 * frames meanwhile. TC_ERR_IO if a rank has gone; TC_ERR_TIMED_OUT after
 * timeout_ms (the job's quiescence is then undefined). */
tc_status_t tc_job_quiesce(tc_context_t *context, int timeout_ms);

/* Deploying (docs/deploying.md): makes the peer hold this build of the
 * package, sending it what it lacks (the manifest and its signature, then
 * only the files it does not hold: rieds, the Local-Function library,
 * images). The peer checks the package against its code-trust policy,
 * links it and adds it; from then on Local and injected frames of it run
 * there. TC_OK at once if the peer holds it already. A frame of a build a
 * peer that takes deployments does not hold waits for this to happen on
 * its own; this says when it is done, and why not: TC_ERR_REFUSED (its
 * policy is package), TC_ERR_UNTRUSTED (signed: no trusted signature),
 * TC_ERR_MISSING_IMPORT (a jam imports a name nothing there defines; the
 * log names it), TC_ERR_PACKAGE_MISMATCH (its rieds differ from those of
 * the build the peer holds), TC_ERR_BAD_MANIFEST, TC_ERR_HASH_MISMATCH,
 * TC_ERR_BAD_IMAGE or TC_ERR_BAD_OFFER (what arrived did not check out
 * there: the peer's log says why), TC_ERR_TIMED_OUT, TC_ERR_IO (the peer
 * is gone, or a file of the package cannot be read here),
 * TC_ERR_INVALID_PARAM (the package was not loaded from a folder). A peer
 * busy with others' deployments (each takes a few at a time) is offered
 * it again, within timeout_ms: every rank of a job may deploy at once. A
 * refusal is for good: later frames of the package to that peer fail with
 * it. A job rank's handle is connected first. Runs the context's frames
 * meanwhile. */
tc_status_t tc_deploy(tc_peer_t *peer, const tc_package_t *package, int timeout_ms);
/* tc_deploy to every rank of the job (this one too), all at once: TC_OK
 * once every rank holds the package, else the first failure met. */
tc_status_t tc_job_deploy(tc_context_t *context, const tc_package_t *package, int timeout_ms);

/* Makes a loaded package usable by the context's sends (sender role) and
 * frames (receiver role). The context does not take ownership. */
tc_status_t tc_context_add_package(tc_context_t *context, tc_package_t *package);

/* Receiver: accepts connections on address:port (IPv4 dotted or a name;
 * NULL or "" for every address). Without a key, only loopback addresses
 * (127.0.0.0/8) are accepted, unless the context has TC_CONTEXT_INSECURE:
 * TC_ERR_INSECURE. Peers that fail authentication are refused, counted in
 * auth_failures and logged once each. */
tc_status_t tc_listen(tc_context_t *context, const char *address, uint16_t port);

/* Sender: connects, authenticates the receiver (and itself to it) and
 * completes the handshake (waits up to timeout_ms). TC_ERR_AUTH if the
 * receiver does not prove it holds this context's key, or refuses ours. */
tc_status_t tc_connect(tc_context_t *context, const char *address, uint16_t port,
                       int timeout_ms, tc_peer_t **peer);

/* Bootstrap. tc_listen with port 0 takes any free port; tc_listen_port
 * reads it back. tc_context_address packs where this listening context can
 * be reached (its port and IPv4 addresses, with its public rank key and
 * its control worker's UCX address for a job's ranks: at most 2350 bytes,
 * docs/runtime.md) into a blob to exchange with
 * MPI_Allgather, PMIx or a file: with blob NULL it sets *size to the size
 * needed; TC_ERR_TOO_LARGE if *size is too small (*size then says how
 * much). tc_connect_address connects from such a blob, trying its
 * addresses in turn until the timeout. tc_connect itself keeps trying
 * while nothing listens at the address yet (processes launched together),
 * until its timeout, and logs once if it gives up. */
tc_status_t tc_listen_port(const tc_context_t *context, uint16_t *port);
tc_status_t tc_context_address(const tc_context_t *context, void *blob, size_t *size);
tc_status_t tc_connect_address(tc_context_t *context, const void *blob, size_t size,
                               int timeout_ms, tc_peer_t **peer);

typedef enum tc_send_mode {
  TC_SEND_LOCAL = 1,         /* the receiver runs its own copy of the element */
  TC_SEND_INJECTED = 2,      /* the element's code runs on the receiver: it
                                travels in the frame, or, when the receiver has
                                a code cache that holds it, is named by hash */
  TC_SEND_INJECTED_FULL = 3, /* the code travels in every frame, as in the paper */
  /* A flag, or'ed into the mode of tc_send and tc_send_wait (C++: cast the
   * result to tc_send_mode_t): a payload that travels ahead of its frame
   * (larger than fits a slot beside it) is sent from the caller's buffer,
   * not from a copy. The buffer must then stay unchanged and allocated
   * until the frame is finished: tc_peer_frames counts it finished only
   * once UCX is done reading the buffer, and tc_flush returns TC_OK only
   * then. If the peer fails, UCX may read it until the connection is
   * released (tc_peer_close; a job's handle: tc_context_destroy). Payloads that
   * fit a slot, and frames that wait in a queue (behind code shipped
   * ahead, or a handle's connection), are copied as without it. Refused
   * by every other call (TC_ERR_INVALID_PARAM). */
  TC_SEND_NO_COPY = 0x100
} tc_send_mode_t;

/* One frame into the peer's ring: stored straight into it where UCX maps
 * it here (shared memory), one ucp_put_nbx (RDMA), or one active message
 * (TCP). TC_ERR_NO_CREDIT when the peer's ring is full: call tc_progress
 * and try again. TC_ERR_TOO_LARGE when the frame would not fit a slot.
 * An injected frame whose image does not fit a slot beside its payload
 * has the image shipped ahead, once per peer, never waited for: it is
 * queued, and so is every later frame to that peer while frames are
 * queued (in order; bounded: TC_ERR_NO_CREDIT when full), TC_OK; they
 * leave as this context progresses (tc_progress, the executor, tc_flush).
 * If the peer refuses the image, they are dropped and tc_flush says why
 * (docs/code-cache.md, "Images larger than a slot"). */
tc_status_t tc_send(tc_peer_t *peer, const tc_package_t *package, uint32_t element,
                    tc_send_mode_t mode, const void *payload, size_t payload_size);
/* tc_send's statuses: TC_OK (sent or queued: the payload was copied, its
 * buffer is free again; with TC_SEND_NO_COPY, see there), TC_ERR_NO_CREDIT (the ring or queue is full:
 * nothing was sent; progress and retry, or use tc_send_wait; after many
 * refusals in a row each one yields the core first, so that a retry loop
 * with more processes than cores lets the receiver it waits for run),
 * TC_ERR_TOO_LARGE, TC_ERR_UNKNOWN_ELEMENT, TC_ERR_NO_ISA_IMAGE,
 * TC_ERR_REFUSED or TC_ERR_UNTRUSTED (its code was refused before: see the
 * log), TC_ERR_IO (the peer is gone), TC_ERR_INVALID_PARAM. */

/* Corking, like TCP_CORK: while a peer is corked, frames to it that travel
 * as active messages (TCP) wait, and leave together in one message when
 * 64 KiB or the peer's window of them are waiting, at the next tc_progress
 * or tc_flush, or at tc_peer_cork(peer, 0): one system call for many
 * frames. Frames into a ring this side stores or puts into (shared memory,
 * RDMA) leave at once, corked or not. Uncorking sends what waits. */
tc_status_t tc_peer_cork(tc_peer_t *peer, int corked);

/* Aggregation (docs/jobs.md, "Aggregation"): a Local frame of at most 256
 * payload bytes sent by tc_send or tc_send_wait while the peer is behind
 * (frames it has not reported finished fill an eighth of its ring or
 * more) goes into a bundle with others to that peer: one slot of its ring
 * holding many frames, each stored there at once and run as the peer
 * comes to it. A bundle is sealed when full, before any other frame to
 * the peer, and at this context's next tc_progress, tc_wait, tc_flush,
 * tc_call or tc_job_quiesce (or the executor's turn; not at the turns a
 * stream of tc_send_wait takes); its slot is credited once sealed. The peer runs them in order, each checked and run as if sent
 * alone.
 * Calls, and sends to a peer that keeps up, leave at once. On by default
 * for peers whose ring this side stores into (shared memory);
 * tc_peer_aggregate(peer, 0) turns it off for one peer (what waits leaves
 * first; TC_ERR_NO_CREDIT if it cannot yet: nothing changed), and
 * TC_AGGREGATE=0 in the environment for every peer. On a job's handle the
 * setting is kept for its connection. TC_OK, TC_ERR_IO (the peer is
 * gone), TC_ERR_INVALID_PARAM. */
tc_status_t tc_peer_aggregate(tc_peer_t *peer, int on);

/* tc_send that waits for credit, as tc_call does: progresses the context
 * (answering others meanwhile), polls a while, then sleeps until a credit
 * report or a message comes; TC_ERR_TIMED_OUT if the ring or queue is
 * still full after timeout_ms (nothing was sent). Otherwise tc_send's
 * statuses. A stream of them takes a turn of the context every 1024 sends
 * of a thread, as MPI's sends progress (frames that came meanwhile run
 * then; none where the executor thread runs). Never from inside a running
 * jam (TC_ERR_INVALID_PARAM). */
tc_status_t tc_send_wait(tc_peer_t *peer, const tc_package_t *package, uint32_t element,
                         tc_send_mode_t mode, const void *payload, size_t payload_size,
                         int timeout_ms);

/* Where the frames to a peer stand, counted over its connection (answers
 * and forwards to it included), for an application that counts its own
 * completions rather than flushing: queued (waiting in this process for
 * credits, code shipped ahead or the connection), sent (given a slot of
 * the peer's ring, in order: every frame queued leaves before later
 * ones), finished (run or refused by the peer, as its credit reports say
 * so far, and its payload's buffer no longer read: TC_SEND_NO_COPY). A
 * frame sent as the s-th is finished once finished >= s; tc_send copies
 * payloads unless told not to, so a buffer is then free as soon as
 * tc_send returns.
 * A handle whose connection is not made yet: its queued frames, the rest 0. */
typedef struct tc_peer_frames {
  uint64_t queued;
  uint64_t sent;
  uint64_t finished;
} tc_peer_frames_t;
tc_status_t tc_peer_frames(tc_peer_t *peer, tc_peer_frames_t *frames);

/* For jams with payload helpers: sizes and writes the payload from args on
 * this side (the jam's <name>_payload_size and _payload_init, from the
 * package's Local-Function library), then sends it like tc_send. The
 * package headers' typed <package>_send_<element>() call this. */
tc_status_t tc_send_args(tc_peer_t *peer, const tc_package_t *package, uint32_t element,
                         tc_send_mode_t mode, const void *args);

/* Calls (docs/runtime.md, "Calls"): a frame whose jam answers with
 * tc_jam_return, and the bytes of that answer back here, with no reply jam
 * and no inbox of the application's own. tc_call_start sends the frame
 * like tc_send (the same modes and returns: TC_ERR_NO_CREDIT when the ring
 * is full) and, on TC_OK, sets *call. The answer lands in reply (at most
 * reply_capacity bytes), which must stay valid until the call is finished
 * or released. Many calls may be outstanding at once, to one peer or
 * several.
 *
 * tc_call_test: TC_OK when answered (*reply_size, if not NULL, set to the
 * answer's size); TC_ERR_INCOMPLETE while not yet; else how the call
 * ended: TC_ERR_JAM_FAULT, TC_ERR_JAM_TIMEOUT or TC_ERR_QUARANTINED (the
 * receiver abandoned the frame), the status of the receiver's refusal
 * (TC_ERR_UNKNOWN_PACKAGE, TC_ERR_UNKNOWN_ELEMENT, ...: it dropped the
 * frame), TC_ERR_TOO_LARGE (the answer exceeds reply_capacity, or the
 * receiver's limit of TC_CALL_MAX_REPLY bytes), TC_ERR_IO (the peer is
 * gone). Without the executor thread it progresses the context once
 * (tc_progress), as MPI_Test does.
 * tc_call_wait: the same, waiting up to timeout_ms for the end
 * (TC_ERR_TIMED_OUT if it has not come: the call stays outstanding).
 * tc_call_release: forgets the call, finished or not (a late answer is
 * dropped); every call started must be released. Neither waits nor calls
 * may be made from inside a running jam: TC_ERR_INVALID_PARAM.
 * tc_call: start, wait and release in one, retrying while the ring is full,
 * all within timeout_ms (TC_ERR_TIMED_OUT past it). */
typedef struct tc_call tc_call_t;
#define TC_CALL_MAX_REPLY (1u << 20)

tc_status_t tc_call_start(tc_peer_t *peer, const tc_package_t *package, uint32_t element,
                          tc_send_mode_t mode, const void *payload, size_t payload_size,
                          void *reply, size_t reply_capacity, tc_call_t **call);
tc_status_t tc_call_test(tc_call_t *call, size_t *reply_size);
tc_status_t tc_call_wait(tc_call_t *call, int timeout_ms, size_t *reply_size);
void tc_call_release(tc_call_t *call);
tc_status_t tc_call(tc_peer_t *peer, const tc_package_t *package, uint32_t element,
                    tc_send_mode_t mode, const void *payload, size_t payload_size,
                    void *reply, size_t reply_capacity, size_t *reply_size, int timeout_ms);
/* As tc_call, the payload written from args by the jam's payload helpers
 * (as tc_send_args). The package headers' <package>_call_<element>() call
 * this. */
tc_status_t tc_call_args(tc_peer_t *peer, const tc_package_t *package, uint32_t element,
                         tc_send_mode_t mode, const void *args, void *reply,
                         size_t reply_capacity, size_t *reply_size, int timeout_ms);

/* Drives a ried over to the peer: the shared library's bytes travel over
 * UCX and the receiver loads them (RTLD_GLOBAL, so its initialisers run and
 * jams reach its symbols). Waits for the receiver's answer: TC_OK;
 * TC_ERR_NO_CREDIT if it holds as many pushes on their way as it takes (try
 * again later); TC_ERR_REFUSED if it does not accept rieds (it does only if
 * created with TC_CONTEXT_ACCEPT_RIEDS); TC_ERR_BAD_IMAGE if it could not
 * load it; the receiver's reason is logged. TC_ERR_TIMED_OUT without an
 * answer in timeout_ms; TC_ERR_IO if the peer is gone. */
tc_status_t tc_ried_push(tc_peer_t *peer, const char *path, int timeout_ms);

/* A frame of ours that the receiver abandoned or refused: its jam faulted,
 * ran past the receiver's time limit, or its element is quarantined for
 * us; or the receiver dropped it before it ran (docs/runtime.md,
 * "Refusals"): a package or element it does not have, code that does not
 * check, a frame malformed on arrival. */
typedef enum tc_jam_end {
  TC_JAM_FAULTED = 1,
  TC_JAM_TIMED_OUT = 2,
  TC_JAM_QUARANTINED = 3,
  TC_JAM_REFUSED = 4
} tc_jam_end_t;

typedef struct tc_jam_fault {
  uint64_t sequence;  /* the frame's sequence number on this connection */
  uint32_t element;   /* its element ID (0 for a frame refused as malformed) */
  int32_t signal;     /* SIGSEGV, SIGBUS, SIGILL, SIGFPE; 0 otherwise */
  uint32_t kind;      /* tc_jam_end_t */
  uint32_t count;     /* abandoned or refused frames the receiver reported in all */
  int32_t status;     /* how the frame ended, as its call ends: TC_ERR_JAM_FAULT,
                         TC_ERR_JAM_TIMEOUT, TC_ERR_QUARANTINED, or the refusal's
                         reason (TC_ERR_UNKNOWN_PACKAGE, TC_ERR_UNKNOWN_ELEMENT,
                         TC_ERR_HASH_MISMATCH, ...; TC_ERR_REFUSED if it gave none) */
} tc_jam_fault_t;

/* The last abandoned or refused frame the receiver reported (reports arrive
 * with its credit reports). TC_ERR_INVALID_PARAM if there was none;
 * TC_ERR_IO if the peer has gone. tc_peer_last_fault_sized fills the first
 * size bytes of the struct (at least up to status's offset, 24: programs
 * built before status get no more); tc_peer_last_fault is that call with
 * the caller's own sizeof. */
tc_status_t tc_peer_last_fault_sized(tc_peer_t *peer, tc_jam_fault_t *fault, size_t size);
tc_status_t tc_peer_last_fault(tc_peer_t *peer, tc_jam_fault_t *fault);
#define tc_peer_last_fault(peer, fault) \
  tc_peer_last_fault_sized((peer), (fault), sizeof *(fault))

/* Waits until every frame sent to the peer has run on the receiver (which
 * reports it once idle for a few polls: the receiver must keep calling
 * tc_progress, or run its executor thread, meanwhile). Also answers the
 * receiver's requests to send evicted code again. */
tc_status_t tc_flush(tc_peer_t *peer, int timeout_ms);
/* (tc_flush returns TC_ERR_JAM_FAULT, once, when the receiver reported an
 * abandoned frame since the last tc_flush, or the refusal's status when it
 * reported a frame it refused: tc_peer_last_fault says which. It waits for
 * the frames queued for the peer too, and returns, once, the status that
 * made queued frames be dropped since the last tc_flush: the receiver
 * refused their image, or did not answer for it. It returns
 * TC_ERR_TIMED_OUT if the frames have not all run by timeout_ms, and
 * TC_ERR_IO if the peer has gone.) */
/* Closes the connection. On a sender's peer (tc_connect) the handle is
 * freed; on a receiver's (tc_context_peer) the handle stays valid, every
 * call on it returning TC_ERR_IO, until tc_context_destroy. */
void tc_peer_close(tc_peer_t *peer);

/* Progresses communication and, on a receiver, runs the frames that have
 * arrived. *executed (if not NULL) is set to the number run. */
tc_status_t tc_progress(tc_context_t *context, unsigned *executed);

/* The executor thread runs tc_progress until stopped, waiting between empty
 * polls as wait_mode says. While it runs, the context's other calls may be
 * made from any thread (they are serialised). Without it, the calls on a
 * context must not be made from two threads at once (as with a UCX worker
 * in SERIALIZED mode); start and stop it from the thread that makes them. */
tc_status_t tc_executor_start(tc_context_t *context);
tc_status_t tc_executor_stop(tc_context_t *context);

/* Sleeping waits (docs/runtime.md, "Sleeping waits"). Busy polling is
 * fastest on a core of its own; where processes share cores, a process
 * that polls takes the core from the peer it waits for. tc_wait sleeps
 * until something may have arrived for this context (a frame, a credit
 * report, a message), work of its own on the clock is due (a retry), or
 * timeout_ms passed, then returns TC_OK either way:
 * call tc_progress, which says what arrived. It never polls meanwhile. A
 * peer whose frames land by RDMA puts cannot wake it: while there is one,
 * it sleeps at most 1 ms at a time (it may return early, as poll(2) may).
 * TC_ERR_INVALID_PARAM from inside a running jam.
 *
 * The runtime's own waits (tc_call, tc_call_wait, tc_flush and the
 * executor thread) poll for about 50 us, then sleep the same way; with
 * wait_mode TC_WAIT_POLL, or the environment's TC_BUSY_POLL=1, they poll
 * until their deadline, as before (dedicated cores, lowest latency).
 *
 * For an event loop of the application's own: tc_context_fd gives a file
 * descriptor (epoll) that is readable when a message arrived; before
 * polling it, call tc_context_arm, which tells the context's peers that it
 * may sleep (so that their frames wake it) and returns 1 if the fd may be
 * polled (for at most *max_timeout_ms, -1: no limit, if not NULL), or 0 if
 * something arrived already: call tc_progress and arm again. The limit is
 * 1 ms where some peer cannot wake the fd, and otherwise when the context
 * has work on the clock (a connection or deployment to retry, a time
 * limit to enforce), which the tc_progress after it does. Only one
 * thread should poll a context's fd at a time. */
tc_status_t tc_wait(tc_context_t *context, int timeout_ms);
tc_status_t tc_context_fd(tc_context_t *context, int *fd);
int tc_context_arm(tc_context_t *context, int *max_timeout_ms);

/* Receiver: the peer that connected to this context with this number (the
 * one tc_jam_sender reports: 1, 2, ... in connection order), so the
 * receiver can send to it too. TC_ERR_INVALID_PARAM if there is none. The
 * handle stays valid until tc_context_destroy: once the peer has gone,
 * every call on it returns TC_ERR_IO (tc_peer_stats still reads it). */
tc_status_t tc_context_peer(tc_context_t *context, unsigned number, tc_peer_t **peer);

/* The mailbox mode in force: "code-cache" or "no-cache". */
const char *tc_mailbox_mode_name(const tc_context_t *context);

/* The wait the executor uses: "poll", "pause", "yield", "umwait", "mwaitx"
 * or "wfe". */
const char *tc_wait_mode_name(const tc_context_t *context);

/* Events: what went wrong, with the peer it concerns, for the application
 * to act on (each is also logged once and counted in the statistics).
 * Kept in a bounded queue per context (4096; events_lost counts the ones
 * that did not fit) until tc_poll_event takes them. */
typedef enum tc_event_kind {
  TC_EVENT_PEER_GONE = 1,       /* a connection ended: closed by its peer, broken, or the peer died */
  TC_EVENT_FRAME_REJECTED = 2,  /* receiver: a frame was dropped; status says why */
  TC_EVENT_JAM_ABANDONED = 3,   /* receiver: a jam faulted (signal) or ran past its limit */
  TC_EVENT_FAULT_REPORTED = 4,  /* sender: a receiver abandoned or refused one of our frames */
  TC_EVENT_DEPLOY_REFUSED = 5   /* sender: a peer refused a package deployed to it; status
                                   says why, the log names the reason (docs/deploying.md) */
} tc_event_kind_t;

typedef struct tc_event {
  tc_event_kind_t kind;
  unsigned peer;                /* the peer's number (tc_context_peer, tc_jam_sender) */
  tc_status_t status;           /* TC_ERR_IO, the frame's rejection, TC_ERR_JAM_FAULT, ... */
  uint32_t element;             /* frames and jams: the element */
  int32_t signal;               /* TC_EVENT_JAM_ABANDONED, _FAULT_REPORTED: the signal, or 0 */
  uint64_t sequence;            /* frames and jams: the frame's sequence */
} tc_event_t;

/* Takes the oldest event: 1 and *event set, 0 if there is none, or
 * TC_ERR_INVALID_PARAM. */
int tc_poll_event(tc_context_t *context, tc_event_t *event);

/* One peer's share of the statistics: what this side sent it and, for a
 * peer that sends to this side, what became of its frames. */
typedef struct tc_peer_stats {
  uint64_t frames_sent;       /* frames this side put into the peer's ring */
  uint64_t code_transfers;    /* images shipped to it ahead of their frames */
  uint64_t faults_reported;   /* of our frames, abandoned or refused there */
  uint64_t frames_executed;   /* its frames that ran here */
  uint64_t frames_rejected;   /* its frames dropped here (quarantined included) */
  uint64_t jams_abandoned;    /* its frames whose jam faulted or timed out here */
} tc_peer_stats_t;

tc_status_t tc_peer_stats(const tc_peer_t *peer, tc_peer_stats_t *stats);

typedef struct tc_stats {
  uint64_t frames_sent;
  uint64_t frames_executed_local;
  uint64_t frames_executed_injected;
  uint64_t frames_rejected;
  uint64_t credit_reports;
  uint64_t peers;
  uint64_t rieds_loaded;     /* pushed by peers */
  /* sender */
  uint64_t frames_sent_with_code;  /* injected frames that carried the image */
  uint64_t frames_sent_cached;     /* injected frames that named cached code */
  uint64_t code_bytes_sent;        /* image bytes those frames carried */
  uint64_t frames_resent;          /* cached frames sent again with code */
  /* receiver */
  uint64_t frames_executed_cached; /* of frames_executed_injected */
  uint64_t cache_installs;         /* images hashed, checked and installed */
  uint64_t cache_misses;           /* frames naming code not held: resend asked */
  uint64_t cache_evictions;
  uint64_t cache_hash_mismatches;  /* frames whose code did not hash to its claim */
  /* trust boundary (docs/security.md) */
  uint64_t auth_failures;          /* peers refused: wrong or missing key */
  uint64_t offers_refused;         /* authenticated peers whose offer was out of bounds */
  uint64_t messages_refused;       /* frames, credits and rieds refused outright: from
                                      an unauthenticated endpoint, outside the
                                      sender's window, oversized, or not accepted */
  uint64_t peers_rma;              /* connections whose frames travel by RMA ... */
  uint64_t peers_am;               /* ... or by active messages (RMA emulated) */
  /* containment (docs/containment.md) */
  uint64_t jams_faulted;           /* frames abandoned: the jam faulted */
  uint64_t jams_timed_out;         /* frames abandoned: past the time limit */
  uint64_t frames_quarantined;     /* frames refused: element quarantined for its peer,
                                      or its peer's address quarantined */
  uint64_t faults_reported;        /* sender: abandoned frames the receivers reported */
  /* images larger than a slot, shipped once ahead of their frames */
  uint64_t code_transfers;          /* sender: images shipped and installed */
  uint64_t code_transfers_received; /* receiver: images checked and installed */
  uint64_t events_lost;             /* events the queue had no room for (tc_poll_event) */
  /* calls (tc_call_start, tc_jam_return) */
  uint64_t calls_answered;          /* caller: calls whose answer arrived */
  uint64_t calls_failed;            /* caller: calls that ended otherwise */
  uint64_t replies_sent;            /* receiver: answers jams gave (tc_jam_return) */
  /* the hot path (docs/performance.md, "Direct stores") */
  uint64_t peers_direct;            /* of peers_rma: this side stores its frames straight
                                       into the peer's ring, which UCX maps here (shared
                                       memory), rather than putting them */
  uint64_t frames_coalesced;        /* sender: frames that left in one message with others
                                       (tc_peer_cork), or shared a slot with others in a
                                       bundle (tc_peer_aggregate) */
  /* quarantine by peer address (docs/containment.md) */
  uint64_t addresses_quarantined;   /* addresses (or hosts) whose abandoned frames passed
                                       their budget */
  uint64_t peers_quarantined;       /* connections refused: their address is quarantined */
  /* queues peers share (docs/security.md, "Shares of shared queues") */
  uint64_t shares_full;             /* places refused: the peer held its share of a queue
                                       all peers fill (code offers, answers, forwards,
                                       events), or the queue was full */
  uint64_t rendezvous_cancelled;    /* peers cut off: the bytes of a message they sent
                                       by rendezvous, or an answer sent to them so, did
                                       not move in time */
  /* before authentication (docs/security.md) */
  uint64_t connections_refused;     /* receiver: connections closed before their handshake:
                                       over max_startups or max_startups_per_address, or
                                       authenticated beyond max_peers */
  uint64_t handshakes_timed_out;    /* receiver: connections closed at the handshake timeout */
  /* jobs (docs/jobs.md) */
  uint64_t job_connections;         /* connections with ranks of the job made, in either
                                       role (to itself: one) */
  uint64_t job_crossings;           /* this side's connects to ranks refused because the
                                       pair kept the connection the other way */
  /* sleeping waits (tc_wait; docs/runtime.md, "Sleeping waits") */
  uint64_t sleeps;                  /* times a wait slept (or napped) rather than polled */
  uint64_t wakes_sent;              /* AmWake messages to peers found asleep after a store */
  uint64_t wakes_received;          /* AmWake messages taken from welcomed peers (a flood of
                                       them costs wakeups only; others are refused) */
  /* deployments (docs/deploying.md) */
  uint64_t deployments_received;    /* packages peers deployed here, loaded and linked */
  uint64_t deployments_refused;     /* deployments refused here: policy, signature, a file
                                       or an import that does not check out */
  uint64_t deployments_sent;        /* packages this side deployed to peers that took them */
  uint64_t deploy_bytes_sent;       /* bytes of files those deployments sent */
  /* many peers (docs/scaling.md) */
  uint64_t rings_cooled;            /* rings made cold: quiet a while, no longer polled
                                       every pass; their senders ring the doorbell */
  uint64_t rings_warmed;            /* cold rings polled every pass again: rung, found by
                                       the sweep, or sent to from this side */
  uint64_t rings_polled;            /* now: rings every pass polls (not a counter) */
  uint64_t ring_bytes;              /* now: bytes of this side's rings (not a counter) */
  uint64_t ring_bytes_resident;     /* now: of those, in memory (pages a sender wrote or
                                       the receiver read; not a counter) */
  /* payloads larger than a slot, sent ahead of their frames (docs/scaling.md) */
  uint64_t payloads_ahead_sent;       /* sent by this side */
  uint64_t payload_ahead_bytes_sent;  /* their bytes */
  uint64_t payloads_ahead_received;   /* received here whole, for frames to come */
  uint64_t payloads_ahead_refused;    /* refused here: past the sender's share or all
                                         senders', out of its window, malformed, or their
                                         frame waited past the time limit */
  uint64_t payloads_ahead_by_rma;     /* of payloads_ahead_sent: on the RMA endpoint
                                         (shared memory, CMA, RDMA), not the control one */
} tc_stats_t;

/* The context's counters. The struct grows at its end as counters are
 * added: tc_context_stats_sized fills the first size bytes of it (whole
 * counters; past the counters this library has, zeros), so a program built
 * against an older header is never written past, and one built against a
 * newer header reads zeros for what this library does not count.
 * tc_context_stats is that call with the caller's own sizeof. */
tc_status_t tc_context_stats_sized(const tc_context_t *context, tc_stats_t *stats, size_t size);
tc_status_t tc_context_stats(const tc_context_t *context, tc_stats_t *stats);
#define tc_context_stats(context, stats) \
  tc_context_stats_sized((context), (stats), sizeof *(stats))

#ifdef __cplusplus
}
#endif

#endif /* TWOCHAINS_TWOCHAINS_H */
