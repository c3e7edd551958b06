// Package shm registers the spmd driver of the board emulated in shared
// memory (emu.OpenShared): port specs shm:PATH, which papersctl run (package
// launch) gives every process it starts, with the run's job id in EnvJob.
//
// A PE that fails does nothing on the board itself: the launcher watches
// the processes and aborts the board when one dies — even by SIGKILL,
// which no process can catch — so every other PE's current or next
// operation fails at once, naming it.
package shm

import (
	"fmt"
	"os"
	"strings"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/spmd/substrate"
)

// Prefix starts a port spec naming a shared-memory board: shm:PATH.
const Prefix = "shm:"

// EnvJob, set by papersctl run, is the job id of the shared board the PE
// must find at its PATH: a PE started for one run never joins another's
// board of the same name.
const EnvJob = "PAPERS_JOB"

func init() { substrate.Register(strings.TrimSuffix(Prefix, ":"), shmDriver{}) }

type shmDriver struct{}

// SharedTerminal: papersctl run prefixes every PE's lines onto its own.
func (shmDriver) SharedTerminal() bool { return true }

func (shmDriver) Check(spec string) error {
	if path, _ := strings.CutPrefix(spec, Prefix); path == "" {
		return fmt.Errorf("spmd: shm: %q names no board: write shm:/dev/shm/papers-NAME (papersctl run sets it)", spec)
	}
	return nil
}

func (d shmDriver) Open(spec string, o substrate.Options) (substrate.Session, error) {
	if err := d.Check(spec); err != nil {
		return nil, err
	}
	path := strings.TrimPrefix(spec, Prefix)
	b, err := emu.OpenShared(path)
	if err != nil {
		return nil, fmt.Errorf("spmd: shm: PE %d: %w", o.PE, err)
	}
	if o.PE >= b.PEs() {
		b.Close()
		return nil, fmt.Errorf("spmd: shm: PE id %d does not fit the %d-PE board %s", o.PE, b.PEs(), path)
	}
	if job := os.Getenv(EnvJob); job != "" && job != fmt.Sprintf("%016x", b.Job()) {
		b.Close()
		return nil, fmt.Errorf("spmd: shm: PE %d: board %s belongs to job %016x, not to this PE's job %s (%s): the run it was started for is over", o.PE, path, b.Job(), job, EnvJob)
	}
	port, err := b.Port(o.PE)
	if err != nil {
		b.Close()
		return nil, err
	}
	p, err := papers.Open(port, papers.Config{PE: o.PE, PEs: o.PEs, Timeout: o.Timeout, CheckInTimeout: o.CheckIn})
	if err != nil {
		b.Close()
		return nil, err
	}
	return &session{p: p, board: b}, nil
}

type session struct {
	p     *papers.PE
	board *emu.Board
}

func (s *session) PE() *papers.PE { return s.p }

// Fail and Stop leave the board to the launcher (see the package doc).
func (s *session) Fail(error) {}
func (s *session) Stop()      {}

func (s *session) Close() error {
	err := s.p.Close()
	if cerr := s.board.Close(); err == nil {
		err = cerr
	}
	return err
}
