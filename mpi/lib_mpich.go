//go:build mpi && mpich

package mpi

// MPICH: Debian's libmpich-dev, with the build tags mpi and mpich.

/*
#cgo pkg-config: mpich
#include <mpi.h>
#ifndef MPICH
#error "pkg-config mpich gave an mpi.h that is not MPICH's: build with -tags mpi alone for Open MPI"
#endif
*/
import "C"

const (
	library        = "MPICH"
	launcher       = "mpirun.mpich"
	runtimePackage = "mpich"
	buildHint      = "Open MPI's mpirun needs a build with -tags mpi alone"
)

// libraryDefaults: MPICH needs none.
func libraryDefaults() {}
