/* tc-crossing: two processes that call tc_connect on each other at the same
 * moment, neither progressing otherwise: both connects succeed, because
 * tc_connect answers the other's handshake while it waits for its own.
 * (Before, both waited for an answer the other never gave, and timed out.)
 *   tc-crossing <stdlib prefix> [rounds]
 * Prints "crossing: PASSED". */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <twochains/twochains.h>
#include <twochains/packages/stdlib.h>

static int side(const char *prefix, int to_other, int from_other, int rounds) {
  tc_package_t *pkg;
  if (stdlib_package_load(prefix, TC_PACKAGE_SENDER | TC_PACKAGE_RECEIVER, &pkg) != TC_OK)
    return 2;
  int failures = 0;
  for (int r = 0; r < rounds; r++) {
    tc_context_params_t p = {0};
    p.version = TC_CONTEXT_PARAMS_VERSION;
    tc_context_t *ctx;
    uint16_t port = 0, theirs = 0;
    if (tc_context_create(&p, &ctx) != TC_OK || tc_context_add_package(ctx, pkg) != TC_OK ||
        tc_listen(ctx, "127.0.0.1", 0) != TC_OK || tc_listen_port(ctx, &port) != TC_OK)
      return 2;
    /* Both learn the other's port, then connect at once. */
    if (write(to_other, &port, sizeof port) != sizeof port ||
        read(from_other, &theirs, sizeof theirs) != sizeof theirs)
      return 2;
    tc_peer_t *peer = NULL;
    tc_status_t st = tc_connect(ctx, "127.0.0.1", theirs, 20000, &peer);
    if (st != TC_OK) {
      fprintf(stderr, "round %d: tc_connect: %s\n", r, tc_status_string(st));
      failures++;
    }
    /* Done with this round only once both are (the other's connect may
     * still need this side's answers). */
    char done = 1;
    if (write(to_other, &done, 1) != 1)
      return 2;
    fcntl(from_other, F_SETFL, O_NONBLOCK);
    while (read(from_other, &done, 1) != 1)
      tc_progress(ctx, NULL);
    fcntl(from_other, F_SETFL, 0);
    if (peer)
      tc_peer_close(peer);
    tc_context_destroy(ctx);
  }
  tc_package_unload(pkg);
  return failures ? 1 : 0;
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  int rounds = argc > 2 ? atoi(argv[2]) : 5;
  int a[2], b[2];
  if (pipe(a) || pipe(b))
    return 2;
  pid_t child = fork();
  if (child == 0)
    _exit(side(argv[1], b[1], a[0], rounds));
  int mine = side(argv[1], a[1], b[0], rounds), status = 0;
  waitpid(child, &status, 0);
  if (mine || !WIFEXITED(status) || WEXITSTATUS(status)) {
    printf("crossing: FAILED\n");
    return 1;
  }
  printf("crossing: PASSED\n");
  return 0;
}
