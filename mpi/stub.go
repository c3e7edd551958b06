//go:build !mpi

package mpi

import (
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/substrate"
)

func init() { substrate.Register(Name, stub{}) }

func open(papers.Config) (*papers.PE, error) { return nil, ErrNotBuilt }

// stub stands in for the MPI driver: it recognises mpirun, so a program
// built without the tag and started by mpirun says what to do.
type stub struct{}

func (stub) Check(string) error                                        { return ErrNotBuilt }
func (stub) Open(string, substrate.Options) (substrate.Session, error) { return nil, ErrNotBuilt }
func (stub) Launched() (pe, pes int, ok bool)                          { return Launched() }
func (stub) SharedTerminal() bool                                      { return true }
