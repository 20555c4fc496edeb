/* Shared by the jams that reply: sends `length` bytes at `data` back to the
 * requester's inbox at `offset`, through jam deliver. */
#ifndef STDLIB_REPLY_H
#define STDLIB_REPLY_H
#include <stdint.h>
#include <string.h>
#include <twochains/jam.h>

#define STDLIB_REPLY_MAX 256

static inline int stdlib_reply(tc_jam_ctx_t *ctx, uint64_t offset, const void *data,
                               uint32_t length) {
  struct { uint64_t offset; uint32_t length; uint32_t reserved; uint8_t data[STDLIB_REPLY_MAX]; } r;
  if (length > STDLIB_REPLY_MAX)
    return -1;
  r.offset = offset;
  r.length = length;
  r.reserved = 0;
  memcpy(r.data, data, length);
  return tc_jam_reply(ctx, "deliver", &r, 16 + (size_t)length);
}
#endif
