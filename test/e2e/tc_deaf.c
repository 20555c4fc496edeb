/*===- tc_deaf.c - A receiver that stops reading, and its sender ---------===*
 *
 *   tc-deaf PREFIX
 *
 * Two contexts in one process over TCP (run with UCX_TLS=tcp). The
 * receiver offers a large window (64 MiB of slots), answers the handshake,
 * and is never progressed again: it reads nothing more from its socket.
 * The sender sends 60 KiB frames into the window until the sockets are
 * full. A send UCX cannot complete must not wait for ever: after a bounded
 * while the peer is failed and tc_send says TC_ERR_IO (docs/runtime.md,
 * "Sending"). Prints what happened; exits 0 only then.
 *
 *===----------------------------------------------------------------------===*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <twochains/packages/stdlib.h>

static tc_context_t *receiver;
static volatile int connected;

static void *answer_handshake(void *unused) {
  (void)unused;
  while (!connected)
    tc_progress(receiver, NULL);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 2)
    return fprintf(stderr, "usage: tc-deaf PREFIX\n"), 2;
  tc_package_t *rpkg, *spkg;
  tc_context_t *sender;
  tc_context_params_t rp = {TC_CONTEXT_PARAMS_VERSION, 1024, 65536, 256};
  tc_context_params_t sp = {TC_CONTEXT_PARAMS_VERSION, 64, 4096, 16};
  if (stdlib_package_load(argv[1], TC_PACKAGE_RECEIVER, &rpkg) != TC_OK ||
      stdlib_package_load(argv[1], TC_PACKAGE_SENDER, &spkg) != TC_OK ||
      tc_context_create(&rp, &receiver) != TC_OK || tc_context_create(&sp, &sender) != TC_OK ||
      tc_context_add_package(receiver, rpkg) != TC_OK ||
      tc_context_add_package(sender, spkg) != TC_OK)
    return fprintf(stderr, "tc-deaf: cannot set up\n"), 1;
  srand((unsigned)time(NULL) ^ (unsigned)getpid());
  uint16_t port = (uint16_t)(20000 + rand() % 11000);
  if (tc_listen(receiver, "127.0.0.1", port) != TC_OK)
    return fprintf(stderr, "tc-deaf: cannot listen on %u\n", port), 1;
  pthread_t t;
  pthread_create(&t, NULL, answer_handshake, NULL);
  tc_peer_t *peer;
  tc_status_t st = tc_connect(sender, "127.0.0.1", port, 20000, &peer);
  connected = 1;
  pthread_join(t, NULL);
  if (st != TC_OK)
    return fprintf(stderr, "tc-deaf: cannot connect: %s\n", tc_status_string(st)), 1;

  /* From here on the receiver reads nothing. */
  size_t size = 60000;
  int32_t *payload = calloc(size / sizeof(int32_t), sizeof(int32_t));
  unsigned sent = 0;
  while ((st = tc_send(peer, spkg, STDLIB_SERVER_SIDE_SUM, TC_SEND_LOCAL, payload, size)) ==
         TC_OK)
    sent++;
  printf("tc-deaf: %u frames of %zu bytes sent, then: %s\n", sent, size, tc_status_string(st));
  free(payload);
  tc_peer_close(peer);
  tc_context_destroy(sender);
  tc_context_destroy(receiver);
  tc_package_unload(spkg);
  tc_package_unload(rpkg);
  return st == TC_ERR_IO ? 0 : 1;
}
