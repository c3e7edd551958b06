package am

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The data network of a program whose PEs are processes on one machine
// (papersctl run): the inboxes of Local in a file under /dev/shm that every
// PE maps. A PE's process that dies without leaving — SIGKILL — is seen by
// the others at their next look (its pid no longer exists), so a wait on
// it ends in a *GoneError naming it, as on the shared-memory board.

const (
	shmMagic   = 0x54544c4441544e31 // "TTLDATN1"
	shmVersion = 2
	shmHeader  = 64
)

type shmHead struct {
	magic            uint64
	version, n       uint32
	slots, maxMedium uint32
	size             uint64
	creator          int32
}

// shmPeer is a PE's record in the file.
type shmPeer struct {
	peer
	pid    atomic.Int32 // the PE's process, once attached
	failed atomic.Int32 // 1: it left because its program failed; cause says how
	cause  [184]byte    // NUL-terminated
}

// shmLayout places the header, the PEs' records, the inboxes and the
// staging rings (stage.go: a head and stageSize(n) bytes each, from src to
// dst on net at index (src*n+dst)*numNets+net). The file is sparse: a
// ring's pages take memory once a payload is staged in them.
func shmLayout(n int) (peers, boxes, stages, size int) {
	peers = shmHeader
	boxes = peers + n*int(unsafe.Sizeof(shmPeer{}))
	boxes = (boxes + 63) &^ 63
	stages = boxes + n*int(numNets)*int(unsafe.Sizeof(inbox{}))
	return peers, boxes, stages, stages + n*n*int(numNets)*shmStage(n)
}

// shmStage is the bytes of one staging ring and its head.
func shmStage(n int) int { return int(unsafe.Sizeof(stageHead{})) + stageSize(n) }

// CreateShared makes the data network of n PE processes in a new file at
// path (mode 0600; it must not exist). The launcher makes it, each PE
// attaches with OpenShared, and the launcher removes it when the run is
// over.
func CreateShared(path string, n int) error {
	if n < 1 {
		return fmt.Errorf("am: %d PEs: a data network needs at least 1", n)
	}
	_, _, _, size := shmLayout(n)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("am: create the shared data network: %w", err)
	}
	defer f.Close()
	if err := f.Truncate(int64(size)); err != nil {
		os.Remove(path)
		return fmt.Errorf("am: create the shared data network: %w", err)
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("am: map the shared data network: %w", err)
	}
	defer unix.Munmap(mem)
	s := view(mem, n)
	for i := range s.boxes {
		s.boxes[i].init()
	}
	h := (*shmHead)(unsafe.Pointer(&mem[0]))
	*h = shmHead{version: shmVersion, n: uint32(n), slots: inboxSlots, maxMedium: MaxMedium, size: uint64(size), creator: int32(os.Getpid())}
	atomic.StoreUint64(&h.magic, shmMagic) // last: the file is complete
	return nil
}

// Shared is one PE process's side of a shared-memory data network.
type Shared struct {
	mem    []byte
	self   int
	peers  []shmPeer
	boxes  []inbox
	stages []byte   // the staging rings
	tails  []uint64 // this PE's position in each ring it stages into, by dst*numNets+net
}

func view(mem []byte, n int) *Shared {
	p, b, st, _ := shmLayout(n)
	return &Shared{
		mem:    mem,
		peers:  unsafe.Slice((*shmPeer)(unsafe.Pointer(&mem[p])), n),
		boxes:  unsafe.Slice((*inbox)(unsafe.Pointer(&mem[b])), n*int(numNets)),
		stages: mem[st:],
		tails:  make([]uint64, n*int(numNets)),
	}
}

// stage returns the head and bytes of the ring from src to dst on net.
func (s *Shared) stage(src, dst int, net Net) (*stageHead, []byte) {
	n := len(s.peers)
	sz := shmStage(n)
	at := ((src*n+dst)*int(numNets) + int(net)) * sz
	h := (*stageHead)(unsafe.Pointer(&s.stages[at]))
	hs := int(unsafe.Sizeof(stageHead{}))
	return h, s.stages[at+hs : at+sz : at+sz]
}

func (s *Shared) maxStaged() int { return maxStaged(stageSize(len(s.peers))) }

func (s *Shared) sendStaged(dst int, p *Packet, payload []byte) (bool, error) {
	if s.peers[dst].state.Load() == drained {
		return false, s.Gone(dst)
	}
	h, data := s.stage(s.self, dst, p.Net)
	return stageSend(s, dst, h, data, &s.tails[dst*int(numNets)+int(p.Net)], p, payload)
}

func (s *Shared) staged(p *Packet) []byte {
	h, data := s.stage(int(p.Src), s.self, p.Net)
	return stageOut(h, data, int(p.Staged))
}

func (s *Shared) unstage(p *Packet) {
	h, data := s.stage(int(p.Src), s.self, p.Net)
	stageFree(h, len(data), int(p.Staged))
}

// OpenShared attaches PE pe to the data network in the file at path,
// after checking that the file is one, complete and of this build's
// layout.
func OpenShared(path string, pe int) (*Shared, error) {
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("am: open the shared data network: %w", err)
	}
	defer f.Close()
	var hb [shmHeader]byte
	if _, err := f.ReadAt(hb[:], 0); err != nil {
		return nil, fmt.Errorf("am: %s is not a data network (%v): make it with am.CreateShared", path, err)
	}
	h := (*shmHead)(unsafe.Pointer(&hb[0]))
	_, _, _, size := shmLayout(int(h.n))
	switch {
	case h.magic != shmMagic:
		return nil, fmt.Errorf("am: %s is not a data network, or not complete: make it with am.CreateShared", path)
	case h.version != shmVersion || h.slots != inboxSlots || h.maxMedium != MaxMedium || h.size != uint64(size):
		return nil, fmt.Errorf("am: %s was made by another build (layout %d, %d slots, %d-byte packets): run every PE from one build", path, h.version, h.slots, h.maxMedium)
	case pe < 0 || pe >= int(h.n):
		return nil, fmt.Errorf("am: PE %d: the data network in %s has PEs 0 to %d", pe, path, h.n-1)
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("am: map the shared data network: %w", err)
	}
	s := view(mem, int(h.n))
	s.self = pe
	s.peers[pe].pid.Store(int32(os.Getpid()))
	return s, nil
}

// Close unmaps the file (after Leave).
func (s *Shared) Close() error { return unix.Munmap(s.mem) }

func (s *Shared) Self() int { return s.self }
func (s *Shared) PEs() int  { return len(s.peers) }

func (s *Shared) Send(dst int, p *Packet) (bool, error) {
	pe := &s.peers[dst]
	if pe.state.Load() == drained {
		return false, s.Gone(dst)
	}
	sl, pos, ok := s.boxes[dst*int(numNets)+int(p.Net)].put(s.self, p)
	if !ok {
		return false, nil
	}
	if pe.sleeping.Load() != 0 {
		pe.wakes.Add(1)
		futex(&pe.wakes, futexWake, 1<<30, 0)
	}
	if pe.lost(sl, pos, func() bool { return s.dead(dst) }) {
		return true, s.Gone(dst)
	}
	return true, nil
}

func (s *Shared) Recv(net Net, p *Packet) bool {
	return s.boxes[s.self*int(numNets)+int(net)].take(p)
}

func (s *Shared) Wait(d time.Duration, done <-chan struct{}) {
	pe := &s.peers[s.self]
	w := pe.wakes.Load()
	pe.sleeping.Store(1)
	defer pe.sleeping.Store(0)
	b := s.boxes[s.self*int(numNets):]
	if b[Left].ready() || b[Right].ready() {
		return
	}
	select {
	case <-done:
		return
	default:
	}
	futex(&pe.wakes, futexWait, w, d)
}

// Crowded: the PEs are processes, so they outnumber the CPUs when there
// are more of them than the machine has.
func (s *Shared) Crowded() bool { return len(s.peers) > runtime.NumCPU() }

// dead reports whether PE k's process has gone without leaving: it no
// longer exists, or it is a zombie its parent has not reaped yet.
func (s *Shared) dead(k int) bool {
	pid := s.peers[k].pid.Load()
	if pid <= 0 {
		return false
	}
	if errors.Is(unix.Kill(int(pid), 0), unix.ESRCH) {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(int(pid)) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) state …: the state follows the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X')
}

func (s *Shared) Gone(k int) error {
	pe := &s.peers[k]
	switch {
	case pe.state.Load() != attached:
		if pe.failed.Load() == 0 {
			return &GoneError{PE: k}
		}
		c := pe.cause[:]
		for i, b := range c {
			if b == 0 {
				c = c[:i]
				break
			}
		}
		return &GoneError{PE: k, Cause: errors.New(string(c))}
	case s.dead(k):
		return &GoneError{PE: k, Cause: fmt.Errorf("its process (pid %d) died without leaving", pe.pid.Load())}
	}
	return nil
}

func (s *Shared) Leave(cause error, drain func()) {
	pe := &s.peers[s.self]
	if cause != nil {
		copy(pe.cause[:len(pe.cause)-1], cause.Error())
		pe.failed.Store(1)
	}
	pe.leave(drain)
	for k := range s.peers { // wake every waiter: one may be waiting on this PE
		s.peers[k].wakes.Add(1)
		futex(&s.peers[k].wakes, futexWake, 1<<30, 0)
	}
}

const (
	futexWait = 0 // FUTEX_WAIT, shared between processes
	futexWake = 1
)

// futex waits on or wakes the word at addr (a wait returns at once if it
// no longer holds val, after d, or when woken).
func futex(addr *atomic.Uint32, op int, val uint32, d time.Duration) {
	var ts *unix.Timespec
	if op == futexWait {
		t := unix.NsecToTimespec(int64(d))
		ts = &t
	}
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), uintptr(op), uintptr(val), uintptr(unsafe.Pointer(ts)), 0, 0)
	runtime.KeepAlive(ts)
}
