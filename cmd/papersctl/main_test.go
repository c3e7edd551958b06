package main

import (
	"os"
	"testing"

	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/benchcmd"
	"github.com/ttlpapers/ttlpapers/internal/leakcheck"
)

// TestMain fails the tests when they leave goroutines running. The PE
// processes bench starts are this binary run as papersctl bench-pe.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == benchcmd.PECmd.Name {
		main()
	}
	os.Exit(leakcheck.Run(m))
}
