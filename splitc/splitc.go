// Package splitc is Split-C's run-time library (Libsplit-C, Luna 1994) on
// TTL_PAPERS, in its two halves.
//
// Global memory (sections 3.1, 3.2, 3.4, 3.5): a PE's Memory (Attach), global
// pointers (Global) and spread arrays (Spread, AllSpreadMalloc), read and
// write, split-phase get and put with Sync, one-way store with StoreSync and
// AllStoreSync, the bulk forms, counters, and the atomic procedures
// (Atomic, FetchAndAdd, CmpAndSwap, …). It runs on the data network's active
// messages (package am), as Libsplit-C ran on CMAM; where the PEs share
// memory a bulk transfer is a copy (docs/datanet.md).
//
// Global communication (section 3.3): barrier, broadcast, reduce and scan,
// which every PE must call in the same order, on the board's NANDs. Split-C
// spells each operation once per type (all_scan_add, _uadd, _fadd, _dadd);
// here one generic function covers the variants, and its comment names the
// originals it implements. Reductions deliver the result to every PE (the
// original "to one" result is PE 0's; the others get it too, for free: the
// board's NAND is seen by everybody). Scans are inclusive. Float results are
// bit-identical on every PE: values combine in PE order.
//
// The Libsplit-C lesson that a fast hardware barrier keeps successive
// collectives from overwriting each other's buffers holds here by
// construction: every NAND ends in a barrier.
//
// Split-C's collectives "require all the processors to participate"; here
// all that take part (papers.PE.Participants): a PE that has left is left
// out of every result, and AllBcast from a departed PE 0 returns a
// *papers.AbsentError naming it. docs/splitc.md maps every Libsplit-C name
// to its Go form.
//
// A PE whose program returns keeps serving its global memory until every
// PE has returned, as OpenSHMEM's shmem_finalize and UPC's exit do: its
// runner (spmd.Main, package emulate) ends it with papers.PE.Finish, which
// answers the data network while it waits, and closes the network after
// it. A PE that meets the board meanwhile is told that the other returned
// (a *papers.InterruptError naming it in Returned), and the run fails: it
// did not end together.
package splitc

import (
	"github.com/ttlpapers/ttlpapers/am"
	"github.com/ttlpapers/ttlpapers/papers"
)

// Number is the set of types the arithmetic collectives take: Split-C's
// int, unsigned, float and double, and the other fixed-size numbers.
type Number = papers.Number

// Integer is the set of types the bitwise collectives take (Split-C's
// or, xor and and exist only for int and unsigned).
type Integer = papers.Integer

// MYPROC is this PE's number (Split-C's MYPROC).
func MYPROC(p *papers.PE) int { return p.Self() }

// PROCS is the number of PEs (Split-C's PROCS).
func PROCS(p *papers.PE) int { return p.PEs() }

// Barrier returns when every PE has entered it (Split-C's barrier). While
// global memory is in use it polls while it waits (am.Barrier), so PEs
// still reading this PE's memory are answered.
func Barrier(p *papers.PE) error {
	if usesMemory(p) {
		return am.Barrier(p)
	}
	return p.Barrier()
}

// AllBcast returns PE 0's val on every PE (Split-C's all_bcast, all_bcast_i,
// all_bcast_u, all_bcast_f, all_bcast_d for T = int32, int32, uint32,
// float32, float64). When PE 0 has left the group it is an
// *papers.AbsentError on every PE.
func AllBcast[T Number](p *papers.PE, val T) (T, error) {
	if err := settle(p); err != nil {
		return 0, err
	}
	return papers.Broadcast(p, 0, val)
}

// AllReduceToOneAdd returns a0 + ... + a(n-1) (Split-C's
// all_reduce_to_one_add, _uadd, _fadd, _dadd).
func AllReduceToOneAdd[T Number](p *papers.PE, val T) (T, error) {
	return reduce(p, papers.Sum, val)
}

// AllReduceToOneMult returns a0 * ... * a(n-1) (Split-C's
// all_reduce_to_one_mult, _umult, _fmult, _dmult).
func AllReduceToOneMult[T Number](p *papers.PE, val T) (T, error) {
	return reduce(p, papers.Product, val)
}

// AllReduceToOneMax returns the largest val (Split-C's
// all_reduce_to_one_max, _umax, _fmax, _dmax).
func AllReduceToOneMax[T Number](p *papers.PE, val T) (T, error) {
	return reduce(p, papers.Max, val)
}

// AllReduceToOneMin returns the smallest val (Split-C's
// all_reduce_to_one_min, _umin, _fmin, _dmin).
func AllReduceToOneMin[T Number](p *papers.PE, val T) (T, error) {
	return reduce(p, papers.Min, val)
}

// AllReduceToOneOr returns the bitwise OR of every val (Split-C's
// all_reduce_to_one_or, _uor).
func AllReduceToOneOr[T Integer](p *papers.PE, val T) (T, error) {
	return reduce(p, papers.BitOr, val)
}

// AllReduceToOneXor returns the bitwise XOR of every val (Split-C's
// all_reduce_to_one_xor, _uxor).
func AllReduceToOneXor[T Integer](p *papers.PE, val T) (T, error) {
	return reduce(p, papers.BitXor, val)
}

// AllReduceToOneAnd returns the bitwise AND of every val (Split-C's
// all_reduce_to_one_and, _uand).
func AllReduceToOneAnd[T Integer](p *papers.PE, val T) (T, error) {
	return reduce(p, papers.BitAnd, val)
}

// AllScanAdd returns a0 + ... + ai on PE i (Split-C's all_scan_add, _uadd,
// _fadd, _dadd).
func AllScanAdd[T Number](p *papers.PE, val T) (T, error) {
	return scan(p, papers.Sum, val)
}

// AllScanMult returns a0 * ... * ai on PE i (Split-C's all_scan_mult,
// _umult, _fmult, _dmult).
func AllScanMult[T Number](p *papers.PE, val T) (T, error) {
	return scan(p, papers.Product, val)
}

// AllScanMax returns max(a0, ..., ai) on PE i (Split-C's all_scan_max,
// _umax, _fmax, _dmax).
func AllScanMax[T Number](p *papers.PE, val T) (T, error) {
	return scan(p, papers.Max, val)
}

// AllScanMin returns min(a0, ..., ai) on PE i (Split-C's all_scan_min,
// _umin, _fmin, _dmin).
func AllScanMin[T Number](p *papers.PE, val T) (T, error) {
	return scan(p, papers.Min, val)
}

// AllScanOr returns a0 | ... | ai on PE i (Split-C's all_scan_or, _uor).
func AllScanOr[T Integer](p *papers.PE, val T) (T, error) {
	return scan(p, papers.BitOr, val)
}

// AllScanXor returns a0 ^ ... ^ ai on PE i (Split-C's all_scan_xor,
// _uxor).
func AllScanXor[T Integer](p *papers.PE, val T) (T, error) {
	return scan(p, papers.BitXor, val)
}

// AllScanAnd returns a0 & ... & ai on PE i (Split-C's all_scan_and,
// _uand).
func AllScanAnd[T Integer](p *papers.PE, val T) (T, error) {
	return scan(p, papers.BitAnd, val)
}

// settle: while global memory is in use, every PE first meets in a barrier
// that polls — as Libsplit-C on CMAM executes a barrier "before every
// global operation" (Luna §4.3.1) —, so that no PE enters the board's
// NANDs, which do not poll, while another still waits for it to answer a
// read or an atomic.
func settle(p *papers.PE) error {
	if usesMemory(p) {
		return am.Barrier(p)
	}
	return nil
}

// usesMemory reports whether the PE has attached global memory.
func usesMemory(p *papers.PE) bool {
	ep, ok := p.DataNet().(*am.Endpoint)
	return ok && ep != nil && ep.Value(memKey{}) != nil
}

func reduce[T Number](p *papers.PE, op papers.Op, val T) (T, error) {
	if err := settle(p); err != nil {
		return 0, err
	}
	return papers.Reduce(p, op, val)
}

func scan[T Number](p *papers.PE, op papers.Op, val T) (T, error) {
	if err := settle(p); err != nil {
		return 0, err
	}
	return papers.Scan(p, op, val, papers.Inclusive)
}
