// Package mpienv recognises, from its environment alone, a process that
// an MPI launcher started — Open MPI's mpirun, MPICH's mpiexec (Hydra),
// Slurm's srun — and reads which rank of how many it is. It is pure Go and
// makes no MPI call, so a program built without MPI, started by mpirun on
// PCs that share a TTL_PAPERS board, still learns its PE id and count from
// the launcher (package spmd), and the MPI driver asks the same question
// before it initialises MPI.
package mpienv

import "strconv"

// vars are the environment variables by which a launcher tells a process
// its rank and the job's size: Open MPI's mpirun, and the PMI and PMIx of
// MPICH's Hydra and of Slurm's srun.
var vars = [...]struct{ rank, size string }{
	{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
	{"PMI_RANK", "PMI_SIZE"},
	{"PMIX_RANK", "PMI_SIZE"},
}

// Launched reports whether an MPI launcher started the process whose
// environment getenv reads (os.Getenv for this one), and as which rank of
// how many. size is 0 when the launcher does not say (PMIx alone).
func Launched(getenv func(string) string) (rank, size int, ok bool) {
	for _, v := range vars {
		r, err := strconv.Atoi(getenv(v.rank))
		if err != nil || r < 0 {
			continue
		}
		n, _ := strconv.Atoi(getenv(v.size))
		return r, max(n, 0), true
	}
	return 0, 0, false
}
