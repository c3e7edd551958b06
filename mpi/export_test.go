//go:build mpi

package mpi

// What the external tests (package mpi_test) use of the binding.

// Init initialises MPI (stopEarly: a rank stopped after MPI_Init).
var Init = initMPI

// Barrier and AllreduceInt are MPI's blocking calls over MPI_COMM_WORLD,
// which the benchmark alternates with the engine's collectives.
func Barrier() error { return world().barrier() }

func AllreduceInt(x int) (int, error) { return world().allreduceInt(x) }
