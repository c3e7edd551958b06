package emu

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ttlpapers/ttlpapers/hw"
)

// CreateShared creates an emulated board for pes PEs in the file at path
// (normally under /dev/shm), for processes to attach to with OpenShared: the
// same netlist and simulation as New, with the state in the file. The file
// appears complete or not at all. If it already exists and the process that
// created it is gone (a crashed run), the stale board is replaced; if that
// process is alive, CreateShared fails. Remove the file when done.
func CreateShared(path string, pes int) (*Board, error) {
	size, err := hw.SizeFor(pes)
	if err != nil {
		return nil, err
	}
	b := compile(hw.MustNew(size), pes)
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("emu: create shared board: %w", err)
	}
	defer os.Remove(tmp)
	defer f.Close()
	if err := f.Truncate(int64(4 * b.lay.words)); err != nil {
		return nil, fmt.Errorf("emu: create shared board: %w", err)
	}
	if err := b.mapFile(f); err != nil {
		return nil, err
	}
	b.st.init(b)
	b.lock()
	b.powerOn()
	b.unlock()
	for try := 0; ; try++ {
		err := os.Link(tmp, path)
		if err == nil {
			return b, nil
		}
		if !errors.Is(err, os.ErrExist) || try > 0 {
			b.Close()
			return nil, fmt.Errorf("emu: create shared board: %w", err)
		}
		if owner, err := sharedOwner(path); err != nil || alive(owner) {
			b.Close()
			if err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("emu: shared board %s is in use by process %d: choose another name, or stop that process", path, owner)
		}
		// Stale: its creator is gone. Replace it.
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			b.Close()
			return nil, fmt.Errorf("emu: remove stale shared board: %w", err)
		}
	}
}

// OpenShared attaches to a board made by CreateShared.
func OpenShared(path string) (*Board, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("emu: open shared board: %w", err)
	}
	defer f.Close()
	var hdr [headerWords]uint32
	if _, err := f.ReadAt(unsafe.Slice((*byte)(unsafe.Pointer(&hdr[0])), 4*len(hdr)), 0); err != nil {
		return nil, fmt.Errorf("emu: %s is not a shared board: %w", path, err)
	}
	if hdr[hMagic] != stateMagic || hdr[hVersion] != stateVersion {
		return nil, fmt.Errorf("emu: %s is not a version-%d shared board (made by another program or version?)", path, stateVersion)
	}
	size, pes := int(hdr[hSize]), int(hdr[hPEs])
	if s, err := hw.SizeFor(size); err != nil || s != size || pes < 1 || pes > size {
		return nil, fmt.Errorf("emu: %s has a corrupt header (%d PEs on a %d-PE board)", path, pes, size)
	}
	b := compile(hw.MustNew(size), pes)
	if hdr[hNets] != uint32(len(b.nets)) || hdr[hDrivers] != uint32(len(b.drivers)) || hdr[hGates] != uint32(len(b.gates)) {
		return nil, fmt.Errorf("emu: %s was made from a different netlist (another version of this program?)", path)
	}
	if err := b.mapFile(f); err != nil {
		return nil, err
	}
	return b, nil
}

func sharedOwner(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("emu: shared board: %w", err)
	}
	defer f.Close()
	var hdr [hOwner + 1]uint32
	if _, err := f.ReadAt(unsafe.Slice((*byte)(unsafe.Pointer(&hdr[0])), 4*len(hdr)), 0); err != nil || hdr[hMagic] != stateMagic {
		return 0, fmt.Errorf("emu: %s exists and is not a shared board: remove it or choose another name", path)
	}
	return int(hdr[hOwner]), nil
}

func (b *Board) mapFile(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("emu: shared board: %w", err)
	}
	if fi.Size() < int64(4*b.lay.words) {
		return fmt.Errorf("emu: shared board %s is truncated (%d bytes, want %d)", f.Name(), fi.Size(), 4*b.lay.words)
	}
	m, err := unix.Mmap(int(f.Fd()), 0, 4*b.lay.words, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("emu: map shared board: %w", err)
	}
	b.shared = m
	b.setState(unsafe.Slice((*uint32)(unsafe.Pointer(&m[0])), b.lay.words))
	return nil
}

// Close detaches from a shared board (the file stays until removed); the
// board and its ports must not be used afterwards. It does nothing for an
// in-process board.
func (b *Board) Close() error {
	if b.shared == nil {
		return nil
	}
	m := b.shared
	b.shared = nil
	b.setState(nil)
	return unix.Munmap(m)
}

// Owner returns the pid of the process that created a shared board (for an
// in-process board, this process).
func (b *Board) Owner() int { return int(b.st[hOwner]) }

// alive reports whether process pid exists and has not exited: a process
// killed but not yet reaped by its parent (a zombie) is dead. A variable, so
// that tests can stage a death at a chosen moment.
var alive = processAlive

func processAlive(pid int) bool {
	if err := unix.Kill(pid, 0); err != nil && !errors.Is(err, unix.EPERM) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	// The state follows the command name, which is in parentheses.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || (stat[i+2] != 'Z' && stat[i+2] != 'X')
}

const (
	lockWaiters = 1 << 31 // some process sleeps on the lock word
	futexWait   = 0       // FUTEX_WAIT, not private: the word is in a shared mapping
	futexWake   = 1
	lockSpins   = 2000
	lockYields  = 50
	// lockStale is how long a waiter waits before checking that the holder
	// still exists.
	lockStale = 5 * time.Millisecond
)

// xlock takes the cross-process lock in word i: spin (the lock is held for
// a settle, well under a microsecond), then yield the CPU, then sleep on a
// futex. The word holds the holder's pid, so a waiter can take over the lock
// of a process that died holding it; it then reports true.
func (s state) xlock(i int, me uint32) (tookOver bool) {
	w := &s[i]
	for n := 0; n < lockSpins; n++ {
		if atomic.LoadUint32(w) == 0 && atomic.CompareAndSwapUint32(w, 0, me) {
			return false
		}
	}
	var start time.Time
	timeout := unix.NsecToTimespec(int64(time.Millisecond))
	for n := 0; ; n++ {
		v := atomic.LoadUint32(w)
		if v == 0 {
			// Keep the waiters bit once set: others may still sleep.
			if atomic.CompareAndSwapUint32(w, 0, me|uint32(min(n/lockYields, 1))*lockWaiters) {
				return false
			}
			continue
		}
		if n < lockYields {
			// The holder may be descheduled: let it run.
			unix.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
			continue
		}
		if v&lockWaiters == 0 && !atomic.CompareAndSwapUint32(w, v, v|lockWaiters) {
			continue
		}
		unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexWait, uintptr(v|lockWaiters), uintptr(unsafe.Pointer(&timeout)), 0, 0)
		if start.IsZero() {
			start = time.Now()
		} else if time.Since(start) > lockStale && !alive(int(v&^lockWaiters)) &&
			atomic.CompareAndSwapUint32(w, v|lockWaiters, me|lockWaiters) {
			return true
		}
	}
}

func (s state) xunlock(i int) {
	if atomic.SwapUint32(&s[i], 0)&lockWaiters != 0 {
		unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&s[i])), futexWake, 1, 0, 0, 0)
	}
}
