//go:build !linux

package queue

import (
	"sync/atomic"
	"time"
)

// HaveFutex: no Futex here; an in-process PE sleeps in a channel receive.
const HaveFutex = false

const (
	FutexWait = iota
	FutexWake
)

func Futex(*atomic.Uint32, int, uint32, time.Duration) {}
