package papers

import (
	"errors"
	"github.com/ttlpapers/ttlpapers/peset"
	"unsafe"
)

// Engine runs a PE's communication on a substrate that has collectives of
// its own — MPI (package mpi) — instead of the board's barrier and 4-bit
// NAND. A *PE opened on an engine (OpenEngine) keeps this package's API
// and semantics, and everything above it (strata, splitc, spmd programs)
// runs unchanged; docs/mpi.md says how each operation maps.
//
// The PE calls its engine at a handful of primitives — the barrier, the
// split-phase barrier, a bitwise or arithmetic reduction of one value, a
// gather of every participant's memory image, and the parallel interrupt
// — and builds the rest from them as the board's protocol builds it from
// NANDs: float reductions and scans gather and then combine in PE order on
// every PE, so they are bitwise identical everywhere, as on the board.
//
// Every method is called from the PE's goroutine. op names the operation
// for errors; every wait is bounded by the engine's timeout and context
// and ends in this package's errors (*TimeoutError naming the PEs that did
// not answer, *InterruptError, *AbsentError …). An operation cut short by
// a parallel interrupt returns the *InterruptError of the acknowledge it
// ran, whose Members the PE adopts. Every collective combines the
// participants only.
type Engine interface {
	// Barrier returns once every participant has reached a barrier.
	Barrier(op string) error
	// StartBarrier begins a barrier that carries this PE's 4 data lines;
	// PollBarrier polls it (block: waits for it) and, once done, returns
	// the NAND of the participants' data lines.
	StartBarrier(op string, data uint8) error
	PollBarrier(op string, block bool) (done bool, nand uint8, err error)
	// Allreduce returns o (Sum, Product, Min, Max, BitAnd, BitOr, BitXor)
	// over every participant's x, an unsigned integer of w bits (8, 16,
	// 32 or 64).
	Allreduce(op string, o Op, w int, x uint64) (uint64, error)
	// GatherBuffer returns the engine's buffer of n bytes for this PE's
	// part of the next Allgather.
	GatherBuffer(n int) []byte
	// Allgather returns every PE's n bytes of GatherBuffer: PEs()*n
	// bytes, PE k's at k*n, zero for PEs that do not take part. The slice
	// is the engine's, valid until its next call.
	Allgather(op string, n int) ([]byte, error)
	// Raise raises a parallel interrupt with code and takes part in its
	// acknowledge; with depart this PE leaves the group in it, and a PE
	// that has left rejoins with it. It returns the delivered code (the
	// OR of concurrent raisers') and the participants afterwards.
	Raise(op string, code uint8, depart bool) (delivered uint8, members peset.Set, err error)
	// CheckInterrupt acknowledges a pending interrupt and returns its
	// *InterruptError, or nil when none is pending.
	CheckInterrupt(op string) error
	// Close ends the PE's part.
	Close() error
}

// OpenEngine opens PE cfg.PE of cfg.PEs on e (cfg's PE count and timeouts
// are e's too) and checks in: a barrier bounded by cfg.CheckInTimeout.
func OpenEngine(e Engine, cfg Config) (*PE, error) {
	p, err := newPE(cfg)
	if err != nil {
		return nil, err
	}
	p.eng = e
	p.last = lpt1Green
	if err := e.Barrier("check-in"); err != nil {
		e.Close()
		return nil, err
	}
	p.members = p.all()
	return p, nil
}

// lpt1Green is the data byte of a PE that has just opened (LED green, data
// lines high); on an engine only its LED and data bits mean anything.
const lpt1Green = 0x1f

// fromEngine adopts what an interrupt changed when err is one. A nil err
// returns first: errors.As's target escapes, an allocation per operation.
func (p *PE) fromEngine(err error) error {
	if err == nil {
		return nil
	}
	var ie *InterruptError
	if errors.As(err, &ie) {
		p.adopt(ie.Members)
	}
	return err
}

// adopt records an acknowledged interrupt's new participants.
func (p *PE) adopt(members peset.Set) {
	p.stats.Interrupts++
	p.change = change{left: p.members &^ members, joined: members &^ p.members}
	p.members = members
}

// engineGather is eachMember on an engine: one Allgather of v's memory
// image, then got for each member in order.
func engineGather[T any](p *PE, members peset.Set, v *T, backward bool, got func(pe int, val T)) error {
	if err := p.usable("gather"); err != nil {
		return err
	}
	size := sizeOf[T]()
	copy(p.eng.GatherBuffer(size), unsafe.Slice((*byte)(unsafe.Pointer(v)), size))
	all, err := p.eng.Allgather("gather", size)
	if err != nil {
		return p.fromEngine(err)
	}
	for i := range p.n {
		j := i
		if backward {
			j = p.n - 1 - i
		}
		if members&(1<<j) != 0 {
			got(j, *(*T)(unsafe.Pointer(&all[j*size])))
		}
	}
	return nil
}

// engineReduce is Reduce for the integer operators on an engine: one
// allreduce of the value's bits (two's complement makes Sum and Product of
// signed values the unsigned ones' bits).
func engineReduce[T Number](p *PE, op Op, v T) (T, error) {
	w := widthOf[T]()
	r, err := p.eng.Allreduce("Reduce", op, w, toBits(v))
	return fromBits[T](r), p.fromEngine(err)
}
