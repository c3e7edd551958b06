package benchcmd

import (
	"github.com/ttlpapers/ttlpapers/am"
	"github.com/ttlpapers/ttlpapers/am/tcpnet"
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/base"
	"github.com/ttlpapers/ttlpapers/papers"
)

// papersctl bench --data --tcp: the goroutine PEs' data network is a real
// board's, TCP (package am/tcpnet) over loopback, joined over the
// emulated board as the PCs join over theirs.

// benchDataNet makes each PE's data network for benchData (nil: memory).
var benchDataNet func(*papers.PE) (am.Transport, error)

// dataNet is --tcp's choice of data network.
func (c *benchCmd) dataNet() func(*papers.PE) (am.Transport, error) {
	if !c.tcp {
		return nil
	}
	return func(p *papers.PE) (am.Transport, error) {
		l, err := tcpnet.Listen("127.0.0.1")
		if err != nil {
			return nil, err
		}
		return l.Join(p, papers.DefaultTimeout)
	}
}

// tcpChecks refuses --tcp where it means nothing.
func (c *benchCmd) tcpChecks(p *base.Problems) {
	switch {
	case c.tcp && !c.data:
		p.Addf("--tcp: only with --data")
	case c.tcp && (len(c.procs) > 0 || c.mpi > 0):
		p.Addf("--tcp: the goroutine PEs' data network; with --procs or --mpi the processes have theirs: drop --tcp")
	}
}
