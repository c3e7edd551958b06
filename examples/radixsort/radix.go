package main

import (
	"fmt"
	"time"

	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/splitc"
	"github.com/ttlpapers/ttlpapers/strata"
)

// Config sizes a sort.
type Config struct {
	KeyBits   int // significant bits per key: 8, 16, 24 or 32
	DigitBits int // bits sorted per pass (radix 2^DigitBits), dividing KeyBits
	// Progress, when set, is called on PE 0 as each pass starts.
	Progress func(pass, passes int)
	// Memory coalesces through Split-C's global memory instead of the
	// board: every key is stored (splitc.Store, Split-C's ":-") into a
	// spread array at its destination, then all_store_sync — the
	// Libsplit-C report's radix sort (§6.2).
	Memory bool
}

func (c Config) check() error {
	switch c.KeyBits {
	case 8, 16, 24, 32:
	default:
		return fmt.Errorf("radixsort: key width %d bits: use 8, 16, 24 or 32", c.KeyBits)
	}
	if c.DigitBits < 1 || c.DigitBits > 8 || c.KeyBits%c.DigitBits != 0 {
		return fmt.Errorf("radixsort: digit width %d bits: use 1 to 8 bits that divide the key width %d", c.DigitBits, c.KeyBits)
	}
	return nil
}

// Phase is the time and NAND count of one phase, summed over the passes.
type Phase struct {
	Name  string
	Time  time.Duration
	NANDs uint64
}

// States of the radix sort's state graph (8 and up are the program's).
const (
	stateFill = 8
	stateMove = 9
)

// phases accumulates per-phase costs.
type phases struct {
	s     *strata.S
	list  [3]Phase
	start time.Time
	nands uint64
	cur   int
}

func (p *phases) begin(i, state int) {
	p.cur = i
	p.start = time.Now()
	p.nands = p.s.NANDs()
	p.s.SetState(state)
}

func (p *phases) end() {
	p.list[p.cur].Time += time.Since(p.start)
	p.list[p.cur].NANDs += p.s.NANDs() - p.nands
}

// Sort sorts the keys held by every PE (each the same number) and returns
// this PE's share of the sorted sequence: PE i gets positions i*k to
// (i+1)*k-1 of it. It is the seeds' radix sort — per pass, fill (a local
// histogram of the digit), scan (of the histograms across PEs), coalesce
// (every key to its destination PE) — with the coalesce done the way the
// board likes: all keys stream in global order over the NAND lines, each
// nybble driven by the PE that holds it while every other PE drives 0xf,
// and each PE keeps the positions that are its own.
func Sort(s *strata.S, keys []uint32, cfg Config) ([]uint32, []Phase, error) {
	if err := cfg.check(); err != nil {
		return nil, nil, err
	}
	if err := sameCounts(s, len(keys)); err != nil {
		return nil, nil, err
	}
	st := newSorter(s, keys, cfg)
	for shift := 0; shift < cfg.KeyBits; shift += cfg.DigitBits {
		if cfg.Progress != nil && s.Self() == 0 {
			cfg.Progress(shift/cfg.DigitBits+1, cfg.KeyBits/cfg.DigitBits)
		}
		if err := st.pass(shift); err != nil {
			return nil, nil, err
		}
	}
	s.SetState(strata.StateBusy)
	return st.cur, st.ph.list[:], nil
}

// sameCounts checks that every PE holds k keys.
func sameCounts(s *strata.S, k int) error {
	kmax, err := s.CompositeInt(int32(k), strata.Max)
	if err != nil {
		return err
	}
	kmin, err := s.CompositeInt(int32(k), strata.Min)
	if err != nil {
		return err
	}
	if kmin != kmax {
		return fmt.Errorf("radixsort: PE %d: the PEs hold %d to %d keys: every PE must hold the same number", s.Self(), kmin, kmax)
	}
	return nil
}

// sorter is one PE's part of a sort.
type sorter struct {
	s         *strata.S
	cfg       Config
	ph        *phases
	me, k     int
	total     int           // keys on all PEs
	cnt, off  []int32       // per digit: this PE's count; the count on the PEs before it
	tot       []strata.Word // per digit: the count on all PEs
	cur, next []uint32      // this PE's keys before and after the pass
	pos       []int         // each key's position in the pass's global order
	mem       *splitc.Memory
	arr       splitc.Spread[uint32] // the keys' destinations, for coalesceMemory
}

func newSorter(s *strata.S, keys []uint32, cfg Config) *sorter {
	radix, k := 1<<cfg.DigitBits, len(keys)
	st := &sorter{
		s: s, cfg: cfg, ph: &phases{s: s}, me: s.Self(), k: k, total: s.PartitionSize() * k,
		cnt: make([]int32, radix), off: make([]int32, radix), tot: make([]strata.Word, radix),
		cur: append([]uint32(nil), keys...), next: make([]uint32, k), pos: make([]int, k),
	}
	st.ph.list = [3]Phase{{Name: "fill"}, {Name: "scan"}, {Name: "coalesce"}}
	s.NameState(stateFill, "fill")
	s.NameState(stateMove, "coalesce")
	return st
}

// pass sorts by the digit at bit shift: fill, scan, coalesce.
func (st *sorter) pass(shift int) error {
	digit := func(x uint32) int { return int(x>>shift) & (len(st.cnt) - 1) }
	st.ph.begin(0, stateFill)
	clear(st.cnt)
	for _, x := range st.cur {
		st.cnt[digit(x)]++
	}
	st.ph.end()

	st.ph.begin(1, strata.StateBusy)
	if err := st.scan(); err != nil {
		return err
	}
	st.ph.end()

	st.ph.begin(2, stateMove)
	st.place(digit)
	coalesce := st.coalesce
	if st.cfg.Memory {
		coalesce = st.coalesceMemory
	}
	if err := coalesce(); err != nil {
		return err
	}
	st.cur, st.next = st.next, st.cur
	st.ph.end()
	return nil
}

// scan sets off[b], how many keys with digit b the PEs before this one
// hold; the last PE then knows the totals and broadcasts them into tot.
func (st *sorter) scan() error {
	if err := st.s.CombineVector(st.off, st.cnt, strata.ScanAdd); err != nil {
		return err
	}
	if !st.s.Rightmost() {
		return st.s.ReceiveBroadcastVector(st.tot)
	}
	for b := range st.tot {
		st.tot[b] = strata.Word(st.off[b] + st.cnt[b])
	}
	return st.s.BroadcastVector(st.tot, st.tot)
}

// place sets each key's global position: the keys with smaller digits,
// then those with its digit on earlier PEs, then its rank here.
func (st *sorter) place(digit func(uint32) int) {
	base := 0
	start := make([]int, len(st.cnt))
	for b := range start {
		start[b] = base + int(st.off[b])
		base += int(st.tot[b])
	}
	for i, x := range st.cur {
		d := digit(x)
		st.pos[i] = start[d]
		start[d]++
	}
}

// coalesce streams every key in global order over the NAND lines: word w
// carries positions w*perWord ...; each PE fills the slots it holds and
// leaves the rest all ones, so the bitwise NAND over PEs is the complement
// of every slot's key. Each PE keeps its own positions in next.
func (st *sorter) coalesce() error {
	bits := st.cfg.KeyBits
	perWord, keyMask := 64/bits, uint64(1)<<bits-1
	have := make([]uint64, (st.total+perWord-1)/perWord)
	for i := range have {
		have[i] = ^uint64(0)
	}
	for i, x := range st.cur {
		w, slot := st.pos[i]/perWord, st.pos[i]%perWord
		have[w] &^= keyMask << (bits * slot)
		have[w] |= uint64(x) & keyMask << (bits * slot)
	}
	first := st.me * st.k // this PE's first position
	for w := range have {
		r, err := papers.NANDBits(st.s.PE(), have[w])
		if err != nil {
			return err
		}
		for slot := range perWord {
			if g := w*perWord + slot; g >= first && g < first+st.k {
				st.next[g-first] = uint32(^r >> (bits * slot) & keyMask)
			}
		}
	}
	return st.s.RestoreAsyncGlobalOR()
}

// coalesceMemory moves every key to its position through global memory,
// as Libsplit-C's radix sort does: position g is element g mod k of PE g
// div k's part of a spread array (spread element (g mod k)·PROCS + g div
// k); a store per key (no acknowledgment), then all_store_sync, after
// which every PE's part holds its sorted share.
func (st *sorter) coalesceMemory() error {
	if st.mem == nil {
		m, err := splitc.Attach(st.s.PE())
		if err != nil {
			return err
		}
		if st.arr, err = splitc.AllSpreadMalloc[uint32](m, st.total); err != nil {
			return err
		}
		st.mem = m
	}
	n := st.s.PartitionSize()
	for i, x := range st.cur {
		g := st.pos[i]
		if err := splitc.Store(st.mem, st.arr.At(g%st.k*n+g/st.k), x); err != nil {
			return err
		}
	}
	if err := splitc.AllStoreSync(st.mem); err != nil {
		return err
	}
	copy(st.next, splitc.Local(st.mem, st.arr))
	return st.s.RestoreAsyncGlobalOR()
}

// Verify checks, collectively, that out is the sorted form of in across
// all PEs: each PE's share is sorted, shares are in order from PE to PE,
// every PE holds as many keys as it started with, and the multiset of keys
// is unchanged (compared by two independent sums of a 64-bit hash of every
// key, reduced over the board).
func Verify(s *strata.S, in, out []uint32) error {
	p := s.PE()
	n := s.PartitionSize()
	ok := len(in) == len(out)
	for i := 1; ok && i < len(out); i++ {
		ok = out[i-1] <= out[i]
	}
	first, last := uint32(0), uint32(0)
	if len(out) > 0 {
		first, last = out[0], out[len(out)-1]
	}
	firsts := make([]uint32, n)
	lasts := make([]uint32, n)
	if err := papers.Gather(p, first, firsts); err != nil {
		return err
	}
	if err := papers.Gather(p, last, lasts); err != nil {
		return err
	}
	for i := 1; i < n; i++ {
		if lasts[i-1] > firsts[i] {
			ok = false
		}
	}
	hin, xin := keyHashes(in)
	hout, xout := keyHashes(out)
	var err error
	for _, v := range []*uint64{&hin, &hout} {
		if *v, err = papers.Reduce(p, papers.Sum, *v); err != nil {
			return err
		}
	}
	for _, v := range []*uint64{&xin, &xout} {
		if *v, err = papers.Reduce(p, papers.BitXor, *v); err != nil {
			return err
		}
	}
	if err := s.RestoreAsyncGlobalOR(); err != nil {
		return err
	}
	good, err := s.CompositeInt(b2i(ok && hin == hout && xin == xout), strata.Min)
	if err != nil {
		return err
	}
	if good != 1 {
		return fmt.Errorf("radixsort: PE %d: output is not the sorted input (this PE's share sorted and complete: %v; keys preserved: %v)", s.Self(), ok, hin == hout && xin == xout)
	}
	return nil
}

// keyHashes are two independent order-free hashes of keys: the sum and the
// XOR of a 64-bit hash of each.
func keyHashes(keys []uint32) (sum, xor uint64) {
	for _, x := range keys {
		sum += mix(uint64(x))
		xor ^= mix(uint64(x) + 0x9e3779b97f4a7c15)
	}
	return sum, xor
}

func b2i(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

// mix is SplitMix64's finaliser: a bijective 64-bit hash.
func mix(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
