package launch_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/internal/leakcheck"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/spmd"
)

// examplePE in the environment makes this test binary a PE of the
// launched program of ExampleRun_vote.
const examplePE = "LAUNCH_EXAMPLE_PE"

// longLinePE in the environment makes this test binary a PE that prints
// one line of that many bytes on PE 0, then meets the others at a barrier.
const longLinePE = "LAUNCH_LONG_LINE_PE"

// namingPE in the environment makes this test binary a PE of
// TestRunBlamesNamedPE: PE 0 fails with the error of a wait on PE 2, which
// hangs.
const namingPE = "LAUNCH_NAMING_PE"

// TestMain fails the tests when they leave goroutines running; started by
// launch as a PE, it runs the example's PE program instead.
func TestMain(m *testing.M) {
	if os.Getenv(examplePE) != "" {
		spmd.Main(votePE)
	}
	if os.Getenv(namingPE) != "" {
		spmd.Main(waitOnHungPE)
	}
	if n, err := strconv.Atoi(os.Getenv(longLinePE)); err == nil {
		spmd.Main(func(p *papers.PE) error { return longLine(p, n) })
	}
	os.Exit(leakcheck.Run(m))
}

// votePE is the example's PAPERS program: the even PEs vote yes.
func votePE(p *papers.PE) error {
	mask, err := p.Vote(p.Self()%2 == 0)
	if err != nil {
		return err
	}
	fmt.Printf("PE %d of %d: votes %04b\n", p.Self(), p.PEs(), mask)
	return nil
}

// waitOnHungPE is the PE program of TestRunBlamesNamedPE.
func waitOnHungPE(p *papers.PE) error {
	switch p.Self() {
	case 0:
		return &papers.TimeoutError{PE: 0, Op: "get", Waited: time.Second, Missing: 1 << 2}
	case 2:
		time.Sleep(time.Hour) // computing without polling
	}
	return p.Barrier()
}

// longLine is the PE program of TestRunLongLine.
func longLine(p *papers.PE, n int) error {
	if p.Self() == 0 {
		if _, err := fmt.Println(strings.Repeat("x", n)); err != nil {
			return err
		}
	}
	return p.Barrier()
}
