package emu

import "slices"

// A memo of settled transitions: a locked board has one, and so has each
// port's simulation on a lock-free board. What the board settles to is a
// function of its inputs and its flip-flops' state before (sim.go): the
// pins that reach the logic — each port word but its inert bits — and the
// 74LS74 halves' Q and last clock levels, faults aside (a fault change
// empties the memo) and power-ups aside (they are settled, not looked up).
// The memo maps that key to what a simulation settled it to once: the
// flip-flops' next state, every connector's status register and the nets it
// left contended. A barrier or NAND that a program repeats therefore costs
// a look-up per write, not a settle; a key not found is settled gate by
// gate, as ever, by the simulation, brought up to every input first (it may
// have missed many writes), and remembered. The simulation stays the only
// evaluator — the memo holds nothing it did not compute, and what needs the
// levels (Board.Levels, LED, ExplainStall) asks the board's own simulation,
// which has no memo — and the differential test checks the board against
// the reference with the memo on.
//
// The memo is set-associative: a key's set is a hash of it, kept up to date
// as ports write (each port's word contributes a term of an XOR); a set has
// memoWays slots, each holding a key that landed there, found by its hash
// and compared in full before use. Ways, because a barrier's arrivals come
// in many orders: at 32 PEs a direct-mapped memo of the same size answered
// 80-87% of the writes of a port-level barrier, this one 88-92%, and the
// barrier took 18-24% less time (paired runs, the two memos alternating).
type memo struct {
	mask   []uint64 // by port: the bits of its word that reach the logic
	key    []uint64 // the current key: each port's word & mask
	hash   uint64   // of key
	faults uint64   // a lock-free board's: the fault words' sequence sum the slots hold

	// Slot i (of a power of two, in sets of memoWays): keys[i*(n+1)] is
	// the flip-flop state, then the n port words; next[i] the next state |
	// the contended nets <<8; statuses[i*n:] the statuses.
	keys     []uint64
	tags     []uint64 // by slot: the hash of its key, memoValid set; 0 when empty
	next     []uint64
	statuses []uint8
	hits     uint64 // look-ups that found their key (for tests)
	victim   int    // the way the next miss replaces
}

// The board's memo has room for the transitions of all its PEs' writes,
// each port's on a lock-free board for those it evaluates itself.
const (
	boardSlots = 1 << 10
	portSlots  = 1 << 8
	memoValid  = 1 << 63
	memoWays   = 4
)

func newMemo(b *Board, slots int) *memo {
	n := len(b.ports)
	m := &memo{mask: make([]uint64, n), key: make([]uint64, n),
		keys: make([]uint64, slots*(n+1)), tags: make([]uint64, slots), next: make([]uint64, slots), statuses: make([]uint8, slots*n)}
	for k, p := range b.ports {
		m.mask[k] = 0xffff &^ p.inertBits
		m.hash ^= memoTerm(k, 0)
	}
	return m
}

// reset forgets every slot and takes the key from the board's port words.
func (m *memo) reset(b *Board) {
	m.forget()
	m.hash = 0
	for k := range m.key {
		m.key[k] = b.m.load(b.lay.port(k)) & m.mask[k]
		m.hash ^= memoTerm(k, m.key[k])
	}
}

// forget empties every slot.
func (m *memo) forget() { clear(m.tags) }

// update takes the key from a snapshot of a lock-free board's inputs, and
// empties the memo if the faults changed.
func (m *memo) update(words []uint64, faults uint64) {
	if faults != m.faults {
		m.forget()
		m.faults = faults
	}
	for k, w := range words[:len(m.key)] {
		if w&m.mask[k] != m.key[k] {
			m.set(k, w)
		}
	}
}

// settle returns what the board settles to from flip-flop state state and
// the memo's key: the next state, the statuses and the contended nets. Not
// found, s settles it from words — a snapshot of every input, collected
// when nil — and the memo remembers it.
func (m *memo) settle(b *Board, s *sim, state uint8, words []uint64) (uint8, []uint8, int) {
	i, hit := m.slot(state)
	if hit {
		m.hits++
	} else {
		if words == nil {
			b.collect(s, s.snap, -1)
			words = s.snap
		}
		s.apply(words, state)
		m.store(i, state, s.state(), s.status, s.contended)
	}
	return m.result(i)
}

func memoTerm(k int, w uint64) uint64 { return splitmix(uint64(k)<<32 ^ w) }

// set makes port k's word part of the key.
func (m *memo) set(k int, word uint64) {
	w := word & m.mask[k]
	m.hash ^= memoTerm(k, m.key[k]) ^ memoTerm(k, w)
	m.key[k] = w
}

// slot returns the slot of the current key with flip-flop state state, and
// whether it holds that key.
func (m *memo) slot(state uint8) (int, bool) {
	n := len(m.key)
	h := splitmix(m.hash^uint64(state)) | memoValid
	set := int(h&uint64(len(m.next)/memoWays-1)) * memoWays
	for i := set; i < set+memoWays; i++ {
		if m.tags[i] != h {
			continue
		}
		k := m.keys[i*(n+1):][:n+1]
		if k[0] == uint64(state) && slices.Equal(k[1:], m.key) {
			return i, true
		}
	}
	m.victim = (m.victim + 1) % memoWays
	return set + m.victim, false
}

// store remembers in slot i that the current key with flip-flop state
// state settles to next, with these statuses and contended nets.
func (m *memo) store(i int, state, next uint8, statuses []uint8, contended int) {
	n := len(m.key)
	k := m.keys[i*(n+1):][:n+1]
	m.tags[i] = splitmix(m.hash^uint64(state)) | memoValid
	k[0] = uint64(state)
	copy(k[1:], m.key)
	m.next[i] = uint64(next) | uint64(contended)<<8
	copy(m.statuses[i*n:][:n], statuses)
}

// result is what slot i holds: the next state, statuses and contended nets.
func (m *memo) result(i int) (uint8, []uint8, int) {
	n := len(m.key)
	return uint8(m.next[i]), m.statuses[i*n:][:n], int(m.next[i] >> 8)
}
