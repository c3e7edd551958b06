//go:build mpi

package mpi

// The engine's hot collectives — barrier, the split-phase barrier and
// allreduce of one integer — are this file's own, in C, rather than MPI's
// nonblocking ones: OpenMPI's MPI_Ibarrier polled by MPI_Test costs more
// than the blocking MPI_Barrier the anchor runs (libnbc's schedule), and
// the blocking call cannot be abandoned when a PE stops. These are polled
// with the engine's deadline like every other wait (docs/mpi.md, "The hot
// collectives").
//
// On a node, ranks meet in shared memory (MPI_Win_allocate_shared over
// MPI_COMM_TYPE_SHARED): each rank has a line of its own where it writes
// its operand and then its arrival, the operation's ticket (the engine's:
// it grows with every operation and every epoch, the same on every
// participant); an operation completes for a rank that has seen every
// participant's arrival reach the ticket. Operands are kept by slot, the
// ticket's parity and the epoch's, so that a rank one operation ahead, or
// one epoch ahead while another settles the collective an interrupt found
// in flight, never overwrites an operand still to be read. Across nodes
// the lowest participant of each node leads it: it waits for its node's
// arrivals, exchanges the node's partial result with the other leaders
// (Bruck's allgather, MPI_Isend/MPI_Irecv on the epoch's communicator,
// polled by MPI_Testall), folds them in node order and releases its node
// with the result. Completion anywhere thus implies
// that every participant joined, as on the board.

/*
#cgo pkg-config: ompi-c
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TTL_MAX 64

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
	ttl_line *line[TTL_MAX]; // the node's lines, by node-local rank
	int self;                // node-local rank
	int yield;               // yield at every poll (oversubscribed), else after 64
	// The epoch's configuration: this node's participants (node-local
	// ranks, in PE order), its leader, and the leaders' ranks in comm.
	int nlocal, local[TTL_MAX], leader, flat;
	MPI_Comm comm;
	int m, me, peer[TTL_MAX];
	// The operation in flight.
	uint64_t ticket, res;
	int done;
	int slot, op, w, phase, round, cnt;
	MPI_Request req[2]; // the round's receive and send
	uint64_t vals[TTL_MAX], sbuf[TTL_MAX], rbuf[TTL_MAX];
} ttl_coll;

static uint64_t ttl_combine(int op, uint64_t a, uint64_t b) {
	switch (op) {
	case 0: return a + b;
	case 1: return a * b;
	case 2: return a < b ? a : b;
	case 3: return a > b ? a : b;
	case 4: return a & b;
	case 5: return a | b;
	case 6: return a ^ b;
	}
	return 0; // a barrier carries nothing
}

static uint64_t ttl_mask(int w) { return w >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << w) - 1; }

// ttl_coll_open splits world into nodes (those that share memory or, with
// per > 0, runs of per of them), allocates the node's window and returns the
// node of every world rank (its lowest world rank) and each rank's
// node-local rank.
static int ttl_coll_open(MPI_Comm world, int per, ttl_coll *c, MPI_Comm *node, MPI_Win *win, int *nodeof, int *localof) {
	int rank, err, shared, nn;
	MPI_Comm_rank(world, &rank);
	MPI_Comm sh;
	if ((err = MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &sh)) != MPI_SUCCESS) return err;
	MPI_Comm_size(sh, &shared);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	c->yield = shared > (cpus > 0 ? cpus : 1); // as MPI's mpi_yield_when_idle when oversubscribed
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
	int all[2 * TTL_MAX];
	if ((err = MPI_Allgather(id, 2, MPI_INT, all, 2, MPI_INT, world)) != MPI_SUCCESS) return err;
	int n;
	MPI_Comm_size(world, &n);
	for (int k = 0; k < n; k++) nodeof[k] = all[2 * k], localof[k] = all[2 * k + 1];
	c->req[0] = c->req[1] = MPI_REQUEST_NULL;
	return MPI_SUCCESS; // the allgather came after every line was zeroed
}

static void ttl_coll_start(ttl_coll *c, uint64_t ticket, int epoch, int op, int w, uint64_t x) {
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
		if ((err = MPI_Testall(2, c->req, &d, MPI_STATUSES_IGNORE)) != MPI_SUCCESS || !d) return err;
		int m = c->m, dist = 1 << c->round;
		for (int j = 0; j < c->cnt; j++) c->vals[(c->me + dist + j) % m] = c->rbuf[j];
		c->round++, c->phase = 1;
		break;
	}
	}
}

// ttl_coll_poll polls the operation in flight up to spins times; c->done
// when it completed, its result in c->res.
static int ttl_coll_poll(ttl_coll *c, int spins) {
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
		// A leader waiting for the network leaves yielding to MPI's
		// progress, which yields where MPI finds the node oversubscribed
		// (mpi_yield_when_idle): one more yield of its own doubles the
		// cost of a round.
		if (c->phase == 2) continue;
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
static void ttl_coll_abandon(ttl_coll *c) {
	if (c->req[0] != MPI_REQUEST_NULL) {
		MPI_Cancel(&c->req[0]);
		MPI_Wait(&c->req[0], MPI_STATUS_IGNORE);
	}
	if (c->req[1] != MPI_REQUEST_NULL) MPI_Request_free(&c->req[1]);
	c->phase = 0;
}
*/
import "C"

import (
	"fmt"
	"os"
	"strconv"
)

// EnvNode chooses which ranks meet in shared memory: unset or "shared",
// those MPI finds on one node (MPI_COMM_TYPE_SHARED); a number N, runs of
// N of those, as if each run were a node of its own. PAPERS_MPI_NODE=1
// makes every rank a node and every collective cross the network, as on a
// cluster of one rank per node: it measures and tests that path on one
// machine.
const EnvNode = "PAPERS_MPI_NODE"

// maxRanks is the most ranks the collectives keep lines for: a PAPERS
// program has at most lpt.MaxPEs.
const maxRanks = C.TTL_MAX

// coll is the hot collectives' state: C memory, as MPI keeps the buffers
// of the leaders' messages. The window and the node's communicator live as
// long as the process: freeing them is collective over the node, and a PE
// that closes early must not wait there for the others (MPI_Finalize
// does, once).
type coll struct {
	c       *C.ttl_coll
	node    C.MPI_Comm
	win     C.MPI_Win
	nodeOf  []int // the node of every world rank (its lowest world rank)
	localOf []int // every world rank's rank in its node
}

// nodeRuns reads EnvNode: 0 for "shared", else N.
func nodeRuns() (int, error) {
	v := os.Getenv(EnvNode)
	if v == "" || v == "shared" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("mpi: %s=%q: want \"shared\" (the ranks on one node meet in shared memory; the default) or a number N ≥ 1 (runs of N of them do, as if each were a node; 1: every rank a node)", EnvNode, v)
	}
	return min(n, maxRanks), nil
}

// newColl opens the collectives over world (collective over world), with
// nodes of the ranks that share memory or runs of per of them.
func newColl(world Comm, per int) (*coll, error) {
	n := world.Size()
	if n > maxRanks {
		return nil, fmt.Errorf("mpi: %d ranks: at most %d", n, maxRanks)
	}
	k := &coll{c: (*C.ttl_coll)(C.calloc(1, C.sizeof_ttl_coll)), nodeOf: make([]int, n), localOf: make([]int, n)}
	var nodeOf, localOf [maxRanks]C.int
	if err := check("MPI_Win_allocate_shared", C.ttl_coll_open(world.c, C.int(per), k.c, &k.node, &k.win, &nodeOf[0], &localOf[0])); err != nil {
		return nil, err
	}
	for r := range n {
		k.nodeOf[r], k.localOf[r] = int(nodeOf[r]), int(localOf[r])
	}
	return k, nil
}

// configure sets up the epoch whose participants are ranks (ascending
// world ranks; comm is theirs, rank i of comm is ranks[i]) for this rank,
// self, one of them.
func (k *coll) configure(comm Comm, ranks []int, self int) {
	c := k.c
	c.comm = comm.c
	c.nlocal, c.m, c.me = 0, 0, 0
	home := k.nodeOf[self]
	var led [maxRanks]bool // nodes whose leader is counted
	for i, r := range ranks {
		if k.nodeOf[r] == home {
			if c.nlocal == 0 {
				c.leader = C.int(k.localOf[r])
			}
			c.local[c.nlocal] = C.int(k.localOf[r])
			c.nlocal++
		}
		if !led[k.nodeOf[r]] { // its lowest participant leads it
			led[k.nodeOf[r]] = true
			if k.nodeOf[r] == home {
				c.me = c.m
			}
			c.peer[c.m] = C.int(i)
			c.m++
		}
	}
	c.flat = 0
	if c.m == 1 {
		c.flat = 1
	}
}

// start joins an operation: ticket is the operation's (see above), epoch
// the parity of its epoch, o the reduction (-1: a barrier), w the
// operand's width in bits.
func (k *coll) start(ticket uint64, epoch, o, w int, x uint64) {
	C.ttl_coll_start(k.c, C.uint64_t(ticket), C.int(epoch), C.int(o), C.int(w), C.uint64_t(x))
}

// poll polls the operation in flight up to spins times.
func (k *coll) poll(spins int) (bool, error) {
	err := check("MPI_Test", C.ttl_coll_poll(k.c, C.int(spins)))
	return k.c.done != 0, err
}

// result is the completed operation's result.
func (k *coll) result() uint64 { return uint64(k.c.res) }

// abandon drops the operation in flight.
func (k *coll) abandon() { C.ttl_coll_abandon(k.c) }
