/*===- twochains/jam.h - What a jam source includes -------------------------===
 *
 * A jam is one C source file, jam_<name>.amc, built with the Two-Chains
 * plugin. It defines
 *
 *   void <name>_main(tc_jam_ctx_t *ctx, void *payload, size_t payload_size);
 *       runs on the receiver when the message arrives (required)
 *
 *   size_t <name>_payload_size(const ARGS *args);
 *   size_t <name>_payload_init(const ARGS *args, void *payload);
 *       run on the sender: an upper bound of the payload for these
 *       arguments, and the code that writes it, returning the bytes written
 *       (optional, both or neither; ARGS is any type the jam declares)
 *
 * A function with another name takes a role with TC_JAM_ENTRY,
 * TC_JAM_PAYLOAD_SIZE or TC_JAM_PAYLOAD_INIT. See docs/writing-jams.md.
 *
 *===----------------------------------------------------------------------===*/
#ifndef TWOCHAINS_JAM_H
#define TWOCHAINS_JAM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What the receiver's runtime hands a running jam. Opaque to the jam. */
typedef struct tc_jam_ctx tc_jam_ctx_t;

/* What a running jam may call on the receiver (libtwochains provides them;
 * jams reach them through their import tables like any outside function).
 *
 * tc_jam_reply sends element `element` (by name) of the jam's own package
 * back to the process that sent this frame, as a Local Function frame with
 * this payload; the sender runs it when it calls tc_progress. It never
 * waits for the other side: while the sender's ring is full the frame is
 * queued (up to 4096 frames and 4 MiB a peer) and sent, in order, as credits return.
 * Returns 0, or a negative tc_status_t (TC_ERR_NO_CREDIT, at once, if the
 * queue is full too; TC_ERR_UNKNOWN_ELEMENT; TC_ERR_TOO_LARGE). */
int tc_jam_reply(tc_jam_ctx_t *ctx, const char *element, const void *payload,
                 size_t payload_size);
/* How tc_jam_reply_mode sends: the values of tc_send_mode_t
 * (twochains/twochains.h, which a jam does not include). */
enum {
  TC_JAM_SEND_LOCAL = 1,        /* TC_SEND_LOCAL: the sender runs its own copy */
  TC_JAM_SEND_INJECTED = 2,     /* TC_SEND_INJECTED: this side's code runs there */
  TC_JAM_SEND_INJECTED_FULL = 3 /* TC_SEND_INJECTED_FULL: the code in every frame */
};
/* tc_jam_reply_mode is tc_jam_reply in another mode: with
 * TC_JAM_SEND_INJECTED the reply runs the code of this side's package on
 * the sender, as an injected frame (named by hash where the sender's code
 * cache holds it; an image too large for a slot beside its payload is
 * shipped ahead once, while the reply and the frames after it to that
 * process wait in the queue: never the jam). Same returns as tc_jam_reply,
 * and TC_ERR_INVALID_PARAM for another mode, TC_ERR_NO_ISA_IMAGE when the
 * package has no image for the sender's instruction set; a reply whose
 * image the sender refuses is dropped, and counted, there and here. */
int tc_jam_reply_mode(tc_jam_ctx_t *ctx, const char *element, int mode, const void *payload,
                      size_t payload_size);
/* tc_jam_forward sends element `element` (by name) of the jam's own package
 * onward, as a Local Function frame, to the Two-Chains process listening at
 * address:port, if the receiver's forward_allow list names it. It never
 * waits: the connection is made in the background at first use (and kept),
 * while frames to it wait as tc_jam_forward_rank's do. Same returns as
 * tc_jam_reply, TC_ERR_INVALID_PARAM if the list does not name it, and
 * TC_ERR_IO once the connection has failed. */
int tc_jam_forward(tc_jam_ctx_t *ctx, const char *address, unsigned port,
                   const char *element, const void *payload, size_t payload_size);
/* tc_jam_return answers the frame being run, if it came from tc_call (or
 * tc_call_start): these bytes (at most TC_CALL_MAX_REPLY, 1 MiB) become the
 * caller's reply. It never waits: the answer travels as a message on the
 * connection, while the caller's answers in flight stay under 1024 and
 * 4 MiB (else TC_ERR_NO_CREDIT, at once, and the caller's wait times out).
 * Returns 0; TC_ERR_INVALID_PARAM if this frame was answered already;
 * TC_ERR_TOO_LARGE (the caller is told so); TC_ERR_IO if the caller is
 * gone. A frame that was not a call may be answered too: the sender drops
 * the answer. */
int tc_jam_return(tc_jam_ctx_t *ctx, const void *reply, size_t reply_size);
/* Who sent the frame being run: a number the receiver gives each connected
 * process (1, 2, ... in the order they connected; the same process keeps
 * its number for the connection's life). */
unsigned tc_jam_sender(const tc_jam_ctx_t *ctx);
/* Jobs (twochains.h, tc_job_join): the rank of the process that sent the
 * frame being run, or TC_JAM_NO_RANK if it is not of this receiver's job;
 * this receiver's own rank and the job's size (TC_JAM_NO_RANK, 0 outside
 * a job). */
#define TC_JAM_NO_RANK 0xffffffffu
unsigned tc_jam_sender_rank(const tc_jam_ctx_t *ctx);
unsigned tc_jam_job_rank(const tc_jam_ctx_t *ctx);
unsigned tc_jam_job_size(const tc_jam_ctx_t *ctx);
/* Sends element `element` of the jam's own package to rank `rank` of the
 * job (this one included), as a Local (TC_JAM_SEND_LOCAL) or Injected
 * (TC_JAM_SEND_INJECTED) frame. It never waits: a rank not connected
 * yet is connected in the background while its frames wait (bounded, with
 * a share for the frames each sender's jams forward). Returns 0, or a
 * negative tc_status_t: TC_ERR_NO_CREDIT (the queue is full),
 * TC_ERR_UNKNOWN_ELEMENT, TC_ERR_TOO_LARGE, TC_ERR_INVALID_PARAM (no such
 * rank, or no job), TC_ERR_IO (the rank has gone). */
int tc_jam_forward_rank(tc_jam_ctx_t *ctx, unsigned rank, const char *element, int mode,
                        const void *payload, size_t payload_size);
/* The sequence number of the frame being run, counted per sender. */
unsigned long long tc_jam_sequence(const tc_jam_ctx_t *ctx);

/* The role attributes exist only while the plugin is loaded; elsewhere
 * (an IDE, a plain compile of the sender) the macros expand to nothing and
 * the canonical names still apply. */
#if defined(__has_attribute)
#if __has_attribute(jam_entry)
#define TC_JAM_ENTRY __attribute__((jam_entry))
#define TC_JAM_PAYLOAD_SIZE __attribute__((jam_payload_size))
#define TC_JAM_PAYLOAD_INIT __attribute__((jam_payload_init))
#endif
#endif
#ifndef TC_JAM_ENTRY
#define TC_JAM_ENTRY
#define TC_JAM_PAYLOAD_SIZE
#define TC_JAM_PAYLOAD_INIT
#endif

#ifdef __cplusplus
}
#endif

#endif /* TWOCHAINS_JAM_H */
