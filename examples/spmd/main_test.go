package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/internal/leakcheck"
	"github.com/ttlpapers/ttlpapers/papers"
)

// TestMain fails the tests when they leave goroutines running.
func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }

// The third way to run the program: in-process, one goroutine per PE.
func TestSumInProcess(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 8, 13} {
		err := emulate.Run(n, papers.Config{}, func(p *papers.PE) error {
			// Weights that need several bits, to exercise every vote.
			x := 1000*p.Self() + 7
			got, err := Sum(p, x)
			if err != nil {
				return err
			}
			if want := 1000*n*(n-1)/2 + 7*n; got != want {
				return fmt.Errorf("sum %d, want %d", got, want)
			}
			return run(p, 3)
		})
		if err != nil {
			t.Errorf("%d PEs: %v", n, err)
		}
	}
}
