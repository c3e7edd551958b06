package tcpnet

import (
	"bytes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Listener is a PE's listening socket, open before the PEs exchange their
// addresses (Listen), until they have connected (Connect).
type Listener struct {
	// Mode protects the frames (Authenticated unless set before Join or
	// Connect); every PE of a run must use the same.
	Mode Mode

	ln       *net.TCPListener
	addr     netip.AddrPort // what the others dial, unless all PEs share a host
	wildcard bool           // listening on every address: loopback reaches it too
	refused  atomic.Int64
}

// Listen opens this PE's listening socket. spec is EnvListen's value: ""
// listens on every address and advertises this host's address on its
// default route (the first non-loopback one when there is no route;
// loopback when there is none); an address (with or without :PORT), or a
// network interface's name, listens there only and advertises it.
func Listen(spec string) (*Listener, error) {
	l := &Listener{}
	bind := ":0"
	if spec == "" {
		l.wildcard = true
		l.addr = netip.AddrPortFrom(defaultAddr(), 0)
	} else {
		a, err := parseSpec(spec)
		if err != nil {
			return nil, err
		}
		l.addr, bind = a, a.String()
	}
	ln, err := net.Listen("tcp", bind)
	if err != nil {
		return nil, fmt.Errorf("tcpnet: listen on %s (%s=%q): %w", bind, EnvListen, spec, err)
	}
	l.ln = ln.(*net.TCPListener)
	l.addr = netip.AddrPortFrom(l.addr.Addr(), uint16(l.ln.Addr().(*net.TCPAddr).Port))
	return l, nil
}

// defaultAddr is the address this host's default route leaves from (a UDP
// socket connected to a documentation address sends nothing), else its
// first non-loopback address, else loopback.
func defaultAddr() netip.Addr {
	if c, err := net.Dial("udp", "192.0.2.1:9"); err == nil {
		ap := netip.MustParseAddrPort(c.LocalAddr().String())
		c.Close()
		if !ap.Addr().IsUnspecified() {
			return ap.Addr().Unmap()
		}
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if pn, ok := a.(*net.IPNet); ok {
				if ip, ok := netip.AddrFromSlice(pn.IP); ok && !ip.IsLoopback() && ip.Unmap().Is4() {
					return ip.Unmap()
				}
			}
		}
	}
	return netip.AddrFrom4([4]byte{127, 0, 0, 1})
}

// Addr is the address the other PEs dial to reach this one.
func (l *Listener) Addr() netip.AddrPort { return l.addr }

// loopback is the address a PE of the same host dials.
func (l *Listener) loopback() netip.AddrPort {
	if !l.wildcard {
		return l.addr
	}
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), l.addr.Port())
}

// Refused counts the connections refused so far: not a PE of this run, or
// a PE's connection that came twice.
func (l *Listener) Refused() int64 { return l.refused.Load() }

// Close stops listening.
func (l *Listener) Close() error {
	if l == nil {
		return nil
	}
	return l.ln.Close()
}

// SecretLen is the per-run secret's length.
const SecretLen = 32

// The handshake. The dialer, PE d, connects to PE a (d > a) once per
// network and sends hello: magic, d, a, the network, and a nonce of its
// own. a answers with a nonce of its own only. d proves first: the
// HMAC-SHA256 under the run's secret of "D", hello and a's nonce; a checks
// it and only then proves itself, the HMAC of "A", hello (d's nonce) and
// its nonce, and sends one byte, ok, once it has kept the connection.
// Each side's proof covers the other's fresh nonce, so neither a captured
// handshake nor a reflected proof gets in; a stranger that connects learns
// nothing keyed by the secret; and nothing a connection carries is read as
// a message before both proofs hold. The keys of the connection's frames
// derive from the secret and both nonces (frameKeys).
const (
	magic    = "TTLTCP02"
	helloLen = len(magic) + 2 + 2 + 1 + 32
	macLen   = sha256.Size
)

func proof(secret []byte, side byte, hello, nonce []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte{side})
	m.Write(hello)
	m.Write(nonce)
	return m.Sum(nil)
}

// dialHandshake is the dialer's side, on c to PE a: the connection's
// keys.
func dialHandshake(c net.Conn, secret []byte, mode Mode, self, a, netw int) (sealers, error) {
	hello := make([]byte, helloLen)
	copy(hello, magic)
	binary.LittleEndian.PutUint16(hello[8:], uint16(self))
	binary.LittleEndian.PutUint16(hello[10:], uint16(a))
	hello[12] = byte(netw)
	rand.Read(hello[13:])
	if _, err := c.Write(hello); err != nil {
		return sealers{}, err
	}
	nonce := make([]byte, 32)
	if _, err := io.ReadFull(c, nonce); err != nil {
		return sealers{}, err
	}
	_, err := c.Write(proof(secret, 'D', hello, nonce))
	if err != nil {
		return sealers{}, err
	}
	ans := make([]byte, macLen+1)
	if _, err = io.ReadFull(c, ans); err != nil {
		return sealers{}, fmt.Errorf("the peer at %v did not prove this run's secret (%v): it is not PE %d of this run, or it refused this PE", c.RemoteAddr(), err, a)
	}
	if !hmac.Equal(ans[:macLen], proof(secret, 'A', hello, nonce)) {
		return sealers{}, fmt.Errorf("the peer at %v did not prove this run's secret: it is not PE %d of this run", c.RemoteAddr(), a)
	}
	if ans[macLen] != 1 {
		return sealers{}, fmt.Errorf("PE %d refused the connection", a)
	}
	var k sealers
	k.tx, k.rx, err = frameKeys(secret, hello, nonce, mode, true)
	return k, err
}

// acceptHandshake is the listener's side: the dialing PE and the network,
// once it has proved the secret, the listener's proof, to send with ok,
// and the connection's keys.
func acceptHandshake(c net.Conn, secret []byte, mode Mode, self, n int) (d, netw int, mine []byte, keys sealers, err error) {
	hello := make([]byte, helloLen)
	if _, err = io.ReadFull(c, hello); err != nil {
		return
	}
	d, a, netw := int(binary.LittleEndian.Uint16(hello[8:])), int(binary.LittleEndian.Uint16(hello[10:])), int(hello[12])
	if !bytes.Equal(hello[:8], []byte(magic)) || a != self || d <= self || d >= n || netw > 1 {
		return 0, 0, nil, keys, errors.New("not a hello of this run")
	}
	nonce := make([]byte, 32)
	rand.Read(nonce)
	if _, err = c.Write(nonce); err != nil {
		return
	}
	mac := make([]byte, macLen)
	if _, err = io.ReadFull(c, mac); err != nil {
		return
	}
	if !hmac.Equal(mac, proof(secret, 'D', hello, nonce)) {
		return 0, 0, nil, keys, errors.New("wrong proof")
	}
	keys.tx, keys.rx, err = frameKeys(secret, hello, nonce, mode, false)
	return d, netw, proof(secret, 'A', hello, nonce), keys, err
}

// sealers are a connection's keys: this PE's frames, the peer's.
type sealers struct{ tx, rx cipher.AEAD }

// Connect makes PE self's side of the data network of len(addrs) PEs
// (addrs[k] is where PE k listens; this PE's own is not dialled): it
// dials the PEs below it and accepts those above, on each network, each
// connection proving secret; timeout bounds the whole and each later
// wait. Connections that fail the handshake are refused and the listener
// goes on. It closes the listener.
func (l *Listener) Connect(self int, addrs []netip.AddrPort, secret []byte, timeout time.Duration, sameHost bool) (*Net, error) {
	n := len(addrs)
	deadline := time.Now().Add(timeout)
	s := &setup{fds: make([][2]int, n), keys: make([][2]sealers, n), open: map[net.Conn]bool{}}
	for k := range s.fds {
		s.fds[k] = [2]int{-1, -1}
	}
	var wg sync.WaitGroup
	l.ln.SetDeadline(deadline)
	wg.Go(func() { l.acceptAbove(s, &wg, self, n, secret, deadline) })
	l.dialBelow(s, &wg, self, addrs, secret, deadline)
	for !s.done(2*(n-1)) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	l.ln.Close()
	s.closeOpen() // strangers still in their handshake
	wg.Wait()
	return l.finish(s, self, n, timeout, sameHost)
}

// acceptAbove accepts the PEs above self until the listener closes, each
// connection's handshake in a goroutine of wg's, so that a stranger that
// stalls holds up no PE; connections over maxShaking, and those that fail
// the handshake, are refused.
func (l *Listener) acceptAbove(s *setup, wg *sync.WaitGroup, self, n int, secret []byte, deadline time.Time) {
	for {
		c, err := l.ln.AcceptTCP()
		if err != nil {
			return
		}
		ok, full := s.track(c, maxShaking(n))
		if !ok {
			c.Close()
			return
		}
		if full {
			c.Close()
			l.refused.Add(1)
			continue
		}
		wg.Go(func() {
			defer s.untrack(c)
			c.SetDeadline(deadline)
			d, netw, mine, keys, err := acceptHandshake(c, secret, l.Mode, self, n)
			if err == nil {
				err = s.got(d, netw, c, mine, keys)
			}
			if err != nil {
				l.refused.Add(1)
			}
		})
	}
}

// dialBelow dials each PE below self on each network, each in a goroutine
// of wg's, so that the PEs' connections are made at once; a PE that
// cannot be reached is an error of s's, naming it.
func (l *Listener) dialBelow(s *setup, wg *sync.WaitGroup, self int, addrs []netip.AddrPort, secret []byte, deadline time.Time) {
	for a := range self {
		for netw := range 2 {
			wg.Go(func() {
				err := dialPE(addrs[a], deadline, func(c *net.TCPConn) error {
					c.SetDeadline(deadline)
					keys, err := dialHandshake(c, secret, l.Mode, self, a, netw)
					if err != nil {
						return err
					}
					return s.got(a, netw, c, nil, keys)
				})
				if err != nil {
					s.fail(fmt.Errorf("PE %d at %v: %w", a, addrs[a], err))
				}
			})
		}
	}
}

// finish makes the Net once every connection is made and no goroutine of
// s's failed; else it closes the sockets made and returns every reason,
// the PEs that never connected among them.
func (l *Listener) finish(s *setup, self, n int, timeout time.Duration, sameHost bool) (*Net, error) {
	var missing []int
	for k := range n {
		if k != self && (s.fds[k][0] < 0 || s.fds[k][1] < 0) {
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 && len(s.errs) == 0 {
		t, err := newNet(self, n, s.fds, s.keys, l.Mode == Private, timeout, sameHost)
		if err == nil {
			return t, nil
		}
		s.errs = append(s.errs, fmt.Errorf("the kernel's readiness set: %w", err))
	}
	for k := range s.fds {
		for _, fd := range s.fds[k] {
			if fd >= 0 {
				unix.Close(fd)
			}
		}
	}
	if len(missing) > 0 {
		s.errs = append(s.errs, fmt.Errorf("PEs %v did not connect within %v (not running, or the address each advertised is not reachable from here: %s picks it)", missing, timeout, EnvListen))
	}
	return nil, fmt.Errorf("tcpnet: PE %d: %w", self, errors.Join(s.errs...))
}

// setup is Connect's state, shared by its goroutines.
type setup struct {
	mu     sync.Mutex
	fds    [][2]int // each PE's connection on each network
	keys   [][2]sealers
	have   int
	errs   []error
	open   map[net.Conn]bool // accepted connections in their handshake
	closed bool
}

// got keeps c's socket as PE k's connection on netw; on the listener's
// side it then sends its proof (ack) and ok.
func (s *setup) got(k, netw int, c net.Conn, ack []byte, keys sealers) error {
	fd, err := takeFD(c)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fds[k][netw] >= 0 || s.closed {
		unix.Close(fd)
		return fmt.Errorf("PE %d connected twice on one network", k)
	}
	if ack != nil { // 33 bytes into an empty socket buffer
		if _, err := unix.Write(fd, append(ack, 1)); err != nil {
			unix.Close(fd)
			return err
		}
	}
	s.fds[k][netw], s.keys[k][netw] = fd, keys
	s.have++
	return nil
}

func (s *setup) fail(err error) {
	s.mu.Lock()
	s.errs = append(s.errs, err)
	s.mu.Unlock()
}

func (s *setup) done(want int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.have == want || len(s.errs) > 0
}

// track notes c in its handshake: false once setup is over; full when
// most connections already are (c is then refused).
func (s *setup) track(c net.Conn, most int) (ok, full bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false, false
	}
	if len(s.open) >= most {
		return true, true
	}
	s.open[c] = true
	return true, false
}

// maxShaking caps the accepted connections in their handshake at once, so
// that a flood of strangers costs a bounded number of goroutines: every
// PE above this one may dial both networks at once, with room for as many
// strangers again.
func maxShaking(n int) int { return 4 * n }

func (s *setup) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.open, c)
	s.mu.Unlock()
	c.Close()
}

func (s *setup) closeOpen() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for c := range s.open {
		c.Close()
	}
}

// dialPE dials addr until it answers or the deadline passes, and runs
// shake on the connection; a connection refused while the peer is not
// listening yet is tried again.
func dialPE(addr netip.AddrPort, deadline time.Time, shake func(*net.TCPConn) error) error {
	for {
		d := net.Dialer{Deadline: deadline}
		c, err := d.Dial("tcp", addr.String())
		if err == nil {
			err = shake(c.(*net.TCPConn))
			c.Close()
			return err
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// takeFD returns a descriptor of c's socket of its own, non-blocking,
// for the transport's own reads and writes; c can then be closed.
func takeFD(c net.Conn) (int, error) {
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	var derr error
	if err := rc.Control(func(s uintptr) {
		fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0)
		if derr == nil {
			unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
		}
	}); err != nil {
		return -1, err
	}
	if derr != nil {
		return -1, derr
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}
