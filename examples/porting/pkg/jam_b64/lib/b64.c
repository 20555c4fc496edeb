#include "b64.h"

#include <stdlib.h>
#include <string.h>

static const char alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static unsigned char decode_table[256]; /* bss: built on first use */
static int table_ready;
static const char *last_error = "no error";
static b64_allocator allocator = {malloc, free}; /* outside addresses in data */

static void build_table(void) {
  memset(decode_table, 0xff, sizeof decode_table);
  for (int i = 0; i < 64; ++i)
    decode_table[(unsigned char)alphabet[i]] = (unsigned char)i;
  table_ready = 1;
}

size_t b64_encode(const unsigned char *in, size_t n, char *out) {
  size_t o = 0;
  for (size_t i = 0; i < n; i += 3) {
    unsigned v = (unsigned)in[i] << 16;
    if (i + 1 < n) v |= (unsigned)in[i + 1] << 8;
    if (i + 2 < n) v |= in[i + 2];
    out[o++] = alphabet[v >> 18 & 63];
    out[o++] = alphabet[v >> 12 & 63];
    out[o++] = i + 1 < n ? alphabet[v >> 6 & 63] : '=';
    out[o++] = i + 2 < n ? alphabet[v & 63] : '=';
  }
  return o;
}

size_t b64_decode(const char *in, size_t n, unsigned char *out) {
  if (!table_ready)
    build_table();
  if (n % 4) {
    last_error = "length is not a multiple of 4";
    return (size_t)-1;
  }
  size_t o = 0;
  for (size_t i = 0; i < n; i += 4) {
    unsigned v = 0, pad = 0;
    for (int k = 0; k < 4; ++k) {
      unsigned char c = (unsigned char)in[i + k];
      if (c == '=' && i + 4 == n && k >= 2) {
        ++pad;
        v <<= 6;
        continue;
      }
      if (decode_table[c] == 0xff) {
        last_error = "not a base64 character";
        return (size_t)-1;
      }
      v = v << 6 | decode_table[c];
    }
    out[o++] = (unsigned char)(v >> 16);
    if (pad < 2) out[o++] = (unsigned char)(v >> 8);
    if (pad < 1) out[o++] = (unsigned char)v;
  }
  last_error = "no error";
  return o;
}

unsigned char *b64_decode_alloc(const char *in, size_t n, size_t *out_len) {
  unsigned char *out = allocator.alloc(n / 4 * 3 + 1);
  if (!out) {
    last_error = "out of memory";
    return NULL;
  }
  *out_len = b64_decode(in, n, out);
  if (*out_len == (size_t)-1) {
    allocator.release(out);
    return NULL;
  }
  return out;
}

const char *b64_last_error(void) { return last_error; }

void b64_set_allocator(const b64_allocator *a) { allocator = *a; }
