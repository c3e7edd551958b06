package emulate_test

import (
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/conformance"
	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
	"github.com/ttlpapers/ttlpapers/papers"
)

// TestConformance runs the suite every substrate passes (package
// conformance; package mpi runs it on MPI) on the emulated 4- and 8-PE
// boards' netlists (3 and 4 PEs on the one, 5 on the other).
func TestConformance(t *testing.T) {
	conform(t, 3, 4, 5)
}

// TestConformanceLargeBoards runs the suite on the 16- and 32-PE boards'
// netlists, whose cables come in on IDC headers: with those, every board
// a builder can order. (Minutes under the race detector: .ci/run runs it
// without.)
func TestConformanceLargeBoards(t *testing.T) {
	testenv.SlowUnderRace(t, "the suite on 32 PEs")
	conform(t, 12, 32)
}

func conform(t *testing.T, sizes ...int) {
	t.Helper()
	for _, n := range sizes {
		for _, c := range conformance.Cases() {
			side := &conformance.MemSide{}
			if err := emulate.Run(n, papers.Config{Timeout: 20 * time.Second}, func(p *papers.PE) error { return c.Run(p, side) }); err != nil {
				t.Errorf("%d PEs: %s: %v", n, c.Name, err)
			}
		}
	}
}
