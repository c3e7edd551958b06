package queue

import (
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// HaveFutex: a PE may sleep on a Futex word (its peer's Wakes): between
// processes (am/shmnet), and in process while every PE has a CPU (Local).
const HaveFutex = true

const (
	FutexWait = 0 // FUTEX_WAIT, shared between processes
	FutexWake = 1
)

// Futex waits on or wakes the word at addr (a wait returns at once if it
// no longer holds val, after d, or when woken).
func Futex(addr *atomic.Uint32, op int, val uint32, d time.Duration) {
	var ts *unix.Timespec
	if op == FutexWait {
		t := unix.NsecToTimespec(int64(d))
		ts = &t
	}
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), uintptr(op), uintptr(val), uintptr(unsafe.Pointer(ts)), 0, 0)
	runtime.KeepAlive(ts)
}
