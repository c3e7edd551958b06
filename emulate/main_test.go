package emulate_test

import (
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"
)

// TestMain fails the run if the tests leave goroutines behind: RunPorts
// must end every goroutine it starts, on every path.
func TestMain(m *testing.M) {
	base := runtime.NumGoroutine()
	code := m.Run()
	deadline := time.Now().Add(5 * time.Second)
	for code == 0 && runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			fmt.Fprintf(os.Stderr, "goroutines leaked: %d at the start, %d at the end:\n%s\n", base, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
			code = 1
			break
		}
		time.Sleep(time.Millisecond)
	}
	os.Exit(code)
}
