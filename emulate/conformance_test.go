package emulate_test

import (
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/conformance"
	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/papers"
)

// TestConformance runs the suite every substrate passes (package
// conformance; package mpi runs it on MPI) on the emulated board.
func TestConformance(t *testing.T) {
	for _, n := range []int{3, 4, 5} {
		for _, c := range conformance.Cases() {
			side := &conformance.MemSide{}
			if err := emulate.Run(n, papers.Config{Timeout: 20 * time.Second}, func(p *papers.PE) error { return c.Run(p, side) }); err != nil {
				t.Errorf("%d PEs: %s: %v", n, c.Name, err)
			}
		}
	}
}
