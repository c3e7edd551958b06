package tcpnet

import (
	"crypto/cipher"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ttlpapers/ttlpapers/am"
)

// A frame on a connection: an 8-byte header — payload length (32 bits),
// handler (16), kind (8), argument words that follow (8) — the argument
// words up to the last non-zero one, and the payload, each part followed
// by its tag unless the payload is empty (seal_linux.go). The sender and
// the network are the connection's.
const (
	hdrLen    = 8
	maxFrame  = hdrLen + 4*8 + MaxStaged + 2*tagLen
	kindPkt   = 0
	kindBye   = 1 // the sender leaves: args[0] packets it took from this PE, args[1] 1 if it failed, payload why
	maxCause  = am.MaxMedium
	bufSize   = 1 << 20 // each connection's receive and send buffer
	directMin = 4096    // payloads from this long go from the caller's memory (writev), not through the send buffer
	// After a long payload, a read at a frame's start takes at most peek
	// bytes: a long payload that follows then arrives mostly where its
	// handler places it (am.Placer), not in the receive buffer, and
	// costs a read more.
	peek = 4096
)

// MaxStaged is the most payload one packet carries (am.Stager): a
// Split-C bulk put or a Strata block of up to 256 KiB is one frame.
const MaxStaged = 256 << 10

// Net is one PE's side of the TCP data network: an am.Transport (with
// long payloads: am.Stager) over a connection per other PE and network.
// Its methods are for the PE's goroutine, as the endpoint's are.
type Net struct {
	self, n int
	conns   []conn  // PE k's connection on net at k*2+net; self's are a queue in memory
	next    [2]int  // where Recv's round of the PEs starts, per network
	pending int     // connections with bytes waiting in their send buffer
	full    bool    // a send found no room
	room    bool    // and a socket has taken bytes since: Wait returns at once
	pconn   []*conn // the connections to other PEs; an epoll event's Fd is the index here
	ready   readiness
	crowded bool
	timeout time.Duration
	left    bool
	scratch [hdrLen + 4*8 + tagLen]byte
	tag     [tagLen]byte // a payload's tag, sent from here by writev
	iov     [][]byte
}

// conn is one connection: to PE peer, on network net.
type conn struct {
	fd       int // -1 for this PE's own queue
	peer     int
	idx      int32 // its index in Net.pconn
	watched  bool  // in the epoll set
	wantOut  bool  // the epoll set also reports it writable: its send buffer waits
	net      am.Net
	in       []byte // received bytes in[r:w]
	r, w     int
	held     bool // a staged payload in in[] is being handled: do not move it
	stagedAt int
	// A long payload read straight into the memory its handler names
	// (am.Placer): into[:got] has arrived, and ptag[:tagGot] of its tag.
	// The packet's handler and argument words wait in hand and args;
	// placed is the payload of the packet Recv returned, until Unstage.
	into, placed []byte
	got, tagGot  int
	ptag         [tagLen]byte
	hand         am.HandlerID
	args         am.Args
	placer       func(src int, h am.HandlerID, a am.Args, n int) []byte // the endpoint's (am.Placing), or nil
	unplaced     bool                                                   // the frame at in[r] asked for a place and got none
	long         bool                                                   // the last packet taken had a long payload to place (peek)
	iov          [3][]byte
	out          []byte // bytes to send, out[or:ow]
	or, ow       int
	sent         uint64 // packets accepted for this connection
	taken        uint64 // packets Recv took from it
	eof          error  // the stream ended (nil while it runs)
	bye          *am.GoneError
	lost         uint64 // packets sent that the peer left without taking

	seal, unseal cipher.AEAD // this direction's and the peer's keys; nil for this PE's own queue
	private      bool        // the frames are encrypted too
	tag          int         // a tag's length: 0 unsealed
	txSeq, rxSeq uint64      // the number of the next frame sent, and received
	nonce        [12]byte
}

func newNet(self, n int, fds [][2]int, keys [][2]sealers, private bool, timeout time.Duration, sameHost bool) (*Net, error) {
	t := &Net{self: self, n: n, conns: make([]conn, 2*n), timeout: timeout,
		crowded: sameHost && n > runtime.NumCPU(), iov: make([][]byte, 3)}
	for k := range n {
		for net := range 2 {
			c := &t.conns[2*k+net]
			c.peer, c.net, c.fd = k, am.Net(net), -1
			c.in = make([]byte, bufSize)
			if k != self {
				c.fd = fds[k][net]
				c.out = make([]byte, bufSize)
				c.seal, c.unseal, c.private = keys[k][net].tx, keys[k][net].rx, private
				if c.seal != nil {
					c.tag = tagLen
				}
				t.pconn = append(t.pconn, c)
			}
		}
	}
	if err := t.ready.open(t); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *Net) Self() int { return t.self }
func (t *Net) PEs() int  { return t.n }

// MaxStaged: a long payload travels in its packet's frame.
func (t *Net) MaxStaged() int { return MaxStaged }

// Crowded: the PEs are processes of this machine, more than its CPUs.
func (t *Net) Crowded() bool { return t.crowded }

func (t *Net) Send(dst int, p *am.Packet) (bool, error) {
	return t.send(dst, p, p.Data[:p.Len])
}

func (t *Net) SendStaged(dst int, p *am.Packet, payload []byte) (bool, error) {
	return t.send(dst, p, payload)
}

func (t *Net) send(dst int, p *am.Packet, payload []byte) (bool, error) {
	if t.left {
		return false, errors.New("this PE has left the data network")
	}
	c := &t.conns[2*dst+int(p.Net)]
	if c.eof != nil || c.bye != nil || t.conns[2*dst+int(p.Net^1)].bye != nil {
		if err := t.gone(dst); err != nil {
			return false, err
		}
	}
	nargs := 4
	for nargs > 0 && p.Args[nargs-1] == 0 {
		nargs--
	}
	h := t.scratch[:hdrLen+8*nargs]
	putHeader(h, len(payload), p.Handler, kindPkt, p.Args[:nargs])
	total := c.frameLen(nargs, len(payload))
	if c.fd < 0 { // to this PE: straight into its receive buffer
		return c.queue(h, payload, total), nil
	}
	if c.ow > c.or {
		if err := t.flush(c); err != nil {
			return false, err
		}
	}
	if c.ow == c.or && len(payload) >= directMin && !c.private { // private: the cipher writes the copy
		if err := t.writeDirect(c, h, payload); err != nil {
			return false, err
		}
		return true, nil
	}
	return t.buffer(c, h, payload, total)
}

// queue puts a frame of total bytes, header h and payload, into c's
// receive buffer: c is this PE's own queue, which no socket carries. It
// reports false when the buffer has no room.
func (c *conn) queue(h, payload []byte, total int) bool {
	if !c.room(total) {
		return false
	}
	copy(c.in[c.w:], h)
	copy(c.in[c.w+len(h):], payload)
	c.w += total
	c.sent++
	return true
}

// writeDirect sends a long payload from the caller's memory, with its
// header and tags, in one writev, so that it is not copied into the send
// buffer; c's send buffer must be empty. What the socket does not take
// then waits in the send buffer, which holds a frame.
func (t *Net) writeDirect(c *conn, h, payload []byte) error {
	t.iov[0], t.iov[2] = c.sealApart(h, payload, &t.tag)
	t.iov[1] = payload
	n, err := unix.Writev(c.fd, t.iov)
	if err != nil && err != unix.EAGAIN && err != unix.EINTR {
		return t.broken(c, err)
	}
	n = max(n, 0)
	c.sent++
	c.or, c.ow = 0, 0
	for _, part := range t.iov {
		if n >= len(part) {
			n -= len(part)
			continue
		}
		c.ow += copy(c.out[c.ow:], part[n:])
		n = 0
	}
	if c.ow > c.or {
		t.pending++
	}
	return nil
}

// buffer copies a frame of total bytes into c's send buffer, moving what
// waits there to its start when only that makes room, and flushes it. It
// reports false, and notes that a send found no room, when the frame does
// not fit.
func (t *Net) buffer(c *conn, h, payload []byte, total int) (bool, error) {
	if len(c.out)-c.ow < total {
		if c.or == 0 || len(c.out)-(c.ow-c.or) < total {
			t.full = true
			return false, nil
		}
		c.ow = copy(c.out, c.out[c.or:c.ow])
		c.or = 0
	}
	wasEmpty := c.ow == c.or
	c.ow += c.put(h, payload)
	c.sent++
	if wasEmpty {
		t.pending++
	}
	return true, t.flush(c)
}

func putHeader(h []byte, n int, handler am.HandlerID, kind byte, args []uint64) {
	binary.LittleEndian.PutUint32(h, uint32(n))
	binary.LittleEndian.PutUint16(h[4:], uint16(handler))
	h[6], h[7] = kind, byte(len(args))
	for i, a := range args {
		binary.LittleEndian.PutUint64(h[hdrLen+8*i:], a)
	}
}

// flush writes what c's send buffer holds, as far as the socket takes it.
func (t *Net) flush(c *conn) error {
	for c.ow > c.or {
		n, err := unix.Write(c.fd, c.out[c.or:c.ow])
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			t.ready.watch(c, true) // wake the waits when it drains
			return nil
		}
		if err != nil {
			return t.broken(c, err)
		}
		c.or += n
		t.room = t.full
	}
	c.or, c.ow = 0, 0
	t.pending--
	t.ready.watch(c, false)
	return nil
}

// flushAll flushes every connection that has bytes waiting.
func (t *Net) flushAll() {
	if t.pending == 0 {
		return
	}
	for _, c := range t.pconn {
		if c.ow > c.or && c.eof == nil {
			t.flush(c) // an error is the peer's departure, which Gone reports
		}
	}
}

// broken records that c's stream failed and returns why its peer is gone.
func (t *Net) broken(c *conn, err error) error {
	if c.eof == nil {
		c.eof = err
	}
	if c.ow > c.or {
		c.or, c.ow = 0, 0
		t.pending--
	}
	return t.gone(c.peer)
}

// room makes n bytes of room at the end of c's receive buffer, moving
// what is unread to its start if need be: false if it cannot.
func (c *conn) room(n int) bool {
	if len(c.in)-c.w >= n {
		return true
	}
	if c.held || c.w-c.r+n > len(c.in) {
		return false
	}
	c.w = copy(c.in, c.in[c.r:c.w])
	c.r = 0
	return true
}

// fill reads what the socket has for c, as far as its buffer holds it.
func (c *conn) fill() {
	if c.fd < 0 || c.eof != nil {
		return
	}
	if c.into == nil {
		c.place()
	}
	if c.r == c.w && !c.held {
		c.r, c.w = 0, 0
	}
	var n int
	var err error
	if c.into != nil { // the rest of a placed payload, its tag, and what follows
		c.iov = [3][]byte{c.into[c.got:], c.ptag[c.tagGot:], c.in[c.w:min(len(c.in), c.w+peek)]}
		n, err = unix.Readv(c.fd, c.iov[:])
		if n > 0 {
			k := min(n, len(c.into)-c.got)
			c.got += k
			t := min(n-k, tagLen-c.tagGot)
			c.tagGot += t
			c.w += n - k - t
		}
	} else {
		if len(c.in)-c.w < maxFrame && !c.room(maxFrame) && c.w == len(c.in) {
			return
		}
		end := len(c.in)
		if c.long && c.r == c.w {
			end = min(end, c.w+peek)
		}
		n, err = unix.Read(c.fd, c.in[c.w:end])
		if n > 0 {
			c.w += n
		}
	}
	switch {
	case n > 0:
	case err == nil: // the peer closed its side
		c.eof = errClosed
	case err != unix.EAGAIN && err != unix.EINTR:
		c.eof = err
	}
	if c.eof != nil && c.into != nil { // it was never checked: zeroed, as if it failed
		clear(c.into)
		c.into = nil
	}
}

var errClosed = errors.New("connection closed")

func argsOf(h []byte, nargs int) am.Args {
	var args am.Args
	for i := range nargs {
		args[i] = binary.LittleEndian.Uint64(h[hdrLen+8*i:])
	}
	return args
}

// place starts to read the long payload of the frame at in[r] into the
// memory its handler names (am.Placer), if the frame's header has arrived
// and is checked but not all of its payload has: what has arrived moves
// there, and fill reads the rest there. One copy fewer, and no wait for
// the whole frame in the receive buffer. It reports whether it started.
func (c *conn) place() bool {
	if !c.places() || c.unplaced || c.bye != nil || c.w-c.r < hdrLen {
		return false
	}
	f := c.in[c.r:c.w]
	n, kind, nargs := int(binary.LittleEndian.Uint32(f)), f[6], int(f[7])
	if kind != kindPkt || n <= am.MaxMedium || n > MaxStaged || nargs > 4 ||
		len(f) < hdrLen+8*nargs+tagLen || len(f) >= c.frameLen(nargs, n) {
		return false
	}
	if !c.openHead(f, nargs) {
		c.eof = c.forged("does not match its tag")
		c.r = c.w
		return false
	}
	h, args := am.HandlerID(binary.LittleEndian.Uint16(f[4:])), argsOf(f, nargs)
	dst := c.placer(c.peer, h, args, n)
	if len(dst) != n {
		c.unplaced = true // staged, as without a place
		return false
	}
	at := hdrLen + 8*nargs + tagLen
	c.got = copy(dst, f[at:])
	c.tagGot = copy(c.ptag[:], f[at+c.got:])
	c.into, c.hand, c.args = dst, h, args
	c.r = c.w
	return true
}

// places reports whether c reads long payloads into their memory: on
// authenticated connections, whose payload's tag is apart from it.
// Private ones are not (the cipher wants the tag after the payload).
func (c *conn) places() bool { return c.placer != nil && c.tag > 0 && !c.private }

// landed takes a placed payload's packet into p once the payload and its
// tag are in and match: false until then. A payload that does not match
// is zeroed, and the stream ends as forged.
func (c *conn) landed(p *am.Packet) bool {
	if !c.ready() {
		return false
	}
	if _, err := c.unseal.Open(nil, c.setNonce(c.rxSeq, 1), c.ptag[:], c.into); err != nil {
		clear(c.into)
		c.into = nil
		c.eof = c.forged("does not match its tag")
		c.r = c.w
		return false
	}
	c.rxSeq++
	p.Src, p.Net, p.Handler, p.Args = int32(c.peer), c.net, c.hand, c.args
	p.Len, p.Staged = 0, uint32(len(c.into))
	c.placed, c.into, c.long = c.into, nil, true
	c.taken++
	return true
}

// frame takes c's next packet into p, or its departure: false when no
// whole packet is there. A long payload whose handler names its memory
// is read there once its header is checked (place).
func (c *conn) frame(p *am.Packet) bool {
	if c.into == nil && c.place() {
		c.fill() // what the socket has of the rest
	}
	if c.into != nil {
		return c.landed(p)
	}
	if c.w-c.r >= hdrLen && c.bye == nil {
		h := c.in[c.r:]
		n := int(binary.LittleEndian.Uint32(h))
		kind, nargs := h[6], int(h[7])
		if nargs > 4 || n > MaxStaged || kind > kindBye {
			if c.seal != nil {
				c.eof = c.forged(fmt.Sprintf("has a garbled header (kind %d, %d argument words, %d payload bytes)", kind, nargs, n))
			} else {
				c.eof = fmt.Errorf("garbled frame from PE %d (kind %d, %d argument words, %d payload bytes)", c.peer, kind, nargs, n)
			}
			c.r = c.w
			return false
		}
		total := c.frameLen(nargs, n)
		if c.w-c.r < total {
			if c.r+total > len(c.in) {
				c.room(total)
			}
			return false
		}
		if !c.open(c.in[c.r:c.r+total], nargs, n) {
			c.eof = c.forged("does not match its tag")
			c.r = c.w
			return false
		}
		args := argsOf(h, nargs)
		at := c.r + hdrLen + 8*nargs + c.tag
		c.r += total
		c.unplaced, c.long = false, n > am.MaxMedium && c.places()
		if kind == kindBye {
			c.bye = &am.GoneError{PE: c.peer}
			if args[1] != 0 {
				c.bye.Cause = errors.New(string(c.in[at : at+n]))
			}
			if c.sent > args[0] {
				c.lost = c.sent - args[0]
			}
			return false
		}
		p.Src, p.Net, p.Handler, p.Args = int32(c.peer), c.net, am.HandlerID(binary.LittleEndian.Uint16(h[4:])), args
		if n > am.MaxMedium {
			p.Len, p.Staged = 0, uint32(n)
			c.held, c.stagedAt = true, at
		} else {
			p.Len, p.Staged = uint16(n), 0
			copy(p.Data[:], c.in[at:at+n])
		}
		c.taken++
		return true
	}
	return false
}

// Recv takes a frame already read, else reads the connections the kernel
// says have bytes (one epoll_wait, whatever the PE count, unless the last
// one read bytes not yet looked at: readiness.poll) and looks again.
func (t *Net) Recv(net am.Net, p *am.Packet) bool {
	t.flushAll()
	if t.take(net, p) {
		return true
	}
	return t.ready.poll() > 0 && t.take(net, p)
}

// take takes the next whole frame read on net, in turn from the PEs.
func (t *Net) take(net am.Net, p *am.Packet) bool {
	start := t.next[net]
	for i := range t.n {
		k := start + i
		if k >= t.n {
			k -= t.n
		}
		if t.conns[2*k+int(net)].frame(p) {
			t.next[net] = k + 1
			if t.next[net] == t.n {
				t.next[net] = 0
			}
			return true
		}
	}
	return false
}

func (t *Net) Staged(p *am.Packet) []byte {
	c := &t.conns[2*int(p.Src)+int(p.Net)]
	if c.placed != nil {
		return c.placed
	}
	return c.in[c.stagedAt : c.stagedAt+int(p.Staged)]
}

func (t *Net) Unstage(p *am.Packet) {
	c := &t.conns[2*int(p.Src)+int(p.Net)]
	c.held, c.placed = false, nil
}

// SetPlacer: long payloads are read into the memory their handlers name.
func (t *Net) SetPlacer(place func(src int, h am.HandlerID, a am.Args, n int) []byte) {
	for _, c := range t.pconn {
		c.placer = place
	}
}

// ready reports whether a whole frame waits in a receive buffer.
func (c *conn) ready() bool {
	if c.into != nil {
		return c.got == len(c.into) && c.tagGot == tagLen
	}
	if c.w-c.r < hdrLen {
		return false
	}
	h := c.in[c.r:]
	return c.w-c.r >= c.frameLen(int(h[7]), int(binary.LittleEndian.Uint32(h)))
}

// Wait sleeps in Go's netpoller until a connection has bytes, a full
// send buffer drains, d passes or done is closed (ready.wait).
func (t *Net) Wait(d time.Duration, done <-chan struct{}) {
	t.flushAll()
	if t.room { // a send that found no room may find it now
		t.room, t.full = false, false
		return
	}
	for i := range t.conns {
		if t.conns[i].ready() {
			return
		}
	}
	t.ready.wait(d, done)
}

// Sleeps: Wait returns when the kernel says something arrived or drained.
func (t *Net) Sleeps() bool { return true }

// Gone reports PE k's departure: a departure frame it sent (with the
// packets this PE sent it that it left without handling), or its
// connections' end without one — its process died, or its host reset
// them. It reads what has arrived from k, to see a departure that follows
// everything the endpoint has handled.
func (t *Net) Gone(k int) error {
	if k == t.self {
		if t.left {
			return &am.GoneError{PE: k}
		}
		return nil
	}
	t.ready.look()
	for net := range 2 {
		c := &t.conns[2*k+net]
		if c.bye == nil && c.eof == nil {
			if c.into == nil && c.ready() && c.in[c.r+6] == kindBye {
				var p am.Packet
				c.frame(&p)
			}
		}
	}
	return t.gone(k)
}

// gone is Gone from what has been read.
func (t *Net) gone(k int) error {
	if k == t.self {
		return nil
	}
	l, r := &t.conns[2*k], &t.conns[2*k+1]
	bye := l.bye
	if bye == nil {
		bye = r.bye
	}
	if bye != nil {
		if lost := l.lost + r.lost; lost > 0 {
			cause := "its program returned"
			if bye.Cause != nil {
				cause = bye.Cause.Error()
			}
			return &am.GoneError{PE: k, Cause: fmt.Errorf("%s; %d packet(s) this PE sent it arrived after it left, never handled", cause, lost)}
		}
		return bye
	}
	for _, c := range []*conn{l, r} {
		if errors.Is(c.eof, ErrForged) {
			return &am.GoneError{PE: k, Cause: c.eof}
		}
		if c.eof != nil && !c.ready() {
			return &am.GoneError{PE: k, Cause: fmt.Errorf("its connection ended without its leaving (%v): its process died, or its host reset the connection", c.eof), Died: true}
		}
	}
	return nil
}

// Leave drains, then tells every other PE it leaves (with how many
// packets it took from each, and why, if it failed) and closes its side
// of the connections.
func (t *Net) Leave(cause error, drain func()) {
	if t.left {
		return
	}
	if drain != nil {
		drain()
	}
	t.left = true
	why := ""
	failed := uint64(0)
	if cause != nil {
		why, failed = cause.Error(), 1
		if len(why) > maxCause {
			why = why[:maxCause]
		}
	}
	deadline := time.Now().Add(t.timeout)
	for _, c := range t.pconn {
		if c.eof != nil || c.bye != nil {
			continue
		}
		h := t.scratch[:hdrLen+16]
		putHeader(h, len(why), 0, kindBye, []uint64{c.taken, failed})
		total := c.frameLen(2, len(why))
		if len(c.out)-c.ow < total {
			c.ow = copy(c.out, c.out[c.or:c.ow])
			c.or = 0
		}
		if len(c.out)-c.ow < total {
			continue // it has not read for a whole buffer: it sees the connection end
		}
		if c.ow == c.or {
			t.pending++
		}
		c.ow += c.put(h, []byte(why))
	}
	// Send it all, bounded by the timeout: a peer that does not read is
	// named by its own waits.
	for t.pending > 0 && time.Now().Before(deadline) {
		t.flushAll()
		if t.pending > 0 {
			t.Wait(time.Millisecond, nil)
		}
	}
	for _, c := range t.pconn {
		unix.Shutdown(c.fd, unix.SHUT_WR)
	}
}

// Close closes the connections (after Leave: the endpoint's Close or
// Abort).
func (t *Net) Close() error {
	t.ready.close()
	for _, c := range t.pconn {
		if c.fd >= 0 {
			unix.Close(c.fd)
			c.fd = -1
		}
	}
	return nil
}

// Interface checks.
var (
	_ am.Transport = (*Net)(nil)
	_ am.Stager    = (*Net)(nil)
	_ am.Placing   = (*Net)(nil)
	_ am.Crowded   = (*Net)(nil)
	_ am.Sleeper   = (*Net)(nil)
)
