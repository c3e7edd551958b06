package mpi

import (
	"os"

	"github.com/ttlpapers/ttlpapers/internal/mpienv"
)

// Launched reports whether an MPI launcher (mpirun, mpiexec, srun) started
// this process, and as which rank of how many, from its environment alone:
// no MPI call. pes is 0 when the launcher does not say (PMIx).
func Launched() (pe, pes int, ok bool) { return mpienv.Launched(os.Getenv) }
