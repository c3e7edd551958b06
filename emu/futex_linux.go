package emu

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Not FUTEX_PRIVATE: the words are in a mapping shared between processes.
const (
	futexWaitOp = 0 // FUTEX_WAIT
	futexWakeOp = 1 // FUTEX_WAKE
)

// futexWait sleeps while *w == val, for at most d (or until a signal).
func futexWait(w *uint32, val uint32, d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexWaitOp, uintptr(val), uintptr(unsafe.Pointer(&ts)), 0, 0)
}

// futexWake wakes the sleepers on w.
func futexWake(w *uint32) {
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexWakeOp, 1<<30, 0, 0, 0)
}

// schedYield gives this CPU to another runnable process, if any.
func schedYield() { unix.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0) }
