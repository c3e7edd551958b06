//go:build !mpi

package spmd_test

import (
	"strings"
	"testing"
)

// TestMpirunWithoutTag: a program built without the mpi tag and started by
// mpirun (its environment says so) refuses to run as one PE of a job it
// cannot join, and says how to build it.
func TestMpirunWithoutTag(t *testing.T) {
	for _, env := range [][]string{
		{"OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=4"},
		{"PMI_RANK=0", "PMI_SIZE=4"},
	} {
		status, stderr := mainProcess(t, env)
		if status != 1 || !strings.Contains(stderr, "go build -tags mpi") {
			t.Errorf("%v: exit %d, stderr %q; want exit 1 and how to build with MPI", env, status, stderr)
		}
	}
}
