package emulate_test

import (
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/internal/conformance"
	"github.com/ttlpapers/ttlpapers/papers"
)

// TestConformance runs the suite every substrate passes (package
// internal/conformance; package mpi runs it on MPI) on the emulated board:
// the netlist of every board size a builder can order (3 and 4 PEs on the
// 4-PE board, 5 on the 8-PE, 12 on the 16-PE and 32 on the 32-PE board,
// whose cables come in on IDC headers).
func TestConformance(t *testing.T) {
	for _, n := range []int{3, 4, 5, 12, 32} {
		for _, c := range conformance.Cases() {
			side := &conformance.MemSide{}
			if err := emulate.Run(n, papers.Config{Timeout: 20 * time.Second}, func(p *papers.PE) error { return c.Run(p, side) }); err != nil {
				t.Errorf("%d PEs: %s: %v", n, c.Name, err)
			}
		}
	}
}
