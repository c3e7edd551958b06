//go:build mpi

package mpi

import (
	"fmt"

	"github.com/ttlpapers/ttlpapers/am"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/substrate"
)

func init() { substrate.Register(Name, mpiDriver{}) }

type mpiDriver struct{}

func (mpiDriver) Check(spec string) error {
	if spec != Name {
		return fmt.Errorf("mpi: port spec %q: write just %q (mpirun says the rest)", spec, Name)
	}
	return nil
}

func (d mpiDriver) Open(spec string, o substrate.Options) (substrate.Session, error) {
	if err := d.Check(spec); err != nil {
		return nil, err
	}
	p, err := Open(papers.Config{PE: o.PE, PEs: o.PEs, Timeout: o.Timeout, CheckInTimeout: o.CheckIn, Verify: o.Verify, Tag: o.Tag})
	if err != nil {
		return nil, err
	}
	return session{p}, nil
}

func (mpiDriver) Launched() (pe, pes int, ok bool) { return Launched() }

// SharedTerminal: mpirun forwards every rank's output to its own.
func (mpiDriver) SharedTerminal() bool { return true }

type session struct{ p *papers.PE }

func (s session) PE() *papers.PE { return s.p }

// Fail leaves the data network with the cause (the others' waits on this
// PE there end in an *am.GoneError carrying it) and announces the
// departure as on a board (papers.PE.Abort: the others' current operation
// returns an *papers.InterruptError naming this PE); the process then
// exits without MPI_Finalize and mpirun ends the job with a non-zero
// status.
func (s session) Fail(err error) {
	if ep, aerr := am.Of(s.p); aerr == nil {
		ep.Abort(err)
	}
	s.p.Abort(substrate.AbortCode)
}

// Stop does nothing: the process exits, and mpirun, which forwards the
// signal to every rank, ends the job.
func (s session) Stop() {}

func (s session) Close() error { return s.p.Close() }
