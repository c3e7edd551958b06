package strata

import "time"

// TimeBasedSeed asks SetRandomSeed for a seed made from the clock and the
// PE number (Strata's TIME_BASED_SEED).
const TimeBasedSeed = ^uint32(0)

// Park–Miller "minimal standard" generator: x' = 16807 x mod (2^31 - 1).
const (
	pmModulus    = 1<<31 - 1
	pmMultiplier = 16807
)

// Random returns the next number of this PE's Park–Miller "minimal
// standard" sequence, in [1, 2^31-2] (Strata's Random). The default seed
// is Self+1: every PE has its own repeatable sequence.
func (s *S) Random() uint32 {
	s.rng = uint32(uint64(s.rng) * pmMultiplier % pmModulus)
	return s.rng
}

// SetRandomSeed seeds this PE's generator and returns the seed used, which
// repeats the sequence when passed again (Strata's SetRandomSeed). Seeds
// are taken modulo 2^31-1 and 0 becomes 1, since the generator's state
// must be in [1, 2^31-2]. TimeBasedSeed seeds from the clock and Self, so
// that runs and PEs differ.
func (s *S) SetRandomSeed(seed uint32) uint32 {
	if seed == TimeBasedSeed {
		seed = uint32(time.Now().UnixNano()) ^ uint32(s.self)*0x9e3779b9
	}
	seed %= pmModulus
	if seed == 0 {
		seed = 1
	}
	s.rng = seed
	return seed
}
