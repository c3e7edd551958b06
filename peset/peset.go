// Package peset is a set of PEs, the one way every layer passes and names
// them: the protocol (papers), the data network (am), the emulator and the
// launchers. It imports nothing of the module, so each can use it.
package peset

import (
	"math/bits"
	"strconv"
	"strings"
)

// Set is a set of PEs, bit k for PE k: what a vote returns, the
// participants of a group, the PEs a wait found missing. Errors name the
// PEs they are about through it, in one way everywhere.
type Set uint64

// Of returns the set of the PEs given (each below 64).
func Of(pes ...int) Set {
	var s Set
	for _, k := range pes {
		s |= 1 << k
	}
	return s
}

// Has reports whether PE k is in the set.
func (s Set) Has(k int) bool { return k >= 0 && k < 64 && s&(1<<k) != 0 }

// Len is the number of PEs in the set.
func (s Set) Len() int { return bits.OnesCount64(uint64(s)) }

// Members returns the set's PEs, lowest first.
func (s Set) Members() []int {
	pes := make([]int, 0, s.Len())
	for k := 0; s != 0; k, s = k+1, s>>1 {
		if s&1 != 0 {
			pes = append(pes, k)
		}
	}
	return pes
}

// String names the PEs for a message, lowest first: "PE 3", "PEs 1, 3";
// "no PE" for the empty set.
func (s Set) String() string {
	pes := s.Members()
	switch len(pes) {
	case 0:
		return "no PE"
	case 1:
		return "PE " + strconv.Itoa(pes[0])
	}
	n := make([]string, len(pes))
	for i, k := range pes {
		n[i] = strconv.Itoa(k)
	}
	return "PEs " + strings.Join(n, ", ")
}
