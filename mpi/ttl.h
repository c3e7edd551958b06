//go:build mpi

// The C side of package mpi: the binding (binding.c), the hot collectives
// (coll.c) and the data network's point-to-point path (datanet.c). Go calls
// only what is declared here; no MPI macro crosses into Go, so the same Go
// builds against Open MPI (handles are pointers) and MPICH (integers).

#ifndef TTL_H
#define TTL_H

#include <mpi.h>
#include <stdint.h>

// TTL_ENOMEM is returned where an MPI error code would be when a C
// allocation failed (MPI's codes are never negative).
#define TTL_ENOMEM (-1)

// ---- binding.c

// ttl_out holds what calls return through pointers, in C memory: a Go
// variable whose address cgo passes escapes to the heap, one allocation a
// call. Every call comes from the one MPI thread, so one is enough.
typedef struct {
	int done, source, flag, count, sum;
} ttl_out;
extern ttl_out ttl_res;

MPI_Comm ttl_world(void);
int ttl_any_source(void);
int ttl_init(void);
int ttl_finalize(void);
int ttl_error_string(int code, char *buf);
int ttl_rank(MPI_Comm c);
int ttl_size(MPI_Comm c);
int ttl_barrier(MPI_Comm c);
int ttl_allreduce_int(MPI_Comm c, int x);
int ttl_comm_dup(MPI_Comm c, MPI_Comm *d);
int ttl_comm_create_group(MPI_Comm c, int n, const int *ranks, int tag, MPI_Comm *d);
int ttl_test(MPI_Request *r, int spins);
int ttl_cancel(MPI_Request *r);
int ttl_iallgather(void *send, int size, void *recv, MPI_Comm c, MPI_Request *r);
int ttl_isend(void *buf, int n, int dest, int tag, MPI_Comm c, MPI_Request *r);
int ttl_irecv(void *buf, int n, int source, int tag, MPI_Comm c, MPI_Request *r);
int ttl_iprobe(MPI_Comm c, int source, int tag);
int ttl_win_allocate(MPI_Aint n, MPI_Comm c, void **base, MPI_Win *w);
int ttl_win_free(MPI_Win *w);
int ttl_get(void *dst, int n, int rank, MPI_Aint disp, MPI_Win w);
int ttl_put(void *src, int n, int rank, MPI_Aint disp, MPI_Win w);

// ---- coll.c

#define TTL_RANKS 64 // the most ranks: a PAPERS program has at most lpt.MaxPEs

// The hot allreduce's operators, by name: package mpi's ops table maps
// every papers.Op onto one of them (TestOps checks it covers them all).
enum ttl_op { TTL_BARRIER = -1, TTL_SUM, TTL_PRODUCT, TTL_MIN, TTL_MAX, TTL_AND, TTL_OR, TTL_XOR };

// A rank's line in its node's window: what it writes (its arrival and
// operands) and, apart, what it writes as its node's leader.
typedef struct {
	uint64_t arrive;
	uint64_t value[4];
	char pad[24];
	uint64_t release;
	uint64_t result[4];
	char pad2[24];
} ttl_line;

typedef struct {
	ttl_line *line[TTL_RANKS]; // the node's lines, by node-local rank
	int self;                // node-local rank
	int yield;               // yield at every poll (oversubscribed), else after 64
	// The epoch's configuration: this node's participants (node-local
	// ranks, in PE order), its leader, and the leaders' ranks in comm.
	int nlocal, local[TTL_RANKS], leader, flat;
	MPI_Comm comm;
	int m, me, peer[TTL_RANKS];
	// The operation in flight.
	uint64_t ticket, res;
	int done;
	int slot, op, w, phase, round, cnt;
	MPI_Request req[2]; // the round's receive and send
	uint64_t vals[TTL_RANKS], sbuf[TTL_RANKS], rbuf[TTL_RANKS];
} ttl_coll;

uint64_t ttl_combine(int op, uint64_t a, uint64_t b);
int ttl_coll_open(MPI_Comm world, int per, ttl_coll **c, MPI_Comm *node, MPI_Win *win, int *nodeof, int *localof);
void ttl_coll_start(ttl_coll *c, uint64_t ticket, int epoch, int op, int w, uint64_t x);
int ttl_coll_poll(ttl_coll *c, int spins);
void ttl_coll_abandon(ttl_coll *c);

// ---- datanet.c

enum { DN_RECV = 16, DN_SEND = 64, DN_SMALL = 64, DN_NONE = -1, DN_ERR = -2 };

// The C side of a PE's data network. Go holds it as an integer: C memory,
// which the cgo pointer checks would otherwise look up on every call.
typedef struct {
	MPI_Comm comm;
	int pkt;                      // bytes per buffer
	char *rbuf[2], *sbuf, *out;   // receive and send rings; out: the packet to send
	char small[DN_SMALL];         // the data of a small get or put
	MPI_Request recv[2][DN_RECV]; // persistent, started in ring order from head
	int head[2];
	int src[2]; // the sender of a completed head
	// done: the head receive has completed, not yet taken (Go takes it);
	// taken: Go has it, restart it at the next call; fresh: a call for
	// the other network, or a spin, tested it just now and found nothing.
	char done[2], taken[2], fresh[2];
	MPI_Request send[DN_SEND];
	int next;
	int err; // the MPI error of a call that returned DN_ERR
} ttl_dn;

int ttl_dn_new(MPI_Comm c, int pkt, uintptr_t *h);
ttl_dn *ttl_dn_fields(uintptr_t h);
int ttl_dn_send(uintptr_t h, int n, int dst, int tag);
int ttl_dn_test(uintptr_t h, int net);
int ttl_dn_spin(uintptr_t h, int n);
int ttl_dn_nap(uintptr_t h, int us);
int ttl_dn_pending(uintptr_t h);
void ttl_dn_close(uintptr_t h);
int ttl_dn_get(uintptr_t h, int n, int rank, MPI_Aint disp, MPI_Win w);
int ttl_dn_put(uintptr_t h, int n, int rank, MPI_Aint disp, MPI_Win w);
int ttl_node_all(MPI_Comm c, int *all);
int ttl_dn_shared(MPI_Aint n, MPI_Comm c, void **base, MPI_Win *w);
long ttl_cpus(void);

#endif
