// Package mpi runs PAPERS programs on MPI: a thin cgo binding of the MPI
// calls the project uses, an engine that runs *papers.PE's collectives
// (package papers, Engine) — barriers and small reductions its own, in
// shared memory on a node and over MPI messages between nodes, gathers
// MPI's — and the spmd driver "mpi", so that a
// program written against spmd.Main and papers alone, built with
//
//	go build -tags mpi
//
// and started by mpirun -np N, runs on N ranks with no other change.
//
// Without the mpi build tag the package is pure Go and holds only Launched
// and a stand-in driver that recognises mpirun and says to rebuild: default
// builds stay static and cross-build everywhere. With the tag it needs an
// MPI library (Debian: libopenmpi-dev; pkg-config ompi-c).
//
// docs/mpi.md describes the mapping of every operation onto MPI, the
// parallel interrupt's MPI form, participation, faults and speed.
package mpi

// Name is the driver's name and port spec: PAPERS_PORT=mpi. Under mpirun
// it is picked without being named.
const Name = "mpi"
