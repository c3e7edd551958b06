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
#include "ttl.h"
*/
import "C"

import (
	"fmt"
	"os"
	"strconv"

	"github.com/ttlpapers/ttlpapers/papers"
)

// maxRanks is the most ranks the collectives keep lines for: a PAPERS
// program has at most lpt.MaxPEs.
const maxRanks = C.TTL_RANKS

// ops maps papers' operators onto C's (ttl.h, enum ttl_op) by name:
// TestOps checks that it covers every papers.Op.
var ops = [...]C.int{
	papers.Sum:     C.TTL_SUM,
	papers.Product: C.TTL_PRODUCT,
	papers.Min:     C.TTL_MIN,
	papers.Max:     C.TTL_MAX,
	papers.BitAnd:  C.TTL_AND,
	papers.BitOr:   C.TTL_OR,
	papers.BitXor:  C.TTL_XOR,
}

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
func newColl(world comm, per int) (*coll, error) {
	n := world.size()
	if n > maxRanks {
		return nil, fmt.Errorf("mpi: %d ranks: at most %d", n, maxRanks)
	}
	k := &coll{nodeOf: make([]int, n), localOf: make([]int, n)}
	var nodeOf, localOf [maxRanks]C.int
	if err := check("MPI_Win_allocate_shared", C.ttl_coll_open(world.c, C.int(per), &k.c, &k.node, &k.win, &nodeOf[0], &localOf[0])); err != nil {
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
func (k *coll) configure(cm comm, ranks []int, self int) {
	c := k.c
	c.comm = cm.c
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
// the parity of its epoch, o the reduction (ops, or opBarrier), w the
// operand's width in bits.
func (k *coll) start(ticket uint64, epoch int, o C.int, w int, x uint64) {
	C.ttl_coll_start(k.c, C.uint64_t(ticket), C.int(epoch), o, C.int(w), C.uint64_t(x))
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
