package spmd

// The drivers every PAPERS program links, so that one binary runs every way
// (package doc): each registers itself with package substrate. The mpi
// package is the real MPI driver when built with -tags mpi; without the tag
// it registers a stand-in that recognises mpirun and says to rebuild.
import (
	_ "github.com/ttlpapers/ttlpapers/mpi"
	_ "github.com/ttlpapers/ttlpapers/spmd/port"
	_ "github.com/ttlpapers/ttlpapers/spmd/shm"
)
