//go:build !linux

package emu

import (
	"runtime"
	"time"
)

// Boards are shared between processes on Linux only; elsewhere every board
// is in-process and waits on Go channels, so these are never called.
func futexWait(w *uint32, val uint32, d time.Duration) {}
func futexWake(w *uint32)                              {}
func schedYield()                                      { runtime.Gosched() }
