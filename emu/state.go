package emu

import (
	"fmt"
	"os"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// state is a board's mutable state as one flat array of 32-bit words, so the
// same simulator runs on ordinary memory (New) or on a file that several
// processes map (CreateShared, OpenShared). Words are changed only under the
// board lock, except the status registers and the abort word, which are
// stored and loaded atomically so that PEs poll them without the lock.
type state []uint32

func (s state) load(i int) uint32     { return atomic.LoadUint32(&s[i]) }
func (s state) store(i int, v uint32) { atomic.StoreUint32(&s[i], v) }

// atomic64 is the 64-bit word at i (even, so 8-byte aligned).
func (s state) atomic64(i int) *atomic.Uint64 {
	return (*atomic.Uint64)(unsafe.Pointer(&s[i]))
}

func (s state) load64(i int) uint64 { return uint64(s[i]) | uint64(s[i+1])<<32 }
func (s state) add64(i int, d uint64) {
	v := s.load64(i) + d
	s[i], s[i+1] = uint32(v), uint32(v>>32)
}

const (
	stateMagic   = 0x50415052 // "PAPR"
	stateVersion = 3
	reasonBytes  = 256
	portWords    = 16 // one 64-byte cache line per port
)

// Header words.
const (
	hMagic = iota
	hVersion
	hSize // connectors on the board (the hw netlist size)
	hPEs  // cables plugged in at start
	hNets
	hDrivers
	hGates
	hOwner      // pid of the process that created a shared board
	hAbort      // 0, abortWriting, or abortSet
	hContention // 2 words
	hReasonLen  = hContention + 2
	hAbortPE    = hReasonLen + 1 // the PE blamed, plus 1 (0: none)
	hReason     = 16             // reasonBytes/4 words
	// The lock word has a cache line of its own: every PE reads hAbort at
	// every operation, and the lock changes hands at every write.
	hLock       = hReason + reasonBytes/4 // pid of the holder (| lockWaiters), shared boards only
	headerWords = hLock + 16
)

// Port register words, from Port.base.
const (
	portData = iota
	portControl
	portPins // PC-driven pin levels (lpt.Pins) from the registers
	portPlugged
	portStuck0 // pins held low (lpt.Pins)
	portStuck1 // pins held high
	portStatus // written atomically, polled without the lock
	portClaim  // pid of the process holding the port, 0 when free
	portOpened // 1 once the port has been claimed
	_
	// Two words, 8-byte aligned for atomic access: when Err first reported
	// the board's abort (Unix ns).
	portNoticed
)

// pid identifies this process in lock and claim words (os.Getpid is a
// system call, too slow for every lock).
var pid = uint32(os.Getpid())

const (
	abortWriting = 1
	abortSet     = 2
)

// layout places the parts of the state: the header and the port registers
// in words; net levels, driver states and flip-flop states one byte each
// (packed, so that a settle touches few cache lines — on a shared board
// they move between the PEs' cores at every write) in the bytes from word
// bits on.
type layout struct {
	words, ports, bits   int // word offsets
	nets, drivers, gates int // byte offsets from bits
}

func newLayout(size, nets, drivers, gates int) layout {
	l := layout{ports: headerWords}
	l.bits = l.ports + size*portWords
	l.drivers = l.nets + nets
	l.gates = l.drivers + drivers
	l.words = l.bits + (l.gates+gates+3)/4
	return l
}

// setState points the board at its state words.
func (b *Board) setState(s state) {
	b.st = s
	b.bits = nil
	if s != nil {
		b.bits = unsafe.Slice((*byte)(unsafe.Pointer(&s[b.lay.bits])), 4*(b.lay.words-b.lay.bits))
	}
}

func (l layout) port(k int) int { return l.ports + k*portWords }

// init writes a fresh header; the board's powerOn sets the levels.
func (s state) init(b *Board) {
	s[hMagic], s[hVersion] = stateMagic, stateVersion
	s[hSize], s[hPEs] = uint32(b.hw.PEs), uint32(b.pes)
	s[hNets], s[hDrivers], s[hGates] = uint32(len(b.nets)), uint32(len(b.drivers)), uint32(len(b.gates))
	s[hOwner] = uint32(os.Getpid())
	for k := 0; k < b.pes; k++ {
		s[b.lay.port(k)+portPlugged] = 1
	}
}

func (b *Board) driverBits(d int32) (on, val bool) {
	w := b.bits[b.lay.drivers+int(d)]
	return w&1 != 0, w&2 != 0
}

// setDriverBits stores a driver's state and reports whether it changed.
func (b *Board) setDriverBits(d int32, on, val bool) bool {
	if d < 0 {
		return false
	}
	w := byte(bit(on) | bit(val)<<1)
	i := b.lay.drivers + int(d)
	if b.bits[i] == w {
		return false
	}
	b.bits[i] = w
	return true
}

func (b *Board) setNet(n int32, v bool) { b.bits[b.lay.nets+int(n)] = byte(bit(v)) }

// dff returns a flip-flop's stored state.
func (b *Board) dff(g int32) hw.DFFState {
	w := b.bits[b.lay.gates+int(g)]
	return hw.DFFState{Q: w&1 != 0, Clk: w&2 != 0}
}

func (b *Board) setDFF(g int32, s hw.DFFState) {
	b.bits[b.lay.gates+int(g)] = byte(bit(s.Q) | bit(s.Clk)<<1)
}

func (b *Board) setClk(g int32, clk bool) {
	s := b.dff(g)
	s.Clk = clk
	b.setDFF(g, s)
}

func bit(v bool) uint32 {
	if v {
		return 1
	}
	return 0
}

func (p *Port) get(w int) uint32    { return p.b.st[p.base+w] }
func (p *Port) set(w int, v uint32) { p.b.st[p.base+w] = v }
func (p *Port) data() uint8         { return uint8(p.get(portData)) }
func (p *Port) control() uint8      { return uint8(p.get(portControl)) }
func (p *Port) pins() lpt.Pins      { return lpt.Pins(p.get(portPins)) }
func (p *Port) plugged() bool       { return p.get(portPlugged) != 0 }

// lock takes the board lock: the in-process mutex and, on a shared board,
// the lock word in the mapping. Taking over the lock of a process that died
// holding it re-settles the whole board, as that process may have died
// half-way through a settle.
func (b *Board) lock() {
	b.mu.Lock()
	if b.shared != nil && b.st.xlock(hLock, pid) {
		b.resettle()
	}
}

func (b *Board) unlock() {
	if b.shared != nil {
		b.st.xunlock(hLock)
	}
	b.mu.Unlock()
}

// claim gives p to the calling process. On a shared board a port held by a
// process that no longer exists is taken over.
func (b *Board) claim(p *Port) error {
	me := pid
	w := &b.st[p.base+portClaim]
	for {
		holder := atomic.LoadUint32(w)
		if holder != 0 && (b.shared == nil || alive(int(holder))) {
			return fmt.Errorf("emu: PE %d's port is already open (by process %d; two PEs on one port?): close it first", p.pe, holder)
		}
		if atomic.CompareAndSwapUint32(w, holder, me) {
			b.st.store(p.base+portOpened, 1)
			return nil
		}
	}
}

func (b *Board) release(p *Port) { b.st.store(p.base+portClaim, 0) }

// PortInfo is what a board knows about one connector's user.
type PortInfo struct {
	Opened  bool  // the port has been claimed (Board.Port) at least once
	Holder  int   // pid of the process holding the port now, 0 if none
	Data    uint8 // the data register
	Control uint8 // the control register
	// Noticed is when the PE's port first reported the board's abort to
	// its user (zero if it has not): when that PE got its error.
	Noticed time.Time
}

// PortInfo reports on PE k's port: a launcher uses it to tell a program that
// never opened the board, or that exited without closing its PE (the port
// is still claimed), from one that finished cleanly.
func (b *Board) PortInfo(pe int) PortInfo {
	b.lock()
	defer b.unlock()
	p := b.ports[pe]
	info := PortInfo{Opened: b.st.load(p.base+portOpened) != 0, Holder: int(b.st.load(p.base + portClaim)),
		Data: p.data(), Control: p.control()}
	if ns := b.st.atomic64(p.base + portNoticed).Load(); ns != 0 {
		info.Noticed = time.Unix(0, int64(ns))
	}
	return info
}

// AbortError is the sticky error every port of an aborted board returns.
type AbortError struct {
	PE     int // the PE blamed, -1 if none
	Reason string
}

func (e *AbortError) Error() string { return "emu: board aborted: " + e.Reason }

// deadPartner checks whether PE turn%PEs has died while holding its port (a
// shared board's PEs are processes; one killed cannot say so). It returns
// that PE and the abort reason, or -1. One PE per call keeps the cost of a
// check (a signal and a /proc read) flat as boards grow.
func (b *Board) deadPartner(turn int) (int, string) {
	k := turn % len(b.ports)
	w := b.ports[k].base + portClaim
	// Read the claim again once its holder is found dead: a PE that closed
	// its port and exited between the first read and the check did not die
	// holding it, and a dead process can no longer release it.
	if holder := b.st.load(w); holder != 0 && holder != pid && !alive(int(holder)) && b.st.load(w) == holder {
		return k, fmt.Sprintf("PE %d's process (pid %d) died without closing its PE", k, holder)
	}
	return -1, ""
}

// Abort marks the board unusable: from now on every port's Err returns an
// *AbortError with the reason, so every PE's next operation fails and every
// waiting PE stops within a few polls. pe is the PE to blame (-1: none).
// The first call wins. A launcher calls it when a PE process dies. It does
// not take the board lock, so it works even when the dead process held it.
func (b *Board) Abort(pe int, reason string) {
	if !atomic.CompareAndSwapUint32(&b.st[hAbort], 0, abortWriting) {
		return
	}
	if len(reason) > reasonBytes {
		reason = reason[:reasonBytes]
	}
	copy(b.reasonBuf(), reason)
	b.st[hReasonLen] = uint32(len(reason))
	b.st[hAbortPE] = uint32(pe + 1)
	b.st.store(hAbort, abortSet)
}

// Aborted returns the PE blamed (-1 if none) and the reason given to Abort,
// and whether the board has been aborted (by Abort, or by a port that found
// a PE's process dead).
func (b *Board) Aborted() (pe int, reason string, ok bool) {
	if b.st.load(hAbort) != abortSet {
		return -1, "", false
	}
	return int(b.st[hAbortPE]) - 1, b.abortReason(), true
}

func (b *Board) abortReason() string {
	return string(b.reasonBuf()[:b.st[hReasonLen]])
}

func (b *Board) reasonBuf() []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(&b.st[hReason])), reasonBytes)
}
