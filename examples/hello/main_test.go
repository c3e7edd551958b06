package main

import (
	"os"
	"testing"

	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/internal/leakcheck"
	"github.com/ttlpapers/ttlpapers/papers"
)

// TestMain fails the tests when they leave goroutines running.
func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }

// The README's program runs on every board size.
func TestHello(t *testing.T) {
	for _, n := range []int{1, 2, 4, 7} {
		if err := emulate.Run(n, papers.Config{}, hello); err != nil {
			t.Errorf("%d PEs: %v", n, err)
		}
	}
}
