/* b64: a small base64 library, written the way many C libraries are: a
 * decode table built on first use, a static error string, and allocator
 * hooks kept in a static table. */
#ifndef B64_H
#define B64_H
#include <stddef.h>

typedef struct b64_allocator {
  void *(*alloc)(size_t);
  void (*release)(void *);
} b64_allocator;

size_t b64_encode(const unsigned char *in, size_t n, char *out);
/* Returns the decoded length, or (size_t)-1 and sets b64_last_error(). */
size_t b64_decode(const char *in, size_t n, unsigned char *out);
/* A decoded copy in memory from the allocator; release it with it. */
unsigned char *b64_decode_alloc(const char *in, size_t n, size_t *out_len);
const char *b64_last_error(void);
void b64_set_allocator(const b64_allocator *a);

#endif
