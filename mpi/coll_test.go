//go:build mpi

package mpi

import (
	"strings"
	"testing"

	"github.com/ttlpapers/ttlpapers/papers"
)

// TestOps ties the hot allreduce's operators to package papers': ops names
// C's operator for every papers.Op, each a different one, so an operator
// added to papers fails here until C's ttl_combine has it too.
func TestOps(t *testing.T) {
	if next := papers.Op(len(ops)); !strings.HasPrefix(next.String(), "Op(") {
		t.Errorf("papers has an operator %v that ops (coll.go) does not map: add it there and to ttl_combine (coll.c, ttl.h)", next)
	}
	seen := map[int]papers.Op{}
	for o, c := range ops {
		if c == opBarrier {
			t.Errorf("ops maps %v to the barrier's code", papers.Op(o))
		}
		if prev, dup := seen[int(c)]; dup {
			t.Errorf("ops maps %v and %v to one C operator (%d)", prev, papers.Op(o), c)
		}
		seen[int(c)] = papers.Op(o)
	}
}

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
