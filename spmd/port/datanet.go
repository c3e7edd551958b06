package port

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/ttlpapers/ttlpapers/am"
	"github.com/ttlpapers/ttlpapers/am/tcpnet"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/substrate"
)

// The data network of PCs on a real board: TCP on the LAN they share
// (package am/tcpnet), with nothing to configure. Each PE listens before
// it checks in, so that a bad PAPERS_LISTEN is refused before any work;
// after the check-in the PEs exchange a per-run secret and their
// addresses over the board, connect, and the endpoint is attached to the
// PE. PAPERS_LISTEN=none gives a program no data network; PAPERS_LAN
// says how it protects its frames.

// listenDataNet opens this PE's listening socket (nil for none).
func listenDataNet(o substrate.Options) (*tcpnet.Listener, error) {
	if o.Listen == "none" {
		return nil, nil
	}
	mode, err := tcpnet.ParseMode(o.LAN)
	if err != nil {
		return nil, fmt.Errorf("spmd: PE %d: the data network: %w", o.PE, err)
	}
	l, err := tcpnet.Listen(o.Listen)
	if err != nil {
		return nil, fmt.Errorf("spmd: PE %d: the data network: %w", o.PE, err)
	}
	l.Mode = mode
	return l, nil
}

// joinDataNet connects s's PE to the others' over l and attaches the
// endpoint; on failure it ends the PE (the others fail the join too: the
// board tells them).
func joinDataNet(s *session, l *tcpnet.Listener, o substrate.Options) (substrate.Session, error) {
	if l == nil {
		return s, nil
	}
	timeout := cmp.Or(o.Timeout, papers.DefaultTimeout)
	t, err := l.Join(s.p, timeout)
	if err != nil {
		s.Fail(err)
		s.p.Close() // not Finish: the PE failed, and said so
		return nil, err
	}
	ep := am.NewEndpoint(t, am.Options{Timeout: timeout})
	s.p.AttachDataNet(ep)
	return &netSession{session: s, ep: ep, t: t}, nil
}

// netSession is a session with a data network: the PE leaves it when the
// program returns (handling what has arrived) or fails (the others' waits
// on it end in an error naming it and the cause), and a process that dies
// is named by the others when its connections end.
type netSession struct {
	*session
	ep *am.Endpoint
	t  *tcpnet.Net
}

func (s *netSession) Fail(err error) {
	s.ep.Abort(err)
	s.session.Fail(err)
}

// Close ends the PE (Finish, which answers the data network until every
// PE has returned and proves the run) and only then leaves the data
// network: no PE may still read this one's memory.
func (s *netSession) Close() error {
	ferr := s.session.Close()
	err := s.ep.Close()
	s.p.AttachDataNet(nil)
	return errors.Join(ferr, err, s.t.Close())
}
