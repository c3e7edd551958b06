package emu_test

import (
	"fmt"
	"os"
	"runtime"
	"time"
)

// checkLeaks fails a test run whose tests left goroutines behind: once the
// tests are done, the goroutine count must come back to what it was at the
// start (goroutines that are ending get a moment to end).
func checkLeaks(code int) int {
	if code != 0 {
		return code
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > baseGoroutines {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			fmt.Fprintf(os.Stderr, "goroutines leaked: %d at the start, %d at the end:\n%s\n", baseGoroutines, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
			return 1
		}
		time.Sleep(time.Millisecond)
	}
	return code
}

var baseGoroutines = runtime.NumGoroutine()
