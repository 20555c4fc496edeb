/* job-connect-ucx: what job-connect's first all-to-all costs below
 * Two-Chains, in the same kind of job (bench/run-job-connect.sh):
 *   mpirun -np P job-connect-ucx
 * Every rank, at once, makes a UCX endpoint to every other rank and sends
 * it one active message, answered on the message's reply endpoint, until
 * it has every answer and has answered every rank: first with endpoints
 * made from worker addresses (exchanged by MPI_Allgather), then with
 * endpoints made by UCX's sockaddr connection establishment (a listener
 * per rank on loopback), as libtwochains makes its control endpoints.
 * Both with UCP_ERR_HANDLING_MODE_PEER. Then the same round of MPI
 * messages (Isend/Irecv to every rank), for reference. Rank 0 prints the
 * slowest rank's time of each. */
#include <arpa/inet.h>
#include <mpi.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucp/api/ucp.h>

enum { AmAsk = 1, AmAnswer = 2, MaxAddress = 4096 };

static ucp_worker_h worker;
static int asked, answered;
static ucp_ep_h *accepted;
static int accepted_count;

static void sent_free(ucs_status_ptr_t r) {
  if (UCS_PTR_IS_PTR(r))
    ucp_request_free(r);
}

static void send_am(ucp_ep_h ep, unsigned id) {
  static int one = 1;
  ucp_request_param_t p = {0};
  p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  p.flags = UCP_AM_SEND_FLAG_REPLY;
  sent_free(ucp_am_send_nbx(ep, id, NULL, 0, &one, sizeof one, &p));
}

static ucs_status_t on_ask(void *arg, const void *h, size_t hl, void *d, size_t l,
                           const ucp_am_recv_param_t *p) {
  (void)arg, (void)h, (void)hl, (void)d, (void)l;
  asked++;
  send_am(p->reply_ep, AmAnswer);
  return UCS_OK;
}

static ucs_status_t on_answer(void *arg, const void *h, size_t hl, void *d, size_t l,
                              const ucp_am_recv_param_t *p) {
  (void)arg, (void)h, (void)hl, (void)d, (void)l, (void)p;
  answered++;
  return UCS_OK;
}

static void on_error(void *arg, ucp_ep_h ep, ucs_status_t st) { (void)arg, (void)ep, (void)st; }

static void on_connection(ucp_conn_request_h request, void *arg) {
  (void)arg;
  ucp_ep_params_t p = {0};
  p.field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                 UCP_EP_PARAM_FIELD_ERR_HANDLER;
  p.conn_request = request;
  p.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  p.err_handler.cb = on_error;
  if (ucp_ep_create(worker, &p, &accepted[accepted_count]) == UCS_OK)
    accepted_count++;
}

/* One round: an endpoint to every rank, one message each way. */
static double round_of(int rank, int size, const char *addresses, const unsigned short *ports) {
  ucp_ep_h *eps = calloc(size, sizeof *eps);
  asked = answered = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int k = 1; k < size; k++) {
    int peer = (rank + k) % size;
    ucp_ep_params_t p = {0};
    struct sockaddr_in sa = {0};
    p.field_mask = UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
    p.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    p.err_handler.cb = on_error;
    if (ports) {
      sa.sin_family = AF_INET;
      sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      sa.sin_port = htons(ports[peer]);
      p.field_mask |= UCP_EP_PARAM_FIELD_SOCK_ADDR | UCP_EP_PARAM_FIELD_FLAGS;
      p.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
      p.sockaddr.addr = (struct sockaddr *)&sa;
      p.sockaddr.addrlen = sizeof sa;
    } else {
      p.field_mask |= UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
      p.address = (const ucp_address_t *)(addresses + (size_t)peer * MaxAddress);
    }
    if (ucp_ep_create(worker, &p, &eps[peer]) != UCS_OK) {
      fprintf(stderr, "job-connect-ucx: rank %d: cannot make an endpoint to rank %d\n", rank, peer);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    send_am(eps[peer], AmAsk);
  }
  while (answered < size - 1 || asked < size - 1)
    if (!ucp_worker_progress(worker))
      sched_yield();
  double t = MPI_Wtime() - t0;
  /* Endpoints stay open until every rank is done: a closed one would
   * fail the answers still on their way. */
  MPI_Request done;
  int flag = 0;
  MPI_Ibarrier(MPI_COMM_WORLD, &done);
  while (!flag) {
    ucp_worker_progress(worker);
    MPI_Test(&done, &flag, MPI_STATUS_IGNORE);
  }
  free(eps); /* left open: the worker's end closes them */
  return t;
}

static double mpi_round(int rank, int size) {
  int *out = calloc(size, sizeof(int)), *in = calloc(size, sizeof(int));
  MPI_Request *q = malloc(2 * (size_t)size * sizeof *q);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int k = 0; k < size; k++) {
    int peer = (rank + k) % size;
    MPI_Irecv(&in[peer], 1, MPI_INT, peer, 7, MPI_COMM_WORLD, &q[2 * k]);
    MPI_Isend(&out[peer], 1, MPI_INT, peer, 7, MPI_COMM_WORLD, &q[2 * k + 1]);
  }
  MPI_Waitall(2 * size, q, MPI_STATUSES_IGNORE);
  double t = MPI_Wtime() - t0;
  free(out), free(in), free(q);
  return t;
}

static ucp_worker_h make_worker(ucp_context_h *ucp) {
  ucp_params_t up = {0};
  up.field_mask = UCP_PARAM_FIELD_FEATURES;
  up.features = UCP_FEATURE_AM;
  ucp_worker_h w;
  ucp_worker_params_t wp = {0};
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wp.thread_mode = UCS_THREAD_MODE_SINGLE;
  if (ucp_init(&up, NULL, ucp) != UCS_OK || ucp_worker_create(*ucp, &wp, &w) != UCS_OK)
    MPI_Abort(MPI_COMM_WORLD, 1);
  ucp_am_handler_param_t h = {0};
  h.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB;
  h.id = AmAsk, h.cb = on_ask;
  ucp_worker_set_am_recv_handler(w, &h);
  h.id = AmAnswer, h.cb = on_answer;
  ucp_worker_set_am_recv_handler(w, &h);
  return w;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double t[3], worst[3];

  /* Endpoints from worker addresses. */
  ucp_context_h ucp;
  worker = make_worker(&ucp);
  ucp_address_t *address;
  size_t length;
  char mine[MaxAddress] = {0};
  if (ucp_worker_get_address(worker, &address, &length) != UCS_OK || length > MaxAddress)
    MPI_Abort(MPI_COMM_WORLD, 1);
  memcpy(mine, address, length);
  ucp_worker_release_address(worker, address);
  char *addresses = malloc((size_t)size * MaxAddress);
  MPI_Allgather(mine, MaxAddress, MPI_BYTE, addresses, MaxAddress, MPI_BYTE, MPI_COMM_WORLD);
  t[0] = round_of(rank, size, addresses, NULL);

  /* Endpoints by sockaddr, on a worker of their own. */
  ucp_context_h ucp2;
  worker = make_worker(&ucp2);
  accepted = calloc(size, sizeof *accepted);
  struct sockaddr_in sa = {0};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ucp_listener_params_t lp = {0};
  lp.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER;
  lp.sockaddr.addr = (struct sockaddr *)&sa;
  lp.sockaddr.addrlen = sizeof sa;
  lp.conn_handler.cb = on_connection;
  ucp_listener_h listener;
  ucp_listener_attr_t la = {0};
  la.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR;
  if (ucp_listener_create(worker, &lp, &listener) != UCS_OK ||
      ucp_listener_query(listener, &la) != UCS_OK)
    MPI_Abort(MPI_COMM_WORLD, 1);
  unsigned short port = ntohs(((struct sockaddr_in *)&la.sockaddr)->sin_port);
  unsigned short *ports = malloc((size_t)size * sizeof *ports);
  MPI_Allgather(&port, 1, MPI_UNSIGNED_SHORT, ports, 1, MPI_UNSIGNED_SHORT, MPI_COMM_WORLD);
  t[1] = round_of(rank, size, NULL, ports);

  t[2] = mpi_round(rank, size);
  MPI_Reduce(t, worst, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("job-connect-ucx: P=%d first round, an endpoint to every rank and one message each "
           "way: UCX from worker addresses %.3f s, UCX by sockaddr %.3f s, MPI (Isend/Irecv) "
           "%.3f s\n",
           size, worst[0], worst[1], worst[2]);
  MPI_Finalize();
  return 0;
}
