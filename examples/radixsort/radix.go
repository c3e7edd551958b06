package main

import (
	"fmt"
	"time"

	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/strata"
)

// Config sizes a sort.
type Config struct {
	KeyBits   int // significant bits per key: 8, 16, 24 or 32
	DigitBits int // bits sorted per pass (radix 2^DigitBits), dividing KeyBits
	// Progress, when set, is called on PE 0 as each pass starts.
	Progress func(pass, passes int)
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
	n, me, k := s.PartitionSize(), s.Self(), len(keys)
	ph := &phases{s: s}
	ph.list = [3]Phase{{Name: "fill"}, {Name: "scan"}, {Name: "coalesce"}}
	s.NameState(stateFill, "fill")
	s.NameState(stateMove, "coalesce")

	// Every PE must hold the same number of keys.
	kmax, err := s.CompositeInt(int32(k), strata.Max)
	if err != nil {
		return nil, nil, err
	}
	if kmin, err := s.CompositeInt(int32(k), strata.Min); err != nil {
		return nil, nil, err
	} else if kmin != kmax {
		return nil, nil, fmt.Errorf("radixsort: PE %d: the PEs hold %d to %d keys: every PE must hold the same number", me, kmin, kmax)
	}

	radix := 1 << cfg.DigitBits
	cnt := make([]int32, radix)
	off := make([]int32, radix)
	tot := make([]strata.Word, radix)
	cur := append([]uint32(nil), keys...)
	next := make([]uint32, k)
	pos := make([]int, k)
	perWord := 64 / cfg.KeyBits
	keyMask := uint64(1)<<cfg.KeyBits - 1
	total := n * k

	for shift := 0; shift < cfg.KeyBits; shift += cfg.DigitBits {
		digit := func(x uint32) int { return int(x>>shift) & (radix - 1) }
		if cfg.Progress != nil && me == 0 {
			cfg.Progress(shift/cfg.DigitBits+1, cfg.KeyBits/cfg.DigitBits)
		}

		ph.begin(0, stateFill)
		clear(cnt)
		for _, x := range cur {
			cnt[digit(x)]++
		}
		ph.end()

		// off[b]: how many keys with digit b the PEs before this one
		// hold; the last PE then knows the totals and broadcasts them.
		ph.begin(1, strata.StateBusy)
		if err := s.CombineVector(off, cnt, strata.ScanAdd); err != nil {
			return nil, nil, err
		}
		if s.Rightmost() {
			for b := range tot {
				tot[b] = strata.Word(off[b] + cnt[b])
			}
			err = s.BroadcastVector(tot, tot)
		} else {
			err = s.ReceiveBroadcastVector(tot)
		}
		if err != nil {
			return nil, nil, err
		}
		ph.end()

		// Each key's global position: the keys with smaller digits, then
		// those with its digit on earlier PEs, then its rank here.
		ph.begin(2, stateMove)
		base := 0
		start := make([]int, radix)
		for b := range radix {
			start[b] = base + int(off[b])
			base += int(tot[b])
		}
		for i, x := range cur {
			d := digit(x)
			pos[i] = start[d]
			start[d]++
		}
		// Stream: word w carries positions w*perWord ... ; each PE fills
		// the slots it holds and leaves the rest all ones, so the bitwise
		// NAND over PEs is the complement of every slot's key.
		have := make([]uint64, (total+perWord-1)/perWord)
		for i := range have {
			have[i] = ^uint64(0)
		}
		for i, x := range cur {
			w, slot := pos[i]/perWord, pos[i]%perWord
			have[w] &^= keyMask << (cfg.KeyBits * slot)
			have[w] |= uint64(x) & keyMask << (cfg.KeyBits * slot)
		}
		for w := range have {
			r, err := papers.NANDBits(s.PE(), have[w])
			if err != nil {
				return nil, nil, err
			}
			for slot := range perWord {
				g := w*perWord + slot
				if g >= me*k && g < (me+1)*k {
					next[g-me*k] = uint32(^r >> (cfg.KeyBits * slot) & keyMask)
				}
			}
		}
		if err := s.RestoreAsyncGlobalOR(); err != nil {
			return nil, nil, err
		}
		cur, next = next, cur
		ph.end()
	}
	s.SetState(strata.StateBusy)
	return cur, ph.list[:], nil
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
	var hin, hout, xin, xout uint64
	for _, x := range in {
		hin += mix(uint64(x))
		xin ^= mix(uint64(x) + 0x9e3779b97f4a7c15)
	}
	for _, x := range out {
		hout += mix(uint64(x))
		xout ^= mix(uint64(x) + 0x9e3779b97f4a7c15)
	}
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
