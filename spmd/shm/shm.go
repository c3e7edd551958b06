// Package shm registers the spmd driver of the board emulated in shared
// memory (emu.OpenShared): port specs shm:PATH, which papersctl run (package
// launch) gives every process it starts, with the run's job id in EnvJob.
//
// A PE that fails does nothing on the board itself: the launcher watches
// the processes and aborts the board when one dies — even by SIGKILL,
// which no process can catch — so every other PE's current or next
// operation fails at once, naming it.
//
// Beside the board the launcher makes the job's data network
// (DataNetPath: active messages in shared memory, package am/shmnet), which
// Split-C's global memory and Strata's active messages use: each PE
// attaches its endpoint to its papers.PE (am.Of), leaves it when the
// program returns (handling what has arrived) or fails (the others' waits
// on it end in an error naming it), and a PE process that dies without
// leaving is named by the others at their next look.
package shm

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/substrate"
)

// Prefix starts a port spec naming a shared-memory board: shm:PATH.
const Prefix = "shm:"

// EnvJob, set by papersctl run, is the job id of the shared board the PE
// must find at its PATH: a PE started for one run never joins another's
// board of the same name.
const EnvJob = "PAPERS_JOB"

// DataNetPath is where the data network of the board at board lives,
// beside it: am-NAME for the board NAME (not NAME.am, which the boards'
// pattern papers-* would match). The launcher creates and removes it with
// the board.
func DataNetPath(board string) string {
	return filepath.Join(filepath.Dir(board), "am-"+filepath.Base(board))
}

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

// Open trusts spec and o, which spmd checked (Check, the PE id below the
// PE count), and compares the PE count with the one the board was made
// for.
func (shmDriver) Open(spec string, o substrate.Options) (substrate.Session, error) {
	path := strings.TrimPrefix(spec, Prefix)
	b, err := emu.OpenShared(path)
	if err != nil {
		return nil, fmt.Errorf("spmd: shm: PE %d: %w", o.PE, err)
	}
	info, err := emu.InspectShared(path)
	if err == nil && info.PEs != o.PEs {
		err = fmt.Errorf("the program was given %d PEs, and the board %s was made for %d: give it %d, the board's count, or start it with papersctl run, which does", o.PEs, path, info.PEs, info.PEs)
	}
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("spmd: shm: PE %d: %w", o.PE, err)
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
	net, err := openDataNet(path, o)
	if err != nil {
		b.Close()
		return nil, err
	}
	p, err := papers.Open(port, papers.Config{PE: o.PE, PEs: o.PEs, Timeout: o.Timeout, CheckInTimeout: o.CheckIn, Tag: o.Tag, Context: o.Context, Verify: o.Verify})
	if err != nil {
		if net != nil {
			net.abort(err)
		}
		b.Close()
		return nil, err
	}
	if net != nil {
		p.AttachDataNet(net.ep)
	}
	return &session{p: p, board: b, net: net}, nil
}

type session struct {
	p     *papers.PE
	board *emu.Board
	net   *dataNet // nil when no data network is beside the board
}

func (s *session) PE() *papers.PE { return s.p }

// Fail leaves the data network with the cause, so that the others' waits
// on this PE name it; the board is the launcher's (see the package doc).
func (s *session) Fail(err error) {
	if s.net != nil {
		s.net.abort(err)
	}
}

// Stop leaves the board to the launcher, and the data network to the
// others' look at this process, which is about to exit: the PE's goroutine
// may be in the middle of a send.
func (s *session) Stop() {}

// Close ends the PE as a program that returned (papers.PE.Finish, as on
// a real board): one that returns while the others compute is named so.
// The data network is left after Finish, which answers it until every PE
// has returned.
func (s *session) Close() error {
	err := s.p.Finish()
	if s.net != nil {
		if nerr := s.net.close(); err == nil {
			err = nerr
		}
		s.p.AttachDataNet(nil)
	}
	if cerr := s.board.Close(); err == nil {
		err = cerr
	}
	return err
}
