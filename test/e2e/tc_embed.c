/*===- tc_embed.c - Two-Chains on an application's own UCX worker ----------===
 *
 *   tc-embed PREFIX PORT N
 *
 * An application that uses UCX active messages itself: it creates its UCX
 * context and worker, registers its own handler (id 7), and sends itself
 * messages through an endpoint to its own worker address. It then creates
 * a Two-Chains receiver context on that worker, and a sender context (its
 * own, standalone) in the same process connects to it and sends N Local
 * frames, while the application keeps using its worker for its own
 * messages. After tc_context_destroy, the worker still serves the
 * application, and Two-Chains' message ids are free again.
 *===----------------------------------------------------------------------===*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <twochains/packages/stdlib.h>
#include <twochains/twochains.h>
#include <ucp/api/ucp.h>

static unsigned app_messages;

static ucs_status_t on_app(void *arg, const void *header, size_t header_length, void *data,
                           size_t length, const ucp_am_recv_param_t *param) {
  (void)arg, (void)header, (void)header_length, (void)data, (void)length, (void)param;
  ++app_messages;
  return UCS_OK;
}

static int app_send(ucp_worker_h worker, ucp_ep_h ep) {
  unsigned before = app_messages;
  uint64_t word = 42;
  ucp_request_param_t p = {0};
  ucs_status_ptr_t r = ucp_am_send_nbx(ep, 7, NULL, 0, &word, sizeof word, &p);
  if (UCS_PTR_IS_ERR(r))
    return 0;
  for (long k = 0; k < 100000000 && (r && ucp_request_check_status(r) == UCS_INPROGRESS); ++k)
    ucp_worker_progress(worker);
  if (r)
    ucp_request_free(r);
  for (long k = 0; k < 100000000 && app_messages == before; ++k)
    ucp_worker_progress(worker);
  return app_messages == before + 1;
}

static int fail(const char *what) {
  fprintf(stderr, "tc-embed: %s\n", what);
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 4)
    return 2;
  unsigned n = (unsigned)atoi(argv[3]);
  /* The application's UCX. */
  ucp_config_t *config;
  ucp_context_h ucp;
  ucp_worker_h worker;
  ucp_params_t up = {.field_mask = UCP_PARAM_FIELD_FEATURES, .features = UCP_FEATURE_AM};
  ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                            .thread_mode = UCS_THREAD_MODE_SINGLE};
  if (ucp_config_read(NULL, NULL, &config) != UCS_OK || ucp_init(&up, config, &ucp) != UCS_OK ||
      ucp_worker_create(ucp, &wp, &worker) != UCS_OK)
    return fail("the application's UCX");
  ucp_config_release(config);
  ucp_am_handler_param_t h = {.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID |
                                            UCP_AM_HANDLER_PARAM_FIELD_CB,
                              .id = 7, .cb = on_app};
  ucp_address_t *address;
  size_t address_size;
  if (ucp_worker_set_am_recv_handler(worker, &h) != UCS_OK ||
      ucp_worker_get_address(worker, &address, &address_size) != UCS_OK)
    return fail("the application's handler");
  ucp_ep_params_t ep_params = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
                               .address = address};
  ucp_ep_h self;
  if (ucp_ep_create(worker, &ep_params, &self) != UCS_OK || !app_send(worker, self))
    return fail("the application's own message, before");

  /* Two-Chains on it. */
  tc_package_t *pkg;
  if (stdlib_package_load(argv[1], TC_PACKAGE_SENDER | TC_PACKAGE_RECEIVER, &pkg) != TC_OK)
    return fail("stdlib");
  tc_context_params_t rp = {TC_CONTEXT_PARAMS_VERSION};
  rp.ucp_context = ucp;
  rp.ucp_worker = worker;
  tc_context_t *receiver, *sender;
  tc_context_params_t sp = {TC_CONTEXT_PARAMS_VERSION};
  if (tc_context_create(&rp, &receiver) != TC_OK || tc_context_add_package(receiver, pkg) ||
      tc_context_create(&sp, &sender) != TC_OK || tc_context_add_package(sender, pkg))
    return fail("contexts");
  uint16_t port;
  if (tc_listen(receiver, "127.0.0.1", (uint16_t)atoi(argv[2])) != TC_OK ||
      tc_listen_port(receiver, &port) != TC_OK || tc_executor_start(receiver) != TC_OK)
    return fail("listen");
  tc_peer_t *peer;
  if (tc_connect(sender, "127.0.0.1", port, 10000, &peer) != TC_OK)
    return fail("connect");
  int32_t sum[4] = {1, 2, 3, 4};
  for (unsigned i = 0; i < n; ++i) {
    tc_status_t st;
    while ((st = tc_send(peer, pkg, STDLIB_SERVER_SIDE_SUM, TC_SEND_LOCAL, sum, sizeof sum)) ==
           TC_ERR_NO_CREDIT)
      tc_progress(sender, NULL);
    if (st != TC_OK)
      return fail("send");
  }
  if (tc_flush(peer, 20000) != TC_OK)
    return fail("flush");
  tc_executor_stop(receiver);
  /* The application's own messages still work on the shared worker. */
  if (!app_send(worker, self))
    return fail("the application's own message, beside Two-Chains");
  tc_stats_t s;
  tc_context_stats(receiver, &s);
  printf("embedded receiver ran %llu frames on the application's worker\n",
         (unsigned long long)s.frames_executed_local);
  tc_peer_close(peer);
  tc_context_destroy(sender);
  tc_context_destroy(receiver);
  /* Still the application's: its messages work, and 0x7c01 is free again. */
  if (!app_send(worker, self))
    return fail("the application's own message, after");
  h.id = TC_AM_ID_FIRST;
  if (ucp_worker_set_am_recv_handler(worker, &h) != UCS_OK)
    return fail("the reserved ids were not given back");
  printf("the application's worker still serves it: %u of its own messages\n", app_messages);
  ucp_request_param_t cp = {0};
  ucs_status_ptr_t r = ucp_ep_close_nbx(self, &cp);
  while (r && !UCS_PTR_IS_ERR(r) && ucp_request_check_status(r) == UCS_INPROGRESS)
    ucp_worker_progress(worker);
  if (r && !UCS_PTR_IS_ERR(r))
    ucp_request_free(r);
  ucp_worker_release_address(worker, address);
  ucp_worker_destroy(worker);
  ucp_cleanup(ucp);
  tc_package_unload(pkg);
  return s.frames_executed_local == n ? 0 : 1;
}
