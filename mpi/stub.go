//go:build !mpi

package mpi

import (
	"errors"

	"github.com/ttlpapers/ttlpapers/substrate"
)

// ErrNotBuilt is the error of every use of MPI in a program built without
// the mpi build tag.
var ErrNotBuilt = errors.New("mpi: this program was built without MPI: rebuild it with `go build -tags mpi` (needs an MPI library: apt-get install libopenmpi-dev) and start it with mpirun")

func init() { substrate.Register(Name, stub{}) }

// stub stands in for the MPI driver: it recognises mpirun, so a program
// built without the tag and started by mpirun says what to do.
type stub struct{}

func (stub) Check(string) error                                        { return ErrNotBuilt }
func (stub) Open(string, substrate.Options) (substrate.Session, error) { return nil, ErrNotBuilt }
func (stub) Launched() (pe, pes int, ok bool)                          { return Launched() }
func (stub) SharedTerminal() bool                                      { return true }
