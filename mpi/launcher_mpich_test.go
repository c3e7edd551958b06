//go:build mpi && mpich

package mpi_test

import "strconv"

// MPICH's launcher (Hydra). Debian's mpirun is Open MPI's.
const mpirunCmd, mpirunPackage = "mpirun.mpich", "mpich libmpich-dev"

// killedReport is what Hydra says of a rank killed by a signal (it names
// the process id, not the rank).
const killedReport = "Killed (signal 9)"

// keepGoing tells Hydra not to end the job when a rank exits non-zero.
var keepGoing = []string{"-disable-auto-cleanup"}

func mpirunArgs(np int) []string { return []string{"-np", strconv.Itoa(np)} }

// overNetwork returns the launcher's arguments and the ranks' environment
// that send MPI's messages over the network instead of shared memory:
// MPIR_CVAR_NOLOCAL makes MPICH treat every rank as a node of its own, so
// windows too span "nodes" as on a cluster.
func overNetwork() (args, env []string) { return nil, []string{"MPIR_CVAR_NOLOCAL=1"} }
