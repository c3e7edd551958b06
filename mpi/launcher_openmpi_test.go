//go:build mpi && !mpich

package mpi_test

import (
	"os"
	"strconv"

	"github.com/ttlpapers/ttlpapers/baseline"
)

// Open MPI's launcher. It refuses more ranks than cores, and root, unless
// told.
const mpirunCmd, mpirunPackage = "mpirun", "openmpi-bin libopenmpi-dev"

// killedReport is what mpirun says of a rank 2 killed by a signal.
const killedReport = "rank 2"

// keepGoing tells mpirun not to end the job when a rank exits non-zero.
var keepGoing = []string{"--mca", "orte_abort_on_non_zero_status", "0"}

func mpirunArgs(np int) []string {
	args := []string{"--oversubscribe", "-np", strconv.Itoa(np)}
	if os.Geteuid() == 0 {
		args = append(args, "--allow-run-as-root")
	}
	return args
}

// overNetwork returns the launcher's arguments and the ranks' environment
// that send MPI's messages over the network instead of shared memory: TCP
// (the ranks still share the node).
func overNetwork() (args, env []string) { return baseline.TCPArgs(true), nil }
