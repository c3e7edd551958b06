package launch_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

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

// TestMain fails the tests when they leave goroutines running; started by
// launch as a PE, it runs the example's PE program instead.
func TestMain(m *testing.M) {
	if os.Getenv(examplePE) != "" {
		spmd.Main(votePE)
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

// longLine is the PE program of TestRunLongLine.
func longLine(p *papers.PE, n int) error {
	if p.Self() == 0 {
		if _, err := fmt.Println(strings.Repeat("x", n)); err != nil {
			return err
		}
	}
	return p.Barrier()
}
