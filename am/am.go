// Package am is the data network of the seeds: active messages, as the
// CM-5 had them (CMAM; Liu and Culler's measurements) and as Strata's data
// network and Libsplit-C's global memory stand on them.
//
// An active message names a handler on the receiving PE and carries four
// argument words (Args) and, here, up to MaxMedium bytes of payload. The
// receiver runs the handler when it polls; the handler's job is to take the
// message out of the network and fold it into the computation, quickly.
// Handlers are numbers into a table every PE fills the same way (Register,
// in the same order on every PE, as every CM-5 node ran the same code
// image; the AM paper's note 1 is this handler table).
//
// # The polling rules
//
// They are the seeds', and the endpoint enforces them:
//
//   - Messages are received only by polling: Poll, and every call that
//     waits (Wait) or sends. A send polls while it tries — Request polls
//     both networks, Reply only the right one — so a PE that sends a lot
//     also drains what is sent to it, and two PEs flooding each other
//     cannot deadlock.
//   - Handlers run atomically: a handler is never interrupted by another,
//     and Poll or Wait from inside a handler is an error (ErrInHandler).
//   - No handler blocks. A request handler may send one reply, to the
//     requester, on the right network (Msg.Reply); if the requester's inbox
//     is full the reply waits in this PE's queue and goes at its next poll
//     (CMAML's work queue), instead of polling inside the handler. A reply
//     handler sends nothing, and a handler sends no request (CMAM, HPAM:
//     Luna §4.4.2): ErrHandlerSend.
//
// # Faults
//
// Every wait is bounded by the endpoint's timeout (papers.Config.Timeout
// in the runners) and its context. A wait on a PE that has left the network
// — its program returned, failed or panicked — ends at once in a
// *GoneError naming it; a wait that runs out of time ends in a
// *papers.TimeoutError naming the PE waited for (Missing). A message sent to a PE that has
// left is an error for the sender; one that was in the receiver's inbox
// when it left is handled by its Close, or reported by it. Nothing is
// dropped silently.
//
// Runners attach an endpoint to each papers.PE; Of returns it.
package am

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/ttlpapers/ttlpapers/am/internal/queue"
	"github.com/ttlpapers/ttlpapers/papers"
)

// HandlerID is a handler's number in every PE's table.
type HandlerID = queue.HandlerID

// Args are an active message's four argument words (the CM-5's five-word
// packet less the handler's).
type Args = queue.Args

// Handler runs on the receiving PE when it polls a message. m is valid only
// during the call.
type Handler func(m *Msg)

// Msg is the message a handler is running for.
type Msg struct {
	Src     int    // the sending PE
	Net     Net    // the network it came on: Left for requests, Right for replies
	Args    Args   // its argument words
	Payload []byte // its payload, valid during the handler only
	ep      *Endpoint
	replied bool
}

// Endpoint is the handler's PE's endpoint, for its state (Value).
func (m *Msg) Endpoint() *Endpoint { return m.ep }

// Reply sends the reply to a request: handler h on the requesting PE, on
// the right network. A request handler may reply once; a reply handler may
// not (ErrHandlerSend).
func (m *Msg) Reply(h HandlerID, a Args) error { return m.ReplyMedium(h, a, nil) }

// ReplyMedium is Reply with a payload of up to MaxPayload bytes.
func (m *Msg) ReplyMedium(h HandlerID, a Args, payload []byte) error {
	e := m.ep
	if e.cur != m {
		return e.misuse("reply", fmt.Errorf("%w: the message's handler has returned", ErrHandlerSend))
	}
	return e.send("reply", int(m.Src), Right, 0, h, a, payload)
}

// Fail reports an error a handler cannot return — a bad address in a
// request, say: the poll that ran the handler returns it.
func (m *Msg) Fail(err error) {
	if e := m.ep; e.err == nil {
		e.err = e.errorf("handling a message from PE %d: %w", m.Src, err)
	}
}

// Errors a misuse of the polling rules returns (wrapped, naming the PE).
var (
	// ErrInHandler: Poll or Wait from inside a handler, which must run
	// atomically and never block.
	ErrInHandler = errors.New("called from inside a handler: handlers run atomically and never poll or wait; do it after the poll that ran the handler returns")
	// ErrHandlerSend: a send from a handler other than one reply to the
	// requester.
	ErrHandlerSend = errors.New("a handler may only send one reply, to the requester, and only from a request handler")
	// ErrNoNetwork: the PE has no data network attached.
	ErrNoNetwork = errors.New("no data network attached: emulate.Run, papersctl run, mpirun and a real board's port driver (TCP, unless PAPERS_LISTEN=none) attach one to every PE (docs/datanet.md, Transports)")
)

// GoneError reports a PE that has left the data network: its program
// returned (Cause nil), or failed or panicked (Cause says how), or —
// Died — it went without leaving: its process died (Cause says how the
// transport saw it).
type GoneError struct {
	PE    int
	Cause error
	Died  bool
}

func (e *GoneError) Error() string {
	if e.Cause == nil {
		return fmt.Sprintf("PE %d has left the data network (its program returned)", e.PE)
	}
	return fmt.Sprintf("PE %d has left the data network: %v", e.PE, e.Cause)
}

func (e *GoneError) Unwrap() error { return e.Cause }

// Absence is the error as the data network's account of the PE: how it
// went, and its cause's text. A roll call (Endpoint.Absent) and a failing
// PE's report give it so.
func (e *GoneError) Absence() papers.Absence {
	a := papers.Absence{PE: e.PE, How: papers.Returned}
	switch {
	case e.Died:
		a.How = papers.Died
	case e.Cause != nil:
		a.How = papers.Failed
	}
	if e.Cause != nil {
		a.Cause = e.Cause.Error()
	}
	return a
}

// Options configure an endpoint.
type Options struct {
	// Timeout bounds every wait; zero means papers.DefaultTimeout.
	Timeout time.Duration
	// Context, when set, abandons waits once it is done.
	Context context.Context
}

// Stats count an endpoint's traffic.
type Stats struct {
	Sent, Handled, Deferred uint64
}

// Endpoint is one PE's end of the data network. Its methods are for the
// PE's own goroutine, like a papers.PE's.
type Endpoint struct {
	t        Transport
	direct   Direct       // t's one-sided access, if it has one
	crowded  bool         // its PEs outnumber the CPUs (Crowded), as the endpoint was made
	stage    Stager       // t's staging of long payloads, if it has it
	beat     queue.Beater // t's counts of polls, if it has them
	spin     Spinner      // t's own spin for waits, if it has one
	sleeps   bool         // t's Wait sleeps until something arrives or drains (Sleeper)
	maxPay   int          // MaxPayload
	self, n  int
	handlers []Handler
	lib      []Handler // the libraries' handlers, at their reserved numbers less libBase
	places   map[HandlerID]Placer
	timeout  time.Duration
	ctx      context.Context
	done     <-chan struct{}
	in, out  Packet
	rep      Packet // a handler's reply
	msg      Msg
	cur      *Msg     // the message whose handler is running, or nil
	queue    []Packet // replies that found the requester's inbox full (sent at the next poll)
	qdata    []byte   // the long payloads of queued replies (Staged bytes each), from qat
	qat      int
	err      error // a misuse inside a handler, returned by the poll that ran it
	closed   bool
	stats    Stats
	values   map[any]any
	roll     rollCall // the board's roll call's questions (rollcall.go)
}

// NewEndpoint makes the endpoint of the PE on t's side of a network.
func NewEndpoint(t Transport, o Options) *Endpoint {
	e := &Endpoint{t: t, self: t.Self(), n: t.PEs(), timeout: o.Timeout, ctx: o.Context}
	e.direct, _ = t.(Direct)
	if c, ok := t.(Crowded); ok {
		e.crowded = c.Crowded()
	}
	e.beat, _ = t.(queue.Beater)
	e.spin, _ = t.(Spinner)
	if s, ok := t.(Sleeper); ok {
		e.sleeps = s.Sleeps()
	}
	e.maxPay = MaxMedium
	if st, ok := t.(Stager); ok {
		e.stage, e.maxPay = st, max(MaxMedium, st.MaxStaged())
	}
	if pl, ok := t.(Placing); ok {
		pl.SetPlacer(e.place)
	}
	if e.timeout <= 0 {
		e.timeout = papers.DefaultTimeout
	}
	if e.ctx != nil {
		e.done = e.ctx.Done()
	}
	e.msg.ep = e
	e.installRollCall()
	return e
}

// Of returns the endpoint the runner attached to p.
func Of(p *papers.PE) (*Endpoint, error) {
	if e, ok := p.DataNet().(*Endpoint); ok && e != nil {
		return e, nil
	}
	return nil, papers.Errorf("am", p.Self(), "%w", ErrNoNetwork)
}

// Self is this PE's id; PEs the program's PE count.
func (e *Endpoint) Self() int { return e.self }
func (e *Endpoint) PEs() int  { return e.n }

// MaxPayload is the most payload bytes one request, send or reply may
// carry: MaxMedium, or more where the transport carries long payloads
// (Stager): the in-process and shared-memory ones stage them beside the
// inbox, the TCP one sends them in the packet's frame. A handler's long
// reply that finds the requester's side full waits, copied, in this PE's
// queue. Layers that move blocks (Strata's block transfers, Split-C's bulk
// forms, gets as well as puts) send packets this long.
func (e *Endpoint) MaxPayload() int { return e.maxPay }

// Stats returns the traffic counts so far.
func (e *Endpoint) Stats() Stats { return e.stats }

// Timeout is the bound on every wait.
func (e *Endpoint) Timeout() time.Duration { return e.timeout }

// Value returns the value stored under key by SetValue: the way a library
// (splitc, strata) keeps its per-PE state on the endpoint its handlers get.
func (e *Endpoint) Value(key any) any { return e.values[key] }

// SetValue stores v under key.
func (e *Endpoint) SetValue(key, v any) {
	if e.values == nil {
		e.values = map[any]any{}
	}
	e.values[key] = v
}

// Register adds h to this PE's handler table and returns its number. Every
// PE must register the same handlers in the same order.
func (e *Endpoint) Register(h Handler) HandlerID {
	if len(e.handlers) >= libBase {
		panic("am: too many handlers")
	}
	e.handlers = append(e.handlers, h)
	return HandlerID(len(e.handlers) - 1)
}

// Library handlers have numbers of their own, fixed when the program
// starts (Reserve, from a package's variable declarations), so that a
// library (splitc, strata) may install its handlers on a PE at any point
// of the program without shifting the program's own numbers.
const libBase = 1 << 15

var reserved int

// Reserve sets aside n handler numbers for a library and returns the
// first. Call it from a package-level variable declaration: the numbers
// then depend only on the program's packages, the same on every PE of
// every process of the program.
func Reserve(n int) HandlerID {
	reserved += n
	return HandlerID(libBase + reserved - n)
}

// Install puts h at a reserved number on this PE.
func (e *Endpoint) Install(id HandlerID, h Handler) {
	i := int(id) - libBase
	if i < 0 || i >= reserved {
		panic(fmt.Sprintf("am: Install(%d): not a number Reserve returned", id))
	}
	if len(e.lib) < reserved {
		e.lib = append(e.lib, make([]Handler, reserved-len(e.lib))...)
	}
	e.lib[i] = h
}

// errorf formats an error of this PE.
func (e *Endpoint) errorf(format string, a ...any) error {
	return papers.Errorf("am", e.self, format, a...)
}

// misuse records err when it happens inside a handler (the poll that ran
// the handler returns it) and returns it.
func (e *Endpoint) misuse(op string, err error) error {
	err = e.errorf("%s: %w", op, err)
	if e.cur != nil && e.err == nil {
		e.err = err
	}
	return err
}

// Request sends handler h on PE dst a request with arguments a: on the left
// network, polling both while it tries (CMAM_4, CMAML_request; Strata's
// SendLeftPollBoth).
func (e *Endpoint) Request(dst int, h HandlerID, a Args) error {
	return e.send("request", dst, Left, PollBoth, h, a, nil)
}

// RequestMedium is Request with a payload of up to MaxMedium bytes.
func (e *Endpoint) RequestMedium(dst int, h HandlerID, a Args, payload []byte) error {
	return e.send("request", dst, Left, PollBoth, h, a, payload)
}

// Send is the general send: on net (Left or Right), or on either when both
// is true (trying net first, then the other, in turn: Strata's SendBoth…),
// polling the networks in poll after each try. Inside a request handler it
// is the handler's reply: to the requester only, once, on the right network,
// never polling.
func (e *Endpoint) Send(dst int, net Net, both bool, poll Nets, h HandlerID, a Args, payload []byte) error {
	if both {
		poll |= eitherNet
	}
	return e.send("send", dst, net, poll, h, a, payload)
}

// eitherNet, in send's poll argument, lets the packet take either network.
const eitherNet Nets = 1 << 7

func (e *Endpoint) send(op string, dst int, net Net, poll Nets, h HandlerID, a Args, payload []byte) error {
	if dst < 0 || dst >= e.n {
		return e.misuse(op, fmt.Errorf("%w: destination PE %d: the PEs are 0 to %d", papers.ErrArgument, dst, e.n-1))
	}
	if len(payload) > e.maxPay {
		return e.misuse(op, fmt.Errorf("%w: %d payload bytes: a packet carries at most %d (send more in several)", papers.ErrArgument, len(payload), e.maxPay))
	}
	if e.closed {
		return e.errorf("%s: the endpoint is closed", op)
	}
	p := &e.out
	if e.cur != nil {
		p = &e.rep // a handler's reply, while e.out may hold the packet the poll interrupted
	}
	staged := len(payload) > MaxMedium
	p.Handler, p.Net, p.Args, p.Len, p.Staged = h, net, a, uint16(len(payload)), 0
	if !staged {
		copy(p.Data[:], payload)
	}
	if m := e.cur; m != nil {
		if op == "request" || m.Net != Left || m.replied || dst != m.Src {
			return e.misuse(op, fmt.Errorf("%w (to PE %d from the handler of a %s message from PE %d)", ErrHandlerSend, dst, m.Net, m.Src))
		}
		m.replied = true
		p.Net = Right
		return e.sendNow(op, dst, p, payload)
	}
	return e.sendPolling(op, dst, poll, p, payload, staged)
}

// sendPolling sends p (with payload beside it when staged) to PE dst,
// polling poll while it tries, and retrying while the inbox is full,
// until the timeout.
func (e *Endpoint) sendPolling(op string, dst int, poll Nets, p *Packet, payload []byte, staged bool) error {
	var start time.Time
	for try := 0; ; try++ {
		if err := e.flush(); err != nil {
			return err
		}
		var ok bool
		var err error
		if staged {
			ok, err = e.stage.SendStaged(dst, p, payload)
		} else {
			ok, err = e.t.Send(dst, p)
		}
		if ok {
			e.stats.Sent++
		}
		if err != nil {
			return e.errorf("%s to PE %d: %w", op, dst, err)
		}
		// Poll the network just tried; while the packet is not out, the
		// other one too (it goes there next, if it may).
		polls := poll & Nets(1<<p.Net)
		if !ok {
			polls = poll & PollBoth
		}
		if polls != 0 {
			if _, err := e.poll(polls, false); err != nil {
				return err
			}
		}
		if ok {
			return nil
		}
		if poll&eitherNet != 0 {
			p.Net ^= 1
		}
		if e.sleeps { // sleep until the full send buffer drains or a packet comes
			if start.IsZero() {
				start = time.Now()
			}
			if err := e.stalled(op, dst, start); err != nil {
				return err
			}
			e.t.Wait(e.timeout-time.Since(start), e.done)
			continue
		}
		if try > 0 && try%64 == 0 {
			if start.IsZero() {
				start = time.Now()
			}
			if err := e.stalled(op, dst, start); err != nil {
				return err
			}
			runtime.Gosched()
		}
	}
}

// sendNow sends a handler's reply without polling: into the requester's
// inbox, or this PE's queue when it is full. A long payload waits in
// qdata, which grows to the most ever queued at once and is then reused.
func (e *Endpoint) sendNow(op string, dst int, p *Packet, payload []byte) error {
	staged := len(payload) > MaxMedium
	if len(e.queue) == 0 {
		ok, err := e.sendPacket(dst, p, payload, staged)
		if err != nil {
			return e.misuse(op, err)
		}
		if ok {
			e.stats.Sent++
			return nil
		}
	}
	e.queue = append(e.queue, *p)
	q := &e.queue[len(e.queue)-1]
	q.Src = int32(dst) // queued: Src holds the destination
	q.Staged = 0
	if staged {
		q.Staged = uint32(len(payload))
		if e.qat > 0 && cap(e.qdata)-len(e.qdata) < len(payload) { // reuse what was sent before growing
			e.qdata = e.qdata[:copy(e.qdata, e.qdata[e.qat:])]
			e.qat = 0
		}
		e.qdata = append(e.qdata, payload...)
	}
	e.stats.Deferred++
	return nil
}

func (e *Endpoint) sendPacket(dst int, p *Packet, payload []byte, staged bool) (bool, error) {
	if staged {
		return e.stage.SendStaged(dst, p, payload)
	}
	return e.t.Send(dst, p)
}

// flush sends the queued replies that fit.
func (e *Endpoint) flush() error {
	for len(e.queue) > 0 {
		q := &e.queue[0]
		n := int(q.Staged)
		ok, err := e.sendPacket(int(q.Src), q, e.qdata[e.qat:e.qat+n], n > 0)
		if err != nil {
			e.queue = e.queue[1:]
			e.qat += n
			return e.errorf("reply to PE %d: %w", q.Src, err)
		}
		if !ok {
			q.Staged = uint32(n) // a failed try may have changed it
			return nil
		}
		e.stats.Sent++
		e.queue = e.queue[1:]
		e.qat += n
	}
	e.queue, e.qdata, e.qat = e.queue[:0], e.qdata[:0], 0
	return nil
}

// stalled is the check of a wait that is not over: the peer's departure,
// the context, the deadline.
func (e *Endpoint) stalled(op string, on int, start time.Time) error {
	if on >= 0 {
		if err := e.t.Gone(on); err != nil {
			return e.errorf("%s: %w", op, err)
		}
	} else if err := e.failedPE(); err != nil {
		return e.errorf("%s: %w", op, err)
	}
	select {
	case <-e.done:
		return e.errorf("%s abandoned: %w", op, context.Cause(e.ctx))
	default:
	}
	if time.Since(start) > e.timeout {
		return timeout(e.self, op, on, e.timeout)
	}
	return nil
}

// failedPE is the departure of a PE that failed or died, which ends a
// wait on every PE (a barrier): a PE that returned has left the board's
// barriers too, one that died has not.
func (e *Endpoint) failedPE() error {
	for k := range e.n {
		if k == e.self {
			continue
		}
		// Transports return a *GoneError itself (errors.As would allocate
		// on every look).
		if g, ok := e.t.Gone(k).(*GoneError); ok && g != nil && g.Cause != nil {
			return g
		}
	}
	return nil
}

// timeout is the error of PE self's wait op on PE on (-1: any PE) that
// outlived waited.
func timeout(self int, op string, on int, waited time.Duration) error {
	e := &papers.TimeoutError{PE: self, Op: op, Waited: waited}
	who := "the other PEs"
	if on >= 0 {
		e.Missing = 1 << on
		who = fmt.Sprintf("PE %d", on)
	}
	e.Stall = "no answer from " + who + " (it is computing without polling, stopped, or waiting for this PE; raise the timeout if it is just slow)"
	return e
}

// Poll receives what has arrived on nets and runs the handlers: one
// message from each network polled, or, with tilEmpty, until they are
// empty. It returns how many it handled, and the first misuse a handler
// made.
func (e *Endpoint) Poll(nets Nets, tilEmpty bool) (int, error) {
	if e.cur != nil {
		return 0, e.misuse("poll", ErrInHandler)
	}
	if err := e.flush(); err != nil {
		return 0, err
	}
	return e.poll(nets, tilEmpty)
}

func (e *Endpoint) poll(nets Nets, tilEmpty bool) (int, error) {
	if e.cur != nil { // a send from a handler does not poll
		return 0, nil
	}
	if e.beat != nil {
		e.beat.Beat()
	}
	handled := 0
	for {
		got := 0
		for net := range numNets {
			if nets&(1<<net) != 0 && e.t.Recv(net, &e.in) {
				e.dispatch()
				got++
			}
		}
		handled += got
		if e.err != nil {
			err := e.err
			e.err = nil
			return handled, err
		}
		if got == 0 || !tilEmpty {
			return handled, nil
		}
	}
}

func (e *Endpoint) dispatch() {
	p := &e.in
	m := &e.msg
	m.Src, m.Net, m.Args, m.Payload, m.replied = int(p.Src), p.Net, p.Args, p.Data[:p.Len], false
	if p.Staged > 0 {
		m.Payload = e.stage.Staged(p)
		defer e.stage.Unstage(p)
	}
	e.stats.Handled++
	var h Handler
	if i := int(p.Handler); i < libBase && i < len(e.handlers) {
		h = e.handlers[i]
	} else if i -= libBase; i >= 0 && i < len(e.lib) {
		h = e.lib[i]
	}
	if h == nil {
		if e.err == nil {
			e.err = e.errorf("message from PE %d names handler %d, which this PE has not registered (every PE must Register the same handlers in the same order, and attach the libraries it uses, such as splitc.Attach, before the others use them)", p.Src, p.Handler)
		}
		return
	}
	e.cur = m
	h(m)
	e.cur = nil
}

// Close handles what has arrived, sends the queued replies, and leaves the
// network: the other PEs' waits on this one end in a *GoneError. Messages
// that arrive later are errors for their senders. It returns the first
// misuse a handler made or the replies it could not deliver.
func (e *Endpoint) Close() error {
	if e.closed {
		return nil
	}
	_, err := e.poll(PollBoth, true)
	var start time.Time
	for len(e.queue) > 0 && err == nil {
		if err = e.flush(); err == nil && len(e.queue) > 0 {
			if start.IsZero() {
				start = time.Now()
			}
			err = e.stalled("close: deliver the queued replies", int(e.queue[0].Src), start)
			runtime.Gosched()
		}
	}
	e.t.Leave(nil, func() {
		if _, perr := e.poll(PollBoth, true); err == nil {
			err = perr
		}
	})
	if ferr := e.flush(); err == nil {
		err = ferr
	}
	if len(e.queue) > 0 && err == nil {
		err = e.errorf("close: %d replies to PE %d not delivered: its inbox stayed full", len(e.queue), e.queue[0].Src)
	}
	e.closed = true
	return err
}

// Abort leaves the network at once, because the PE's program failed with
// cause: the other PEs' waits on it end in a *GoneError carrying cause.
func (e *Endpoint) Abort(cause error) {
	if e.closed {
		return
	}
	if cause == nil {
		cause = errors.New("aborted")
	}
	e.t.Leave(cause, nil)
	e.closed = true
}
