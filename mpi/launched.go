package mpi

import (
	"os"
	"strconv"
)

// launchers are the environment variables by which an MPI launcher tells a
// process its rank and the job's size: OpenMPI's mpirun, and the PMI and
// PMIx of MPICH's Hydra and of Slurm's srun.
var launchers = [...]struct{ rank, size string }{
	{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
	{"PMI_RANK", "PMI_SIZE"},
	{"PMIX_RANK", "PMI_SIZE"},
}

// Launched reports whether an MPI launcher (mpirun, mpiexec, srun) started
// this process, and as which rank of how many, from its environment alone:
// no MPI call. pes is 0 when the launcher does not say (PMIx).
func Launched() (pe, pes int, ok bool) {
	for _, l := range launchers {
		r, err := strconv.Atoi(os.Getenv(l.rank))
		if err != nil {
			continue
		}
		n, _ := strconv.Atoi(os.Getenv(l.size))
		return r, n, true
	}
	return 0, 0, false
}
