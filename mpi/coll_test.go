//go:build mpi

package mpi

import (
	"strings"
	"testing"
)

// TestNodeRuns: PAPERS_MPI_NODE is "shared", a number of ranks per node,
// or an error that says which values work, before MPI starts.
func TestNodeRuns(t *testing.T) {
	for _, c := range []struct {
		v    string
		want int
		err  bool
	}{{"", 0, false}, {"shared", 0, false}, {"1", 1, false}, {"3", 3, false}, {"1000", maxRanks, false},
		{"0", 0, true}, {"-2", 0, true}, {"rank", 0, true}, {"2x", 0, true}} {
		t.Setenv(EnvNode, c.v)
		n, err := nodeRuns()
		if c.err {
			if err == nil || !strings.Contains(err.Error(), `want "shared"`) {
				t.Errorf("%s=%q: %d, %v; want an error naming the values that work", EnvNode, c.v, n, err)
			}
			continue
		}
		if err != nil || n != c.want {
			t.Errorf("%s=%q: %d, %v; want %d", EnvNode, c.v, n, err, c.want)
		}
	}
}
