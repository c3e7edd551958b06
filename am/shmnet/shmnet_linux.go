package shmnet

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ttlpapers/ttlpapers/am"
	"github.com/ttlpapers/ttlpapers/am/internal/queue"
	"github.com/ttlpapers/ttlpapers/papers"
)

const (
	shmMagic   = 0x54544c4441544e31 // "TTLDATN1"
	shmVersion = 3
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
	queue.Peer
	pid     atomic.Int32 // the PE's process, once attached
	failed  atomic.Int32 // 1: it left because its program failed; cause says how
	cause   [184]byte    // NUL-terminated
	regions [shmRegions]shmRegion
}

// shmRegions is how many regions of one-sided memory (Direct) a PE may
// have at once: Split-C's spread arrays.
const shmRegions = 256

// shmRegion is one of a PE's regions as the others find it: a memfd of
// its process, which they open through /proc.
type shmRegion struct {
	size atomic.Uint64
	fd   atomic.Int32 // the memfd's number in the owner's process, plus 1; 0: none
	_    int32
}

// shmLayout places the header, the PEs' records, the inboxes and the
// staging rings (a head and queue.StageSize(n) bytes each, from src to
// dst on net at index (src*n+dst)*queue.NumNets+net). The file is sparse: a
// ring's pages take memory once a payload is staged in them.
func shmLayout(n int) (peers, boxes, stages, size int) {
	peers = shmHeader
	boxes = peers + n*int(unsafe.Sizeof(shmPeer{}))
	boxes = (boxes + 63) &^ 63
	stages = boxes + n*int(queue.NumNets)*int(unsafe.Sizeof(queue.Inbox{}))
	return peers, boxes, stages, stages + n*n*int(queue.NumNets)*shmStage(n)
}

// shmStage is the bytes of one staging ring and its head.
func shmStage(n int) int { return int(unsafe.Sizeof(queue.StageHead{})) + queue.StageSize(n) }

// Create makes the data network of n PE processes in a new file at
// path (mode 0600; it must not exist). The launcher makes it, each PE
// attaches with Open, and the launcher removes it when the run is
// over.
func Create(path string, n int) error {
	if n < 1 {
		return fmt.Errorf("shmnet: %d PEs: a data network needs at least 1", n)
	}
	size := Size(n)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("shmnet: create the shared data network: %w", err)
	}
	defer f.Close()
	if err := f.Truncate(int64(size)); err != nil {
		os.Remove(path)
		return fmt.Errorf("shmnet: create the shared data network: %w", err)
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("shmnet: map the shared data network: %w", err)
	}
	defer unix.Munmap(mem)
	return Init(mem, n)
}

// Size is the bytes of memory the data network of n PE processes
// takes (Init). Most of it is staging rings, whose pages take
// memory only once a payload is staged in them, in a file or any other
// shared mapping that starts sparse.
func Size(n int) int {
	_, _, _, size := shmLayout(max(n, 1))
	return size
}

// Init makes mem, Size(n) bytes of memory the n PE processes
// share (a file they map, as Create's, or memory another library
// gives them, as MPI_Win_allocate_shared's), their data network. One
// process calls it before any attaches (Attach). It writes only the
// header, the PEs' records, the inboxes and the rings' heads, so the rings
// stay sparse.
func Init(mem []byte, n int) error {
	if n < 1 {
		return fmt.Errorf("shmnet: %d PEs: a data network needs at least 1", n)
	}
	_, _, st, size := shmLayout(n)
	if len(mem) < size {
		return fmt.Errorf("shmnet: %d bytes for the data network of %d PEs: it needs shmnet.Size(%d) = %d", len(mem), n, n, size)
	}
	clear(mem[:st])
	s := view(mem, n)
	for i := range s.boxes {
		s.boxes[i].Init()
	}
	for src := range n {
		for dst := range n {
			for net := range queue.NumNets {
				h, _ := s.stage(src, dst, net)
				h.Reset()
			}
		}
	}
	h := (*shmHead)(unsafe.Pointer(&mem[0]))
	*h = shmHead{version: shmVersion, n: uint32(n), slots: queue.InboxSlots, maxMedium: am.MaxMedium, size: uint64(size), creator: int32(os.Getpid())}
	atomic.StoreUint64(&h.magic, shmMagic) // last: the network is complete
	return nil
}

// Net is one PE process's side of a shared-memory data network.
type Net struct {
	mem    []byte
	self   int
	peers  []shmPeer
	boxes  []queue.Inbox
	stages []byte   // the staging rings
	tails  []uint64 // this PE's position in each ring it stages into, by dst*queue.NumNets+net
	own    []region // this PE's regions (Direct), by number
	remote [][]byte // the others' regions mapped here, by pe*shmRegions+region, at first use
	mapped bool     // mem is Open's mapping, which Close unmaps
	// stats are the others' /proc/PID/stat, open from the first look at
	// each (-1 before; statGone: its process was gone by then), so that a
	// look allocates nothing and stays on that process if its pid is
	// reused; stat is where a look reads one.
	stats []int
	stat  [512]byte
}

type region struct {
	mem []byte
	fd  int
}

func view(mem []byte, n int) *Net {
	p, b, st, _ := shmLayout(n)
	return &Net{
		mem:    mem,
		peers:  unsafe.Slice((*shmPeer)(unsafe.Pointer(&mem[p])), n),
		boxes:  unsafe.Slice((*queue.Inbox)(unsafe.Pointer(&mem[b])), n*int(queue.NumNets)),
		stages: mem[st:],
		tails:  make([]uint64, n*int(queue.NumNets)),
		stats:  slices.Repeat([]int{-1}, n),
	}
}

// stage returns the head and bytes of the ring from src to dst on net.
func (s *Net) stage(src, dst int, net am.Net) (*queue.StageHead, []byte) {
	n := len(s.peers)
	sz := shmStage(n)
	at := ((src*n+dst)*int(queue.NumNets) + int(net)) * sz
	h := (*queue.StageHead)(unsafe.Pointer(&s.stages[at]))
	hs := int(unsafe.Sizeof(queue.StageHead{}))
	return h, s.stages[at+hs : at+sz : at+sz]
}

func (s *Net) MaxStaged() int { return queue.MaxStaged(queue.StageSize(len(s.peers))) }

func (s *Net) SendStaged(dst int, p *am.Packet, payload []byte) (bool, error) {
	if s.peers[dst].State.Load() == queue.Drained {
		return false, s.Gone(dst)
	}
	h, data := s.stage(s.self, dst, p.Net)
	return queue.StageSend(s, dst, h, data, &s.tails[dst*int(queue.NumNets)+int(p.Net)], p, payload)
}

func (s *Net) Staged(p *am.Packet) []byte {
	h, data := s.stage(int(p.Src), s.self, p.Net)
	return queue.StageOut(h, data, int(p.Staged))
}

func (s *Net) Unstage(p *am.Packet) {
	h, data := s.stage(int(p.Src), s.self, p.Net)
	queue.StageFree(h, len(data), int(p.Staged))
}

// Wait waits up to timeout until the data network at path exists
// and is complete (Create stores its magic last). A run that joins a
// board another run created starts its PEs only then: that run makes the
// data network just after the board, so a PE started in between would
// find none, or half of one.
func Wait(path string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var hb [8]byte
		f, err := os.Open(path)
		if err == nil {
			_, err = f.ReadAt(hb[:], 0)
			f.Close()
			if err == nil && *(*uint64)(unsafe.Pointer(&hb[0])) == shmMagic {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("shmnet: the data network %s was not complete queue.Within %v: the run that created its board may have failed; start the runs again", path, timeout)
		}
		time.Sleep(time.Millisecond)
	}
}

// Errors of a shared data network's file or memory (wrapped, naming it).
var (
	// ErrNotNetwork: the file or memory is not a data network, or one not
	// yet complete (Create or Init makes one).
	ErrNotNetwork = errors.New("not a data network")
	// ErrNoPE: the network has no such PE.
	ErrNoPE = errors.New("no such PE")
)

// Open attaches PE pe to the data network in the file at path,
// after checking that the file is one, complete and of this build's
// layout.
func Open(path string, pe int) (*Net, error) {
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("shmnet: open the shared data network: %w", err)
	}
	defer f.Close()
	var hb [shmHeader]byte
	if _, err := f.ReadAt(hb[:], 0); err != nil {
		return nil, fmt.Errorf("shmnet: %s is %w (%v): make it with shmnet.Create", path, ErrNotNetwork, err)
	}
	h := (*shmHead)(unsafe.Pointer(&hb[0]))
	if err := checkHead(h, pe); err != nil {
		return nil, fmt.Errorf("shmnet: %s %w", path, err)
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, Size(int(h.n)), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("shmnet: map the shared data network: %w", err)
	}
	s := attach(mem, pe, int(h.n))
	s.mapped = true
	return s, nil
}

// Attach attaches PE pe to the data network Init made in
// mem, after checking that it is one, complete and of this build's
// layout. mem stays the caller's: Close leaves it mapped.
func Attach(mem []byte, pe int) (*Net, error) {
	if len(mem) < shmHeader {
		return nil, fmt.Errorf("shmnet: %d bytes: %w: make one with shmnet.Init", len(mem), ErrNotNetwork)
	}
	h := (*shmHead)(unsafe.Pointer(&mem[0]))
	if atomic.LoadUint64(&h.magic) != shmMagic {
		return nil, fmt.Errorf("shmnet: the memory is %w, or not complete: make it with shmnet.Init before any PE attaches", ErrNotNetwork)
	}
	if err := checkHead(h, pe); err != nil {
		return nil, fmt.Errorf("shmnet: the memory %w", err)
	}
	if uint64(len(mem)) < h.size {
		return nil, fmt.Errorf("shmnet: %d bytes for the data network of %d PEs: it needs shmnet.Size(%d) = %d", len(mem), h.n, h.n, h.size)
	}
	return attach(mem, pe, int(h.n)), nil
}

// checkHead checks that the header h is a complete data network of this
// build's layout with a PE pe; its errors follow what was checked.
func checkHead(h *shmHead, pe int) error {
	switch {
	case h.magic != shmMagic:
		return fmt.Errorf("is %w, or not complete: make it with shmnet.Create", ErrNotNetwork)
	case h.version != shmVersion || h.slots != queue.InboxSlots || h.maxMedium != am.MaxMedium || h.size != uint64(Size(int(h.n))):
		return fmt.Errorf("was made by another build (layout %d, %d slots, %d-byte packets): run every PE from one build", h.version, h.slots, h.maxMedium)
	case pe < 0 || pe >= int(h.n):
		return fmt.Errorf("has PEs 0 to %d: %w %d", h.n-1, ErrNoPE, pe)
	}
	return nil
}

// attach is PE pe's side of the network of n PEs in mem.
func attach(mem []byte, pe, n int) *Net {
	s := view(mem, n)
	s.self = pe
	s.peers[pe].pid.Store(int32(os.Getpid()))
	return s
}

// Close unmaps the regions and, if Open mapped it, the file (after
// Leave).
func (s *Net) Close() error {
	for r := range s.own {
		if s.own[r].mem != nil {
			s.Free(r)
		}
	}
	for _, mem := range s.remote {
		if mem != nil {
			unix.Munmap(mem)
		}
	}
	s.remote = nil
	for k, fd := range s.stats {
		if fd >= 0 {
			unix.Close(fd)
		}
		s.stats[k] = -1
	}
	if !s.mapped {
		return nil
	}
	return unix.Munmap(s.mem)
}

// One-sided access (Direct): each region is a memfd of its PE's process,
// mapped there; another PE maps it at its first access, by opening
// /proc/PID/fd/N of the owner (its record in the file says which), so a
// get or put is a copy, as in process. A region is freed by every PE in
// the same order (Free), after a barrier: then nobody uses it.

func (s *Net) Allocate(n int) ([]byte, int, error) {
	if n < 1 {
		return nil, 0, papers.Errorf("am", s.self, "a region of %d bytes: allocate at least 1", n)
	}
	r := 0
	for r < len(s.own) && s.own[r].mem != nil {
		r++
	}
	if r == shmRegions {
		return nil, 0, papers.Errorf("am", s.self, "%d regions of one-sided memory at once: free some (AllSpreadFree) first", shmRegions)
	}
	fd, err := unix.MemfdCreate("ttlpapers-datanet", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, 0, papers.Errorf("am", s.self, "one-sided memory: memfd_create: %w", err)
	}
	var mem []byte
	if err = unix.Ftruncate(fd, int64(n)); err == nil {
		mem, err = unix.Mmap(fd, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	}
	if err != nil {
		unix.Close(fd)
		return nil, 0, papers.Errorf("am", s.self, "one-sided memory of %d bytes: %w", n, err)
	}
	if r == len(s.own) {
		s.own = append(s.own, region{})
	}
	s.own[r] = region{mem: mem, fd: fd}
	rec := &s.peers[s.self].regions[r]
	rec.size.Store(uint64(n))
	rec.fd.Store(int32(fd) + 1)
	return mem, r, nil
}

func (s *Net) Free(r int) error {
	if r < 0 || r >= len(s.own) || s.own[r].mem == nil {
		return papers.Errorf("am", s.self, "no region %d to free", r)
	}
	rec := &s.peers[s.self].regions[r]
	rec.fd.Store(0)
	rec.size.Store(0)
	err := unix.Munmap(s.own[r].mem)
	unix.Close(s.own[r].fd)
	s.own[r] = region{}
	for pe := range s.peers { // the others free theirs in the same order
		if i := pe*shmRegions + r; i < len(s.remote) && s.remote[i] != nil {
			unix.Munmap(s.remote[i])
			s.remote[i] = nil
		}
	}
	return err
}

// Region returns PE pe's region r from off on, n bytes of it.
func (s *Net) Region(pe, r, off, n int) ([]byte, error) {
	if s.peers[pe].State.Load() != queue.Attached {
		return nil, s.Gone(pe)
	}
	if r < 0 || r >= shmRegions {
		return nil, fmt.Errorf("no region %d", r)
	}
	var mem []byte
	if pe == s.self {
		if r < len(s.own) {
			mem = s.own[r].mem
		}
	} else {
		if s.remote == nil {
			s.remote = make([][]byte, len(s.peers)*shmRegions)
		}
		i := pe*shmRegions + r
		if s.remote[i] == nil {
			m, err := s.mapRegion(pe, r)
			if err != nil {
				return nil, err
			}
			s.remote[i] = m
		}
		mem = s.remote[i]
	}
	return queue.Within(mem, pe, r, off, n)
}

// mapRegion maps PE pe's region r here.
func (s *Net) mapRegion(pe, r int) ([]byte, error) {
	rec := &s.peers[pe].regions[r]
	fd, size := rec.fd.Load()-1, rec.size.Load()
	if fd < 0 {
		return nil, fmt.Errorf("PE %d has no region %d (not allocated there yet, or freed)", pe, r)
	}
	path := "/proc/" + strconv.Itoa(int(s.peers[pe].pid.Load())) + "/fd/" + strconv.Itoa(int(fd))
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		if g := s.Gone(pe); g != nil { // its process died: no /proc/PID/fd
			return nil, g
		}
		return nil, fmt.Errorf("one-sided access to PE %d's memory opens its memfd through %s: %w (the PE processes must run as one user)", pe, path, err)
	}
	defer f.Close()
	mem, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("one-sided access to PE %d's memory: map %s: %w", pe, path, err)
	}
	return mem, nil
}

func (s *Net) Get(pe, r, off int, dst []byte) error { return queue.Get(s, pe, r, off, dst) }
func (s *Net) Put(pe, r, off int, src []byte) error { return queue.Put(s, pe, r, off, src) }

func (s *Net) Self() int { return s.self }
func (s *Net) PEs() int  { return len(s.peers) }

func (s *Net) Send(dst int, p *am.Packet) (bool, error) {
	pe := &s.peers[dst]
	if pe.State.Load() == queue.Drained {
		return false, s.Gone(dst)
	}
	sl, pos, ok := s.boxes[dst*int(queue.NumNets)+int(p.Net)].Put(s.self, p)
	if !ok {
		return false, nil
	}
	if pe.Sleeping.Load() != 0 {
		pe.Wakes.Add(1)
		queue.Futex(&pe.Wakes, queue.FutexWake, 1<<30, 0)
	}
	if pe.Lost(sl, pos, func() bool { return s.dead(dst) }) {
		return true, s.Gone(dst)
	}
	return true, nil
}

func (s *Net) Recv(net am.Net, p *am.Packet) bool {
	return s.boxes[s.self*int(queue.NumNets)+int(net)].Take(p)
}

func (s *Net) Wait(d time.Duration, done <-chan struct{}) {
	pe := &s.peers[s.self]
	w := pe.Wakes.Load()
	pe.Sleeping.Store(1)
	defer pe.Sleeping.Store(0)
	b := s.boxes[s.self*int(queue.NumNets):]
	if b[am.Left].Ready() || b[am.Right].Ready() {
		return
	}
	select {
	case <-done:
		return
	default:
	}
	queue.Futex(&pe.Wakes, queue.FutexWait, w, d)
}

// Crowded: the PEs are processes, so they outnumber the CPUs when there
// are more of them than the machine has.
func (s *Net) Crowded() bool { return len(s.peers) > runtime.NumCPU() }

func (s *Net) Beat() { b := &s.peers[s.self].Polls; b.Store(b.Load() + 1) }

func (s *Net) Beats(k int) uint32 {
	return queue.Beats(len(s.peers), s.self, k, func(i int) *queue.Peer { return &s.peers[i].Peer })
}

// dead reports whether PE k's process has ended (processEnded).
func (s *Net) dead(k int) bool {
	pid := s.peers[k].pid.Load()
	return pid > 0 && processEnded(s, k, pid)
}

// processEnded reports whether PE k's process pid has ended: it no
// longer exists, or it is a zombie its parent has not reaped yet. A
// variable, so that a test can end a PE between two of Gone's looks.
var processEnded = (*Net).ended

// ended is processEnded.
func (s *Net) ended(k int, pid int32) bool {
	if errors.Is(unix.Kill(int(pid), 0), unix.ESRCH) {
		return true
	}
	fd := s.stats[k]
	if fd == statGone {
		return true
	}
	if fd < 0 {
		var err error
		if fd, err = unix.Open("/proc/"+strconv.Itoa(int(pid))+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
			return false // no /proc: the kill above is all there is
		}
		s.stats[k] = fd
	}
	n, err := unix.Pread(fd, s.stat[:], 0)
	if err != nil { // reaped: the entry went with the process
		unix.Close(fd)
		s.stats[k] = statGone
		return true
	}
	// pid (comm) state …: the state follows the last ')'.
	stat := s.stat[:n]
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X')
}

// statGone in Net.stats: the process had gone at a look.
const statGone = -2

func (s *Net) Gone(k int) error {
	pe := &s.peers[k]
	if pe.State.Load() == queue.Attached {
		if !s.dead(k) {
			return nil
		}
		// A PE leaves before its process ends, so one seen attached and
		// then ended may have left in between: look again before calling
		// it dead (a PE that returned is not a failure).
		if pe.State.Load() == queue.Attached {
			return &am.GoneError{PE: k, Cause: fmt.Errorf("its process (pid %d) died without leaving", pe.pid.Load()), Died: true}
		}
	}
	if pe.failed.Load() == 0 {
		return &am.GoneError{PE: k}
	}
	c := pe.cause[:]
	for i, b := range c {
		if b == 0 {
			c = c[:i]
			break
		}
	}
	return &am.GoneError{PE: k, Cause: errors.New(string(c))}
}

func (s *Net) Leave(cause error, drain func()) {
	pe := &s.peers[s.self]
	if cause != nil {
		copy(pe.cause[:len(pe.cause)-1], cause.Error())
		pe.failed.Store(1)
	}
	pe.Leave(drain)
	for k := range s.peers { // wake every waiter: one may be waiting on this PE
		s.peers[k].Wakes.Add(1)
		queue.Futex(&s.peers[k].Wakes, queue.FutexWake, 1<<30, 0)
	}
}
