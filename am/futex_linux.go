package am

import (
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// haveFutex: a PE may sleep on a futex word (its peer's wakes): between
// processes (Shared), and in process while every PE has a CPU (Local).
const haveFutex = true

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
