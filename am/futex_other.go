//go:build !linux

package am

import (
	"sync/atomic"
	"time"
)

// haveFutex: no futex here; an in-process PE sleeps in a channel receive.
const haveFutex = false

const (
	futexWait = iota
	futexWake
)

func futex(*atomic.Uint32, int, uint32, time.Duration) {}
