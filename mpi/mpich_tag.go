//go:build mpich && !mpi

package mpi

// The mpich tag chooses MPICH for a build with the mpi tag; alone it would
// silently build the stand-in. cgo stops the build with the fix.

/*
#error "the mpich build tag chooses MPICH for an MPI build: build with -tags mpi,mpich"
*/
import "C"
