package strata

import (
	"slices"
	"sync"
	"time"
)

// CyclesPerSecond is the rate of Strata's cycle counter here: one cycle is
// one nanosecond of the monotonic clock (the CM-5's was 32 MHz).
const CyclesPerSecond = 1e9

// epoch is the origin of CycleCount.
var epoch = time.Now()

// CycleCount returns the cycle counter (Strata's CycleCount): nanoseconds
// of the monotonic clock, wrapping every 4.3 seconds like a 32-bit counter.
func CycleCount() uint32 { return uint32(time.Since(epoch)) }

// ElapsedCycles returns the cycles since start, a CycleCount value, less
// the cost of the two calls themselves (Strata's ElapsedCycles): when the
// calls are adjacent it returns 0 (almost always; the calibration takes the
// 99th percentile of adjacent pairs, so rare slow pairs measure a few
// cycles, and short intervals read up to that much short).
func ElapsedCycles(start uint32) uint32 {
	d := CycleCount() - start
	if o := overhead(); d > o {
		return d - o
	}
	return 0
}

// overhead is the calibrated cost of an adjacent CycleCount/ElapsedCycles
// pair, measured once.
var overhead = sync.OnceValue(func() uint32 {
	const n = 2000
	var d [n]uint32
	for i := range d {
		start := CycleCount()
		d[i] = CycleCount() - start
	}
	slices.Sort(d[:])
	return d[n*99/100]
})

// CyclesToSeconds converts cycles to seconds (Strata's CyclesToSeconds).
func CyclesToSeconds(cycles uint64) float64 { return float64(cycles) / CyclesPerSecond }

// clock is a PE's origin for CurrentCycle64 and CurrentCycle.
type clock struct {
	init, base time.Time
}

func (c *clock) reset() { c.init = time.Now(); c.base = c.init }

// CurrentCycle64 returns the cycles since Init (Strata's CurrentCycle64).
func (s *S) CurrentCycle64() DoubleWord { return DoubleWord(time.Since(s.clock.init)) }

// CurrentCycle returns the cycles since Init or the last ResetCurrentCycle
// (Strata's CurrentCycle); state graphs are timed by it.
func (s *S) CurrentCycle() uint32 { return uint32(time.Since(s.clock.base)) }

// ResetCurrentCycle sets CurrentCycle's origin to now on every PE: it is a
// barrier, and every PE restarts its count as it leaves it (Strata's
// ResetCurrentCycle).
func (s *S) ResetCurrentCycle() error {
	if err := s.Barrier(); err != nil {
		return err
	}
	s.clock.base = time.Now()
	s.trace.rebase(s)
	return nil
}
