//go:build mpi && !mpich

package mpi

import (
	"os"
	"testing"
)

// TestOSCDefault: before MPI_Init, Open MPI's one-sided components exclude
// ucx alone (not Debian's ucx and pt2pt, which leave none for a window
// across hosts over TCP), unless the user chose them (OMPI_MCA_osc,
// mpirun --mca osc).
func TestOSCDefault(t *testing.T) {
	t.Setenv(envOSC, "") // restored afterwards
	os.Unsetenv(envOSC)
	libraryDefaults()
	if got := os.Getenv(envOSC); got != "^ucx" {
		t.Errorf("unset, %s becomes %q; want ^ucx", envOSC, got)
	}
	for _, user := range []string{"pt2pt", ""} {
		t.Setenv(envOSC, user)
		libraryDefaults()
		if got := os.Getenv(envOSC); got != user {
			t.Errorf("set by the user to %q, %s becomes %q", user, envOSC, got)
		}
	}
}
