//go:build mpi && !mpich

package mpi

// Open MPI, the default: Debian's libopenmpi-dev.

/*
#cgo pkg-config: ompi-c
#include <mpi.h>
#ifndef OPEN_MPI
#error "pkg-config ompi-c gave an mpi.h that is not Open MPI's: build with -tags mpi,mpich for MPICH"
#endif
*/
import "C"

import "os"

const (
	library        = "Open MPI"
	launcher       = "mpirun"
	runtimePackage = "openmpi-bin"
	buildHint      = "MPICH's mpirun.mpich needs a build with -tags mpi,mpich"
)

// envOSC is the Open MPI parameter that chooses the one-sided components.
const envOSC = "OMPI_MCA_osc"

// libraryDefaults sets what Open MPI must have before MPI_Init, unless the
// user said otherwise. Debian's /etc/openmpi/openmpi-mca-params.conf
// excludes the one-sided components ucx and pt2pt, which leaves none for a
// window spanning hosts over TCP: Split-C's global memory would fail
// across hosts in MPI_Win_allocate. Excluding ucx alone brings pt2pt back.
// An environment variable outranks the file; mpirun's --mca osc X sets
// the variable, and so wins over this.
func libraryDefaults() {
	if _, set := os.LookupEnv(envOSC); !set {
		os.Setenv(envOSC, "^ucx")
	}
}
