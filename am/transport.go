package am

import (
	"time"

	"github.com/ttlpapers/ttlpapers/am/internal/queue"
)

// Net names one of the two data networks. The CM-5 had two, and the seeds
// give them roles: requests travel on the left network, replies on the
// right, so that a PE which only polls for replies while it sends one can
// never deadlock (Liu and Culler, §2.1.2).
type Net = queue.Net

const (
	Left    = queue.Left  // the request network
	Right   = queue.Right // the reply network
	numNets = queue.NumNets
)

// Nets is a set of networks to poll.
type Nets uint8

const (
	PollLeft  Nets = 1 << Left
	PollRight Nets = 1 << Right
	PollBoth       = PollLeft | PollRight
)

// MaxMedium is the most payload bytes one packet carries beside its
// handler and four argument words. Longer transfers are split into packets
// by the layers above (Strata's block transfers, Split-C's bulk forms), as
// the CM-5's were into 4-word Xfer packets.
const MaxMedium = queue.MaxMedium

// Packet is one active message as a transport carries it: Src (the
// sending PE, filled in by the transport), Handler, Net, Args and Len
// bytes of payload in Data (up to MaxMedium), or Staged bytes beside it
// (Stager). Payload returns the payload.
type Packet = queue.Packet

// Transport moves packets between the PEs of one program: one value per
// PE. It is the seam between the active-message layer, which owns the
// polling rules, handlers, deadlines and errors, and the medium. Send and
// Recv never block; the endpoint retries, polls and waits around them.
//
// Each PE has an inbox per network; a packet is delivered once, and the
// packets one PE sends another on one network arrive in order. A transport
// needs no more than that: the in-process one (NewLocal) is a bounded
// lock-free queue per inbox; a shared-memory one between processes is the
// same queue in a file under /dev/shm (package am/shmnet); an MPI one (docs/datanet.md) sends
// each packet with MPI_Isend, tag = network, into persistent receives
// started ahead.
type Transport interface {
	// Self and PEs: this PE's id and the program's PE count.
	Self() int
	PEs() int
	// Send queues p (Handler, Net, Len, Args, Data) in PE dst's inbox for
	// p.Net, copying it. It returns false when that inbox is full; the
	// error, when the packet may never be handled (dst has left).
	Send(dst int, p *Packet) (bool, error)
	// Recv takes the oldest packet of this PE's inbox for net into p; false
	// when the inbox is empty.
	Recv(net Net, p *Packet) bool
	// Wait blocks until a packet may have arrived for this PE, a peer may
	// have left, d has passed or done is closed, whichever is first. It
	// may return early.
	Wait(d time.Duration, done <-chan struct{})
	// Gone reports, for PE k, nil while it is attached, else why not (a
	// *GoneError).
	Gone(k int) error
	// Leave detaches this PE; cause nil means its program finished, else
	// why it failed. From then on the others' Gone(self) reports it and
	// their sends to it fail. It calls drain, if not nil, to handle what
	// is already in the inboxes: a send that got its packet in before
	// Leave either has it handled by drain or fails.
	Leave(cause error, drain func())
}

// Direct is implemented by a transport that reaches other PEs' memory
// without running their handlers (MPI's windows: MPI_Get and MPI_Put). A
// layer that owns memory the others read and write (Split-C's spread
// arrays) allocates it here and moves plain data this way: a get costs
// what the medium's one-sided access costs, not a round trip of messages.
// What needs the owner — atomics, stores the owner counts, Strata's ports
// — still goes by active message.
type Direct interface {
	// Allocate returns n zeroed bytes of this PE's memory in a new region
	// and the region's number; every PE calls it, in the same order, with
	// the same n.
	Allocate(n int) (mem []byte, region int, err error)
	// Free frees a region; every PE calls it, in the same order.
	Free(region int) error
	// Get copies len(dst) bytes at offset off of PE pe's part of the
	// region into dst; Put copies src there. Both are complete when they
	// return: the data are in dst, or in pe's memory.
	Get(pe, region, off int, dst []byte) error
	Put(pe, region, off int, src []byte) error
}

// Direct returns the endpoint's one-sided access, or nil when its
// transport has none.
func (e *Endpoint) Direct() Direct { return e.direct }
