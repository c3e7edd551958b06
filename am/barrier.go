package am

import (
	"time"

	"github.com/ttlpapers/ttlpapers/papers"
)

// barrierNap is how long a barrier that waits on the board sleeps between
// looks once it has spun and yielded.
const barrierNap = 20 * time.Microsecond

// boardEvery is how many polls of the network a barrier makes per look at
// the board.
const boardEvery = 8

// interruptEvery is how many looks at the board a barrier makes per look
// for an interrupt (3 port operations to the look's 1).
const interruptEvery = 16

// Barrier is the board barrier for a PE on a data network: it keeps
// polling while it waits, as every blocking call of the seeds' libraries
// does (Strata's Barrier is not ATOMIC; Split-C's barrier polls), so a PE
// in a barrier still answers the reads and gets of PEs that have not
// reached it. Without a data network it is p.Barrier.
func Barrier(p *papers.PE) error {
	e, ok := p.DataNet().(*Endpoint)
	if !ok || e == nil {
		return p.Barrier()
	}
	if err := p.StartBarrier(); err != nil {
		return err
	}
	var qerr error
	calls := 0
	err := e.wait("barrier", -1, func() bool {
		// A look at the board costs more than a poll of the network: look
		// every boardEvery polls, so messages are answered promptly.
		if calls++; calls%boardEvery != 1 {
			return false
		}
		if calls%(boardEvery*interruptEvery) == 1 {
			// A PE that returned or failed announces it by an interrupt,
			// which holds this barrier until it is acknowledged.
			if err := p.CheckBarrierInterrupt(); err != nil {
				qerr = err
				return true
			}
		}
		ok, err := p.QueryBarrier()
		qerr = err
		return ok || err != nil
	}, barrierNap)
	if qerr != nil {
		return qerr
	}
	if err != nil {
		// Out of time, abandoned, or a handler's misuse: the barrier is
		// still pending. CompleteBarrier finishes it or says, as the board
		// sees it, who is missing.
		if cerr := p.CompleteBarrier(); cerr != nil {
			return cerr
		}
		if _, late := err.(*papers.TimeoutError); late {
			return nil // it completed meanwhile
		}
	}
	return err
}
