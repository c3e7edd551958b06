//go:build mpi

// The hot collectives (coll.go says what they are and why they are C).

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ttl.h"

uint64_t ttl_combine(int op, uint64_t a, uint64_t b) {
	switch (op) {
	case TTL_SUM: return a + b;
	case TTL_PRODUCT: return a * b;
	case TTL_MIN: return a < b ? a : b;
	case TTL_MAX: return a > b ? a : b;
	case TTL_AND: return a & b;
	case TTL_OR: return a | b;
	case TTL_XOR: return a ^ b;
	}
	return 0; // a barrier carries nothing
}

long ttl_cpus(void) {
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? n : 1;
}

static uint64_t ttl_mask(int w) { return w >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << w) - 1; }

// ttl_coll_open splits world into nodes (those that share memory or, with
// per > 0, runs of per of them), allocates the node's window and returns the
// node of every world rank (its lowest world rank) and each rank's
// node-local rank, with *cp the collectives' state (C memory: MPI keeps
// the buffers of the leaders' messages).
int ttl_coll_open(MPI_Comm world, int per, ttl_coll **cp, MPI_Comm *node, MPI_Win *win, int *nodeof, int *localof) {
	ttl_coll *c = *cp = calloc(1, sizeof *c);
	if (c == NULL) return TTL_ENOMEM;
	int rank, err, shared, nn;
	MPI_Comm_rank(world, &rank);
	MPI_Comm sh;
	if ((err = MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &sh)) != MPI_SUCCESS) return err;
	MPI_Comm_size(sh, &shared);
	c->yield = shared > ttl_cpus(); // as MPI's mpi_yield_when_idle when oversubscribed
	if (per > 0) {
		int r;
		MPI_Comm_rank(sh, &r);
		err = MPI_Comm_split(sh, r / per, 0, node);
		MPI_Comm_free(&sh);
		if (err != MPI_SUCCESS) return err;
	} else {
		*node = sh;
	}
	if ((err = MPI_Comm_set_errhandler(*node, MPI_ERRORS_RETURN)) != MPI_SUCCESS) return err;
	MPI_Comm_rank(*node, &c->self);
	MPI_Comm_size(*node, &nn);
	ttl_line *mine;
	if ((err = MPI_Win_allocate_shared(sizeof(ttl_line), 128, MPI_INFO_NULL, *node, &mine, win)) != MPI_SUCCESS) return err;
	if ((err = MPI_Win_set_errhandler(*win, MPI_ERRORS_RETURN)) != MPI_SUCCESS) return err;
	memset(mine, 0, sizeof *mine);
	for (int i = 0; i < nn; i++) {
		MPI_Aint size;
		int unit;
		if ((err = MPI_Win_shared_query(*win, i, &size, &unit, &c->line[i])) != MPI_SUCCESS) return err;
	}
	int id[2] = {rank, c->self};
	if ((err = MPI_Allreduce(&rank, &id[0], 1, MPI_INT, MPI_MIN, *node)) != MPI_SUCCESS) return err;
	int all[2 * TTL_RANKS];
	if ((err = MPI_Allgather(id, 2, MPI_INT, all, 2, MPI_INT, world)) != MPI_SUCCESS) return err;
	int n;
	MPI_Comm_size(world, &n);
	for (int k = 0; k < n; k++) nodeof[k] = all[2 * k], localof[k] = all[2 * k + 1];
	c->req[0] = c->req[1] = MPI_REQUEST_NULL;
	return MPI_SUCCESS; // the allgather came after every line was zeroed
}

void ttl_coll_start(ttl_coll *c, uint64_t ticket, int epoch, int op, int w, uint64_t x) {
	c->ticket = ticket, c->op = op, c->w = w, c->phase = 0;
	c->slot = (int)(ticket & 1) | (epoch & 1) << 1;
	ttl_line *l = c->line[c->self];
	__atomic_store_n(&l->value[c->slot], x & ttl_mask(w), __ATOMIC_RELAXED);
	__atomic_store_n(&l->arrive, ticket, __ATOMIC_RELEASE);
}

static int ttl_arrived(ttl_coll *c) {
	for (int i = 0; i < c->nlocal; i++)
		if (__atomic_load_n(&c->line[c->local[i]]->arrive, __ATOMIC_ACQUIRE) < c->ticket) return 0;
	return 1;
}

static uint64_t ttl_fold_node(ttl_coll *c) {
	uint64_t a = __atomic_load_n(&c->line[c->local[0]]->value[c->slot], __ATOMIC_RELAXED);
	for (int i = 1; i < c->nlocal; i++)
		a = ttl_combine(c->op, a, __atomic_load_n(&c->line[c->local[i]]->value[c->slot], __ATOMIC_RELAXED));
	return a;
}

// ttl_leader_step advances a leader's operation; *done when its node is
// released.
static int ttl_leader_step(ttl_coll *c, int *done) {
	int err;
	for (;;) switch (c->phase) {
	case 0: // the node's arrivals
		if (!ttl_arrived(c)) return MPI_SUCCESS;
		c->vals[c->me] = ttl_fold_node(c);
		c->round = 0, c->phase = 1;
		break;
	case 1: { // post a round of Bruck's allgather, or finish
		int m = c->m, dist = 1 << c->round;
		if (dist >= m) {
			uint64_t a = c->vals[0];
			for (int i = 1; i < m; i++) a = ttl_combine(c->op, a, c->vals[i]);
			c->res = a & ttl_mask(c->w);
			ttl_line *l = c->line[c->self];
			__atomic_store_n(&l->result[c->slot], c->res, __ATOMIC_RELAXED);
			__atomic_store_n(&l->release, c->ticket, __ATOMIC_RELEASE);
			*done = 1;
			return MPI_SUCCESS;
		}
		c->cnt = dist < m - dist ? dist : m - dist;
		for (int j = 0; j < c->cnt; j++) c->sbuf[j] = c->vals[(c->me + j) % m];
		int bytes = c->op < 0 ? 0 : c->cnt * 8, tag = 100 + c->round;
		if ((err = MPI_Irecv(c->rbuf, bytes, MPI_BYTE, c->peer[(c->me + dist) % m], tag, c->comm, &c->req[0])) != MPI_SUCCESS) return err;
		if ((err = MPI_Isend(c->sbuf, bytes, MPI_BYTE, c->peer[(c->me - dist + m) % m], tag, c->comm, &c->req[1])) != MPI_SUCCESS) return err;
		c->phase = 2;
		break;
	}
	case 2: { // the round's messages
		int d = 0;
		MPI_Status st[2]; // not MPI_STATUSES_IGNORE: GCC 12 takes MPICH's for an empty array
		if ((err = MPI_Testall(2, c->req, &d, st)) != MPI_SUCCESS || !d) return err;
		int m = c->m, dist = 1 << c->round;
		for (int j = 0; j < c->cnt; j++) c->vals[(c->me + dist + j) % m] = c->rbuf[j];
		c->round++, c->phase = 1;
		break;
	}
	}
}

// ttl_coll_poll polls the operation in flight up to spins times; c->done
// when it completed, its result in c->res.
int ttl_coll_poll(ttl_coll *c, int spins) {
	int *done = &c->done;
	*done = 0;
	for (int i = 1; i <= spins; i++) {
		if (c->flat) {
			if (ttl_arrived(c)) {
				c->res = ttl_fold_node(c) & ttl_mask(c->w);
				*done = 1;
				return MPI_SUCCESS;
			}
		} else if (c->self != c->leader) {
			ttl_line *l = c->line[c->leader];
			if (__atomic_load_n(&l->release, __ATOMIC_ACQUIRE) >= c->ticket) {
				c->res = __atomic_load_n(&l->result[c->slot], __ATOMIC_RELAXED);
				*done = 1;
				return MPI_SUCCESS;
			}
		} else {
			int err = ttl_leader_step(c, done);
			if (err != MPI_SUCCESS || *done) return err;
		}
#ifdef OPEN_MPI
		// A leader waiting for the network leaves yielding to Open MPI's
		// progress, which yields where it finds the node oversubscribed
		// (mpi_yield_when_idle): one more yield of its own doubles the
		// cost of a round. MPICH's progress never yields, so there the
		// leader yields as every other waiter does.
		if (c->phase == 2) continue;
#endif
		// Where every rank has a CPU the one awaited is likely running:
		// spin a little for it, then give the CPU to whoever may need it
		// (a loaded machine's other work; yielding every 64 polls instead
		// left a 2-rank barrier up to 1.2× MPI_Barrier here, alternating).
		if (c->yield || i > 64) sched_yield();
	}
	return MPI_SUCCESS;
}

// ttl_coll_abandon drops the operation in flight (an interrupt cut it
// short): a receive still posted is cancelled, so that it never writes
// into the buffer the next operation uses; a send is left to complete
// into the abandoned communicator.
void ttl_coll_abandon(ttl_coll *c) {
	if (c->req[0] != MPI_REQUEST_NULL) {
		MPI_Cancel(&c->req[0]);
		MPI_Wait(&c->req[0], MPI_STATUS_IGNORE);
	}
	if (c->req[1] != MPI_REQUEST_NULL) MPI_Request_free(&c->req[1]);
	c->phase = 0;
}
