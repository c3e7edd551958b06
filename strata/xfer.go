package strata

// Block transfers (manual §7) and multi-block transfers (§8): Xfer
// messages into ports. The CM-5 packed 4 words of data into each 5-word
// packet; here a block goes in packets of up to the endpoint's MaxPayload
// (am.MaxMedium, 64 words, under MPI; where the PEs share memory — in
// process, papersctl run — a payload is staged beside the inbox and a
// packet carries up to 64 Ki words), each naming its port and offset in
// one word as the manual's port_and_offset does, and each deposited and
// counted by the receiver's handler, so the port's count and handler work
// as the manual has them. The single-packet forms (SendXfer…, the XferPut
// handlers) are kept as the manual has them.

import (
	"fmt"
	"unsafe"

	"github.com/ttlpapers/ttlpapers/am"
	"github.com/ttlpapers/ttlpapers/papers"
)

// Port numbers and offsets, as the manual fixes them: the port in the low
// 12 bits of port_and_offset, the signed offset in the high 20.
const (
	NumPorts      = 4096     // STRATA_NUM_PORTS
	MinXferOffset = -1 << 19 // STRATA_MIN_XFER_OFFSET
	MaxXferOffset = 1<<19 - 1
)

// Port is one entry of the port table (Strata's StrataPort). A block
// transfer's word at offset k goes to Base[Origin+k] (the manual's base
// pointer may point into the middle of the block: Origin says where), and
// counts Count down; when Count reaches zero, Handler runs with the port
// number as its first argument. User1 to User5 are the program's.
type Port struct {
	Base                              []Word
	Origin                            int
	Count                             int
	Handler                           Handler
	User1, User2, User3, User4, User5 int
}

// Port returns entry n of this PE's port table (StrataPortTable[n]), or
// nil when n is not a port number.
func (s *S) Port(n int) *Port {
	if n < 0 || n >= NumPorts {
		return nil
	}
	if s.ports == nil {
		s.ports = make([]Port, NumPorts)
	}
	return &s.ports[n]
}

// Strata's own handlers, at numbers reserved on every PE.
var (
	hBase = am.Reserve(6)
	// XferHeaderHandler is StrataXferHeaderHandler(port, size, handler):
	// it adds size to the port's count, sets the port's handler to handler
	// (a HandlerID) if the port has none, and runs it if the count is
	// zero. A sender sets up the receiver's port with it:
	// s.SendBothRLPollBoth(proc, strata.XferHeaderHandler, port, size, h).
	XferHeaderHandler = hBase
	// XferPut1Handler, XferPut2Handler and XferPut3Handler are
	// StrataXferPut1Handler …: (port_and_offset, data1 …) store 1 to 3
	// words, for blocks whose length is not a multiple of 4.
	XferPut1Handler = hBase + 1
	XferPut2Handler = hBase + 2
	XferPut3Handler = hBase + 3
	hXfer4          = hBase + 4 // SendXfer…'s 4-word packet
	hXferBlock      = hBase + 5 // a block's packet: port_and_offset, and the data as payload
)

// PortAndOffsetCons packs a port number and an offset into one word
// (Strata's PortAndOffsetCons): the port in the low 12 bits, the offset in
// the high 20. The arguments must be in range (SendBlockXfer checks).
func PortAndOffsetCons(port int, offset int) Word {
	return Word(offset)<<12 | Word(port)&(NumPorts-1)
}

// PortAndOffsetPort extracts the port number (Strata's PortAndOffsetPort).
func PortAndOffsetPort(pao Word) int { return int(pao & (NumPorts - 1)) }

// PortAndOffsetOffset extracts the offset, with its sign (Strata's
// PortAndOffsetOffset).
func PortAndOffsetOffset(pao Word) int { return int(int32(pao) >> 12) }

// checkXfer validates a transfer before any packet leaves.
func (s *S) checkXfer(op string, proc, port, offset, size int) error {
	switch {
	case proc < 0 || proc >= s.n:
		return papers.Errorf("strata", s.self, "%s: processor %d: the PEs are 0 to %d", op, proc, s.n-1)
	case port < 0 || port >= NumPorts:
		return papers.Errorf("strata", s.self, "%s: port %d: ports are 0 to %d", op, port, NumPorts-1)
	case offset < MinXferOffset || offset+size > MaxXferOffset:
		return papers.Errorf("strata", s.self, "%s: offset %d and size %d: offsets run from %d to %d (send a larger block through more than one port)", op, offset, size, MinXferOffset, MaxXferOffset)
	}
	return nil
}

// deposit stores data at offset of port and counts it, running the port's
// handler when the count reaches zero.
func (s *S) deposit(m *am.Msg, pao Word, data []Word) {
	port, off := PortAndOffsetPort(pao), PortAndOffsetOffset(pao)
	p := s.Port(port)
	at := p.Origin + off
	if at < 0 || at+len(data) > len(p.Base) {
		m.Fail(fmt.Errorf("strata: block transfer of %d words at offset %d of port %d: outside the port's Base (%d words from Origin %d)", len(data), off, port, len(p.Base), p.Origin))
		return
	}
	copy(p.Base[at:], data)
	s.countDown(port, len(data))
}

func (s *S) countDown(port, n int) {
	p := &s.ports[port]
	p.Count -= n
	if p.Count == 0 && p.Handler != nil {
		p.Handler(s, [4]Word{Word(port)})
	}
}

func (s *S) onXferHeader(m *am.Msg) {
	port := int(m.Args[0])
	p := s.Port(port)
	if p == nil {
		m.Fail(fmt.Errorf("strata: StrataXferHeaderHandler: port %d: ports are 0 to %d", port, NumPorts-1))
		return
	}
	if h := int(m.Args[2]); p.Handler == nil && h < len(s.handlers) {
		p.Handler = s.handlers[h]
	}
	s.countDown(port, -int(int32(m.Args[1])))
}

// onXferPut is StrataXferPutNHandler: port_and_offset and n words.
func (s *S) onXferPut(n int) am.Handler {
	return func(m *am.Msg) {
		d := [3]Word{Word(m.Args[1]), Word(m.Args[2]), Word(m.Args[3])}
		s.deposit(m, Word(m.Args[0]), d[:n])
	}
}

func (s *S) onXfer4(m *am.Msg) {
	a := m.Args
	d := [4]Word{Word(a[1]), Word(a[1] >> 32), Word(a[2]), Word(a[2] >> 32)}
	s.deposit(m, Word(a[0]), d[:])
}

func (s *S) onXferBlock(m *am.Msg) {
	// The payload starts 8-byte aligned in its packet (after Args).
	s.deposit(m, Word(m.Args[0]), unsafe.Slice((*Word)(unsafe.Pointer(unsafe.SliceData(m.Payload))), len(m.Payload)/4))
}

// sendXfer sends one 4-word Xfer packet.
func (s *S) sendXfer(op string, proc int, pao Word, first am.Net, poll am.Nets, d1, d2, d3, d4 Word) error {
	if err := s.checkXfer(op, proc, PortAndOffsetPort(pao), PortAndOffsetOffset(pao), 4); err != nil {
		return err
	}
	ep, err := s.net(op)
	if err != nil {
		return err
	}
	a := am.Args{uint64(pao), uint64(d1) | uint64(d2)<<32, uint64(d3) | uint64(d4)<<32}
	if err := ep.Send(proc, first, true, poll, hXfer4, a, nil); err != nil {
		return fmt.Errorf("strata: %s: %w", op, err)
	}
	return nil
}

// SendXferBothRLPollBoth sends a single-packet Xfer message: four words to
// the port and offset of pao on proc, on either network (right first),
// polling both (Strata's SendXferBothRLPollBoth).
func (s *S) SendXferBothRLPollBoth(proc int, pao Word, d1, d2, d3, d4 Word) error {
	return s.sendXfer("SendXferBothRLPollBoth", proc, pao, am.Right, am.PollBoth, d1, d2, d3, d4)
}

// SendXferBothLRPollBoth is SendXferBothRLPollBoth trying the left network
// first.
func (s *S) SendXferBothLRPollBoth(proc int, pao Word, d1, d2, d3, d4 Word) error {
	return s.sendXfer("SendXferBothLRPollBoth", proc, pao, am.Left, am.PollBoth, d1, d2, d3, d4)
}

// SendXferBothRLPollRight is SendXferBothRLPollBoth polling only the right
// network.
func (s *S) SendXferBothRLPollRight(proc int, pao Word, d1, d2, d3, d4 Word) error {
	return s.sendXfer("SendXferBothRLPollRight", proc, pao, am.Right, am.PollRight, d1, d2, d3, d4)
}

// SendXferBothLRPollRight is SendXferBothLRPollBoth polling only the right
// network.
func (s *S) SendXferBothLRPollRight(proc int, pao Word, d1, d2, d3, d4 Word) error {
	return s.sendXfer("SendXferBothLRPollRight", proc, pao, am.Left, am.PollRight, d1, d2, d3, d4)
}

// sendPacket sends the block packet of buf[from:] (as many words as a
// packet carries) to port at offset+from, alternating networks as SendBoth
// does.
func (s *S) sendPacket(op string, ep *am.Endpoint, proc, port, offset int, buf []Word, from int, poll am.Nets) (int, error) {
	per := ep.MaxPayload() / 4
	k := min(per, len(buf)-from)
	b := unsafe.Slice((*byte)(unsafe.Pointer(&buf[from])), 4*k)
	net := am.Net((from / per) & 1) // both networks, in turn
	a := am.Args{uint64(PortAndOffsetCons(port, offset+from))}
	if err := ep.Send(proc, net, true, poll, hXferBlock, a, b); err != nil {
		return 0, fmt.Errorf("strata: %s: %w", op, err)
	}
	return k, nil
}

func (s *S) sendBlock(op string, proc, port, offset int, buf []Word, poll am.Nets) error {
	if err := s.checkXfer(op, proc, port, offset, len(buf)); err != nil {
		return err
	}
	ep, err := s.net(op)
	if err != nil {
		return err
	}
	old := s.enter(StateXfer, LogDataNet, op)
	defer s.leave(old)
	for from := 0; from < len(buf); {
		k, err := s.sendPacket(op, ep, proc, port, offset, buf, from, poll)
		if err != nil {
			return err
		}
		from += k
	}
	return nil
}

// SendBlockXferPollBoth sends buf to port on proc, to be stored from
// offset (in words) on, on both networks, polling both (Strata's
// SendBlockXferPollBoth). The receiver must have set the port's Base;
// its Count and Handler may be set by either side (XferHeaderHandler).
func (s *S) SendBlockXferPollBoth(proc, port, offset int, buf []Word) error {
	return s.sendBlock("SendBlockXferPollBoth", proc, port, offset, buf, am.PollBoth)
}

// SendBlockXferPollRight is SendBlockXferPollBoth polling only the right
// network.
func (s *S) SendBlockXferPollRight(proc, port, offset int, buf []Word) error {
	return s.sendBlock("SendBlockXferPollRight", proc, port, offset, buf, am.PollRight)
}

// ABXid names an asynchronous block transfer (Strata's ABXid).
type ABXid int

type abx struct {
	proc, port, offset int
	buf                []Word
	sent               int
	complete           func(id ABXid, buf []Word)
	live               bool
}

// AsyncBlockXfer queues a block transfer of buf to port on proc (Strata's
// AsyncBlockXfer): ServiceAllTransfers or CompleteTransfer sends it, and
// complete, if not nil, runs once the last packet is sent. buf must not
// change until then. The id stays valid for the accessors until a later
// AsyncBlockXfer reuses it.
func (s *S) AsyncBlockXfer(proc, port, offset int, buf []Word, complete func(id ABXid, buf []Word)) (ABXid, error) {
	const op = "AsyncBlockXfer"
	if err := s.checkXfer(op, proc, port, offset, len(buf)); err != nil {
		return -1, err
	}
	if _, err := s.net(op); err != nil {
		return -1, err
	}
	t := abx{proc: proc, port: port, offset: offset, buf: buf, complete: complete, live: true}
	for i := range s.abx {
		if !s.abx[i].live {
			s.abx[i] = t
			return ABXid(i), nil
		}
	}
	s.abx = append(s.abx, t)
	return ABXid(len(s.abx) - 1), nil
}

// service sends up to packets packets of transfer id (all, if negative).
func (s *S) service(op string, id ABXid, packets int) error {
	t := &s.abx[id]
	for t.live && packets != 0 {
		if t.sent == len(t.buf) {
			t.live = false
			if t.complete != nil {
				t.complete(id, t.buf)
			}
			return nil
		}
		k, err := s.sendPacket(op, s.ep, t.proc, t.port, t.offset, t.buf, t.sent, am.PollBoth)
		if err != nil {
			return err
		}
		t.sent += k
		packets--
	}
	if t.live && t.sent == len(t.buf) {
		t.live = false
		if t.complete != nil {
			t.complete(id, t.buf)
		}
	}
	return nil
}

// ServiceAllTransfers sends 2*rounds packets of every pending transfer,
// interleaving them, or, with rounds -1, completes them all (Strata's
// ServiceAllTransfers: set up the transfers, then ServiceAllTransfers(-1)).
func (s *S) ServiceAllTransfers(rounds int) error {
	const op = "ServiceAllTransfers"
	if rounds < -1 {
		return papers.Errorf("strata", s.self, "%s(%d): rounds is -1 (all) or at least 0", op, rounds)
	}
	old := s.enter(StateXfer, LogDataNet, op)
	defer s.leave(old)
	for {
		pending := false
		for i := range s.abx {
			if s.abx[i].live {
				if err := s.service(op, ABXid(i), 2); err != nil {
					return err
				}
				pending = pending || s.abx[i].live
			}
		}
		if rounds > 0 {
			rounds--
		}
		if !pending || rounds == 0 {
			return nil
		}
	}
}

// CompleteTransfer sends what remains of transfer id (Strata's
// CompleteTransfer).
func (s *S) CompleteTransfer(id ABXid) error {
	if err := s.checkABX("CompleteTransfer", id); err != nil {
		return err
	}
	old := s.enter(StateXfer, LogDataNet, "CompleteTransfer")
	defer s.leave(old)
	return s.service("CompleteTransfer", id, -1)
}

func (s *S) checkABX(op string, id ABXid) error {
	if id < 0 || int(id) >= len(s.abx) {
		return papers.Errorf("strata", s.self, "%s: no transfer %d (AsyncBlockXfer returns the ids)", op, id)
	}
	return nil
}

func (s *S) abxOf(id ABXid) abx {
	if id < 0 || int(id) >= len(s.abx) {
		return abx{proc: -1, port: -1}
	}
	return s.abx[id]
}

// GetABXproc returns the transfer's destination processor (-1 for an id
// AsyncBlockXfer did not return).
func (s *S) GetABXproc(id ABXid) int { return s.abxOf(id).proc }

// GetABXport returns the transfer's port.
func (s *S) GetABXport(id ABXid) int { return s.abxOf(id).port }

// GetABXoffset returns the transfer's offset.
func (s *S) GetABXoffset(id ABXid) int { return s.abxOf(id).offset }

// GetABXbuffer returns the transfer's buffer.
func (s *S) GetABXbuffer(id ABXid) []Word { return s.abxOf(id).buf }

// GetABXremaining returns the words not yet sent.
func (s *S) GetABXremaining(id ABXid) int {
	t := s.abxOf(id)
	return len(t.buf) - t.sent
}
