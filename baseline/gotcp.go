package baseline

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"slices"
	"time"
)

// GoTCP is the floor for a data network over TCP in Go on this kernel: a
// plain net.Conn pair (on loopback, or across hosts: DialGoTCP and
// ServeGoTCP), one goroutine serving each request,
// blocking in Go's netpoller. Its operations are the data network's:
// RoundTrip sends 8 bytes and waits for 8 back, Put sends a block and
// waits for a 1-byte acknowledgment, Get sends an 8-byte request and
// reads the block back. Its methods are for one goroutine.
type GoTCP struct {
	c       net.Conn
	timeout time.Duration
	hdr     [9]byte
	done    chan error // the server's end; nil when it is another process's
}

// Operations on the wire: a byte naming it and 8 bytes of length.
const (
	tcpRoundTrip = 'r'
	tcpPut       = 'p'
	tcpGet       = 'g'
)

// NewGoTCP connects a client and a server on loopback; max is the
// largest block moved, timeout bounds each operation.
func NewGoTCP(max int, timeout time.Duration) (*GoTCP, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			c = nil
		}
		accepted <- c
	}()
	c, err := net.DialTimeout("tcp", ln.Addr().String(), timeout)
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	s := <-accepted
	if s == nil {
		c.Close()
		return nil, fmt.Errorf("baseline: loopback accept failed")
	}
	g := &GoTCP{c: c, timeout: timeout, done: make(chan error, 1)}
	go func() { g.done <- ServeGoTCP(s, max) }()
	return g, nil
}

// DialGoTCP connects to a server at addr (ServeGoTCP, in another process
// or on another host); timeout bounds the connection and each operation.
func DialGoTCP(addr string, timeout time.Duration) (*GoTCP, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	return &GoTCP{c: c, timeout: timeout}, nil
}

// ServeGoTCP answers a GoTCP client's requests on s, blocks of up to max
// bytes, until the client closes its side.
func ServeGoTCP(s net.Conn, max int) error {
	defer s.Close()
	buf := make([]byte, max)
	var hdr [9]byte
	for {
		if _, err := io.ReadFull(s, hdr[:]); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		n := int(binary.LittleEndian.Uint64(hdr[1:]))
		if n > max {
			return fmt.Errorf("baseline: a block of %d bytes, over %d", n, max)
		}
		var err error
		switch hdr[0] {
		case tcpRoundTrip:
			_, err = s.Write(hdr[1:])
		case tcpPut:
			if _, err = io.ReadFull(s, buf[:n]); err == nil {
				_, err = s.Write(hdr[:1])
			}
		case tcpGet:
			_, err = s.Write(buf[:n])
		default:
			err = fmt.Errorf("baseline: operation %q", hdr[0])
		}
		if err != nil {
			return err
		}
	}
}

func (g *GoTCP) send(op byte, n int, block []byte) error {
	g.c.SetDeadline(time.Now().Add(g.timeout))
	g.hdr[0] = op
	binary.LittleEndian.PutUint64(g.hdr[1:], uint64(n))
	if _, err := g.c.Write(g.hdr[:]); err != nil {
		return err
	}
	if block != nil {
		_, err := g.c.Write(block)
		return err
	}
	return nil
}

// RoundTrip sends 8 bytes and waits for them back.
func (g *GoTCP) RoundTrip() error {
	if err := g.send(tcpRoundTrip, 8, nil); err != nil {
		return err
	}
	_, err := io.ReadFull(g.c, g.hdr[1:])
	return err
}

// Put sends block and waits for its acknowledgment.
func (g *GoTCP) Put(block []byte) error {
	if err := g.send(tcpPut, len(block), block); err != nil {
		return err
	}
	_, err := io.ReadFull(g.c, g.hdr[:1])
	return err
}

// Get asks for len(block) bytes and reads them into block.
func (g *GoTCP) Get(block []byte) error {
	if err := g.send(tcpGet, len(block), nil); err != nil {
		return err
	}
	_, err := io.ReadFull(g.c, block)
	return err
}

// Close ends the pair and returns the server's error, if it had one (a
// dialed pair's server is another process's: nil).
func (g *GoTCP) Close() error {
	g.c.Close()
	if g.done == nil {
		return nil
	}
	select {
	case err := <-g.done:
		return err
	case <-time.After(g.timeout):
		return fmt.Errorf("baseline: the TCP server did not end within %v", g.timeout)
	}
}

// GoTCPData measures a GoTCP pair as MPIData measures MPI, and names its
// figures alike: round_trip_us, and "put_bw_MBps size=N" and "get_bw_MBps
// size=N" for each of sizes (bytes); each the median of rounds runs.
func GoTCPData(sizes []int, rounds int, timeout time.Duration) (map[string]float64, error) {
	most := slices.Max(sizes)
	g, err := NewGoTCP(most, timeout)
	if err != nil {
		return nil, err
	}
	block := make([]byte, most)
	runs := map[string][]float64{}
	// per times op count times: seconds per op.
	per := func(count int, op func() error) (float64, error) {
		start := time.Now()
		for range count {
			if err := op(); err != nil {
				return 0, err
			}
		}
		return time.Since(start).Seconds() / float64(count), nil
	}
	for range rounds {
		s, err := per(dataIters/10, g.RoundTrip)
		if err != nil {
			g.Close()
			return nil, err
		}
		runs["round_trip_us"] = append(runs["round_trip_us"], s*1e6)
		for _, size := range sizes {
			count := min(dataIters/10, max(8, (16<<20)/size))
			for _, op := range []struct {
				name string
				f    func([]byte) error
			}{{"put_bw_MBps", g.Put}, {"get_bw_MBps", g.Get}} {
				s, err := per(count, func() error { return op.f(block[:size]) })
				if err != nil {
					g.Close()
					return nil, err
				}
				name := fmt.Sprintf("%s size=%d", op.name, size)
				runs[name] = append(runs[name], float64(size)/s/1e6)
			}
		}
	}
	figs := map[string]float64{}
	for name, v := range runs {
		slices.Sort(v)
		figs[name] = v[len(v)/2]
	}
	return figs, g.Close()
}
