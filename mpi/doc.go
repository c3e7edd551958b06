// Package mpi runs PAPERS programs on MPI, so that a program written
// against spmd.Main and papers alone, built with
//
//	go build -tags mpi          # Open MPI (Debian: libopenmpi-dev)
//	go build -tags mpi,mpich    # MPICH (Debian: libmpich-dev)
//
// and started by mpirun -np N (MPICH: mpirun.mpich), runs on N ranks with
// no other change: package spmd links this package's driver "mpi", which
// recognises the launcher.
//
// Inside, in layers: a thin cgo binding of the MPI calls the project uses
// (C in ttl.h and *.c, unexported); an engine that runs *papers.PE's
// collectives (papers.Engine) — barriers and small reductions its own, in
// shared memory on a node and over MPI messages between nodes, gathers
// MPI's; the data network's transport (package am) over MPI; and the
// driver registered with package substrate.
//
// The API is the same in every build. Without the mpi build tag the package
// is pure Go: Open returns ErrNotBuilt, and the driver stands in to say
// so when mpirun starts the program. Default builds stay static and
// cross-build everywhere.
//
// docs/mpi.md describes the mapping of every operation onto MPI, the
// parallel interrupt's MPI form, participation, faults and speed.
package mpi

import (
	"errors"

	"github.com/ttlpapers/ttlpapers/papers"
)

// Name is the driver's name and port spec: PAPERS_PORT=mpi. Under mpirun
// it is picked without being named.
const Name = "mpi"

// EnvNode chooses which ranks meet in shared memory: unset or "shared",
// those MPI finds on one node (MPI_COMM_TYPE_SHARED); a number N, runs of
// N of those, as if each run were a node of its own. PAPERS_MPI_NODE=1
// makes every rank a node and every collective cross the network, as on a
// cluster of one rank per node: it measures and tests that path on one
// machine.
const EnvNode = "PAPERS_MPI_NODE"

// ErrNotBuilt is the error of every use of MPI in a program built without
// the mpi build tag.
var ErrNotBuilt = errors.New("mpi: this program was built without MPI: rebuild it with `go build -tags mpi` (needs an MPI library: apt-get install libopenmpi-dev; or -tags mpi,mpich with libmpich-dev) and start it with mpirun")

// Open opens this process's PE on MPI: it initialises MPI on the calling
// goroutine (locked to its thread for good: every later use of the PE must
// come from it), takes the PE id and count from MPI_COMM_WORLD (cfg.PE and
// cfg.PEs must be zero or agree) and checks in with the other ranks, every
// wait bounded by cfg's timeouts. The PE has a data network (package am)
// over MPI. Close finalizes MPI.
//
// Without the mpi build tag it returns ErrNotBuilt.
func Open(cfg papers.Config) (*papers.PE, error) { return open(cfg) }
