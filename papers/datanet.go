package papers

import (
	"fmt"
	"github.com/ttlpapers/ttlpapers/peset"
	"strings"
)

// DataNet is a PE's endpoint on a data network beside the board: the
// seeds' active messages, which Split-C's global memory and Strata's block
// transfers stand on (package am). The board carries 4 bits per barrier;
// bulk data goes another way — memory between goroutines in emulated runs,
// shared memory between processes, MPI or a LAN between PCs — and the
// runner that starts a PE (package emulate, package spmd) attaches its
// endpoint here. papers carries it, and asks it what the board cannot
// tell (Ask): the packages above reach it through their own accessor
// (am.Of), so that papers never imports them.
type DataNet interface {
	// Close handles what has arrived and detaches the endpoint, so that
	// the other PEs' waits on this one end in an error naming it.
	Close() error

	// The roll call after a timed-out barrier asks the data network too
	// (docs/protocol.md, "Naming the PE"): Ask starts it for the PEs in
	// who (bit k: PE k), noting what the network knows of each already
	// and pinging the others; Listen, called often until the roll call
	// ends, handles what has arrived without blocking — the others'
	// pings, which it answers, and their answers; Absent ends it and
	// returns the PEs asked that did not answer, each with what the
	// network knows of it.
	Ask(who peset.Set)
	Listen()
	Absent() []Absence

	// Dead returns the PEs of who that the network knows went without
	// leaving (their connections or process ended: killed, or crashed),
	// without blocking, and without allocating while every PE asked is
	// attached. A board wait asks it every deadEvery of its slow path, so
	// that a PE the network saw die is named at once, not after the
	// timeout and a roll call. A PE that left failing is not dead: it
	// announces that on the board, and one that leaves failing while
	// others wait is more often a PE that timed out first on the same
	// fault than the fault.
	Dead(who peset.Set) peset.Set
}

// AttachDataNet gives the PE its data-network endpoint (runners call it
// once, after Open); nil detaches it.
func (p *PE) AttachDataNet(n DataNet) { p.datanet = n }

// DataNet returns the endpoint a runner attached, or nil.
func (p *PE) DataNet() DataNet { return p.datanet }

// Absence is what a data network knows of a PE that did not answer its
// roll call (DataNet.Absent).
type Absence struct {
	PE  int
	How AbsenceKind
	// Cause is what the PE said when it left (Failed), or how its
	// connection ended (Died); empty otherwise.
	Cause string
}

// AbsenceKind says how a data network knows a PE is absent.
type AbsenceKind uint8

const (
	// Silent: attached, but it did not answer a ping within the roll
	// call: stopped, computing without polling, or its link is down.
	Silent AbsenceKind = iota
	// Returned: it left the data network as a program that returned does.
	Returned
	// Failed: it left the data network saying its program failed.
	Failed
	// Died: it went without leaving (its connection ended, its process
	// is gone): killed, or crashed.
	Died
)

func (k AbsenceKind) String() string {
	switch k {
	case Silent:
		return "silent"
	case Returned:
		return "returned"
	case Failed:
		return "failed"
	case Died:
		return "died"
	}
	return fmt.Sprintf("AbsenceKind(%d)", uint8(k))
}

func (a Absence) String() string {
	s := fmt.Sprintf("PE %d ", a.PE)
	switch a.How {
	case Returned:
		s += "left the data network as a program that returned does"
	case Failed:
		s += "left the data network failing: " + a.Cause
	case Died:
		s += "went from the data network without leaving: "
		if a.Cause != "" {
			s += a.Cause
		} else {
			s += "killed or crashed"
		}
	default:
		s += "did not answer a ping on the data network during the roll call (stopped, computing without polling, or its link is down)"
	}
	return s
}

// absentSet is the set of PEs a data network named.
func absentSet(dn []Absence) peset.Set {
	var m peset.Set
	for _, a := range dn {
		m |= 1 << a.PE
	}
	return m
}

// describeAbsent is a TimeoutError's account of what the data network
// knows.
func describeAbsent(dn []Absence) string {
	parts := make([]string, len(dn))
	for i, a := range dn {
		parts[i] = a.String()
	}
	return strings.Join(parts, "; ")
}

// named returns the PEs the roll call names: the board's answer when it
// names exactly one PE; else the data network's, narrowed to the board's
// candidates where they meet, and to the PEs that did not leave failing
// when some did not: a PE that failed announces it on the board, so one
// that left failing while this PE timed out is, likelier, another PE
// that gave up waiting before this one's roll call (a host that starves
// this PE of the CPU makes its roll call late). dn is kept only when it
// is the answer.
func named(board peset.Set, dn []Absence) (peset.Set, []Absence) {
	d := absentSet(dn)
	if board&(board-1) == 0 && board != 0 || d == 0 {
		return board, nil
	}
	if both := board & d; both != 0 {
		d = both
	}
	var quiet peset.Set // named, and not left failing
	for _, a := range dn {
		if d&(1<<a.PE) != 0 && a.How != Failed {
			quiet |= 1 << a.PE
		}
	}
	if quiet != 0 {
		d = quiet
	}
	kept := dn[:0:0]
	for _, a := range dn {
		if d&(1<<a.PE) != 0 {
			kept = append(kept, a)
		}
	}
	return d, kept
}
