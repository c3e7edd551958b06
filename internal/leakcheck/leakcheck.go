// Package leakcheck fails a package's tests when they leave goroutines
// running, so that a Close, Stop or cancel that forgets to wait for its
// goroutines is caught where it is written. A package whose code or tests
// start goroutines calls it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }
//
// It is a few lines of what go.uber.org/goleak does, written here to keep
// the module's dependencies to the standard library, x/sys and periph.
package leakcheck

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// DefaultWait is how long Run gives goroutines to end after the tests, for
// those that finish just after the test that started them returns (a
// process's output copiers, a server's last connection). It is a bound,
// not a delay: Run returns as soon as none is left. The environment
// variable LEAKCHECK_WAIT (a time.Duration) overrides it.
const DefaultWait = 10 * time.Second

// Run runs the tests and returns the exit code for os.Exit. When they pass,
// it fails (code 1) if goroutines that were not running before the tests
// are still running after them, printing each one's stack.
func Run(m *testing.M) int {
	wait := DefaultWait
	if s := os.Getenv("LEAKCHECK_WAIT"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			fmt.Fprintf(os.Stderr, "leakcheck: LEAKCHECK_WAIT=%q: want a duration such as 30s\n", s)
			return 2
		}
		wait = d
	}
	before := Goroutines()
	code := m.Run()
	if code != 0 {
		return code // the failure is reported; its goroutines may be stuck by it
	}
	if leaked := Leaked(before, wait); len(leaked) > 0 {
		fmt.Fprint(os.Stderr, Report(leaked, wait))
		return 1
	}
	return code
}

// Goroutine is one running goroutine.
type Goroutine struct {
	ID    int
	Stack string // as runtime.Stack prints it: the header line, the frames, "created by …"
}

// Goroutines returns the goroutines running now, except the caller's and
// the runtime's own.
func Goroutines() []Goroutine {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	self := selfID()
	var gs []Goroutine
	for _, block := range bytes.Split(buf, []byte("\n\n")) {
		g, ok := parse(string(block))
		if ok && g.ID != self && !permanent(g.Stack) {
			gs = append(gs, g)
		}
	}
	return gs
}

// Leaked waits up to wait for the goroutines that are not in before to
// end, and returns those still running.
func Leaked(before []Goroutine, wait time.Duration) []Goroutine {
	deadline := time.Now().Add(wait)
	for delay := time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		var left []Goroutine
		for _, g := range Goroutines() {
			if !slices.ContainsFunc(before, func(b Goroutine) bool { return b.ID == g.ID }) {
				left = append(left, g)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(delay) // polling the condition, bounded by the deadline
	}
}

// Report is the message Run prints for leaked goroutines.
func Report(leaked []Goroutine, wait time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "leakcheck: the tests passed but left %d goroutine(s) running %v after they ended; "+
		"make whatever starts them wait for them before returning (a Close or cancel that waits):\n", len(leaked), wait)
	for _, g := range leaked {
		b.WriteString("\n" + g.Stack + "\n")
	}
	return b.String()
}

// parse reads one goroutine's block of runtime.Stack's output.
func parse(block string) (Goroutine, bool) {
	block = strings.TrimSpace(block)
	rest, ok := strings.CutPrefix(block, "goroutine ")
	if !ok {
		return Goroutine{}, false
	}
	id, _, _ := strings.Cut(rest, " ")
	n, err := strconv.Atoi(id)
	return Goroutine{ID: n, Stack: block}, err == nil
}

// selfID is the calling goroutine's ID, from its stack's header.
func selfID() int {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	g, _ := parse(string(buf))
	return g.ID
}

// permanent reports goroutines the standard library starts once and never
// ends: the one that delivers signals after signal.Notify.
func permanent(stack string) bool {
	for _, f := range [...]string{"os/signal.signal_recv", "os/signal.loop", "runtime.ensureSigM"} {
		if strings.Contains(stack, f+"(") {
			return true
		}
	}
	return false
}
