//go:build mpi

package mpi_test

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/am"
	"github.com/ttlpapers/ttlpapers/conformance/dataconf"
	"github.com/ttlpapers/ttlpapers/mpi"
	"github.com/ttlpapers/ttlpapers/papers"
)

func runDataNet(p *papers.PE) error {
	for _, c := range dataconf.Cases() {
		if err := c.Run(p); err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		fmt.Printf("PE %d: ok %s\n", p.Self(), c.Name)
	}
	return nil
}

// TestDataNet runs the data network's conformance cases (active messages,
// Split-C's global memory, Strata's messages and block transfers) on the
// MPI transport, at 2 and 4 ranks; at 3, every rank a node of its own
// (PAPERS_MPI_NODE=1), so that one-sided access goes through windows
// (MPI_Get, MPI_Put) instead of memory every rank maps.
func TestDataNet(t *testing.T) {
	for _, run := range []struct {
		np   int
		node string
	}{{2, ""}, {4, ""}, {3, "1"}} {
		np := run.np
		out, err := mpirun(t, np, "datanet", 2*time.Minute, false, mpi.EnvNode+"="+run.node)
		if err != nil {
			t.Errorf("%d ranks: %v\n%s", np, err, out)
			continue
		}
		for _, c := range dataconf.Cases() {
			for k := range np {
				if line := fmt.Sprintf("PE %d: ok %s\n", k, c.Name); !strings.Contains(out, line) {
					t.Errorf("%d ranks: no %q in:\n%s", np, line, out)
				}
			}
		}
	}
}

// dataNetVictim: the last PE stops (SIGSTOP) while the others wait on its
// handler; their waits must fail naming it.
func dataNetVictim(p *papers.PE) error {
	err := dataconf.Victim(p, p.PEs()-1, func() { syscall.Kill(os.Getpid(), syscall.SIGSTOP) })
	fmt.Printf("PE %d: %v\n", p.Self(), err)
	return err
}

// TestDataNetStoppedRank: a rank stopped while the others wait on its handler
// (fetch_and_add) makes their waits fail within the timeout, naming it; mpirun ends the
// job non-zero.
func TestDataNetStoppedRank(t *testing.T) {
	const timeout = 2 * time.Second
	out, err := mpirun(t, 3, "datanet-stop", time.Minute, false, "MPI_TEST_TIMEOUT="+timeout.String(), "MPI_TEST_CHECKIN=30s")
	if err == nil {
		t.Fatalf("mpirun exited 0 with a stopped rank:\n%s", out)
	}
	named := false
	for _, k := range []int{0, 1} {
		named = named || strings.Contains(out, fmt.Sprintf("papers: PE %d: fetch_and_add did not complete within %v: no answer from PE 2", k, timeout))
	}
	if !named {
		t.Errorf("no rank reports that PE 2 did not answer:\n%s", out)
	}
}

// dataNetLeaver: PE 1 closes its PE at once, while PE 0 keeps asking it
// for replies; PE 0's wait must end in an error naming PE 1.
func dataNetLeaver(p *papers.PE) error {
	ep, err := am.Of(p)
	if err != nil {
		return err
	}
	got := 0
	hRep := ep.Register(func(*am.Msg) { got++ })
	hReq := ep.Register(func(m *am.Msg) { m.Reply(hRep, m.Args) })
	if p.Self() != 0 {
		return nil
	}
	for i := 0; ; i++ {
		err := ep.Request(1, hReq, am.Args{})
		if err == nil {
			err = ep.Wait("reply", 1, func() bool { return got > i })
		}
		if err != nil {
			fmt.Printf("PE 0: after %d replies: %v\n", got, err)
			return err
		}
	}
}

// TestDataNetDeparture: a rank whose program returns leaves the data
// network; a rank waiting on it gets an error naming it, not a timeout.
func TestDataNetDeparture(t *testing.T) {
	out, err := mpirun(t, 2, "datanet-leave", time.Minute, false, "MPI_TEST_TIMEOUT=30s")
	if err == nil {
		t.Fatalf("mpirun exited 0:\n%s", out)
	}
	if !strings.Contains(out, "PE 0: after") || !strings.Contains(out, "PE 1 has left the data network") {
		t.Errorf("PE 0 does not report PE 1's departure:\n%s", out)
	}
}
