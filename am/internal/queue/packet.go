// Package queue holds what package am's transports on shared memory have
// in common, and the packet they carry: the inboxes, the PEs' records, the
// staging rings and the futex, for the in-process network (am.Local) and
// the one between the processes of one machine (package am/shmnet). The
// types hold no Go pointers, so they may live in a mapping. Package am
// gives the packet's types their public names.
package queue

import "fmt"

// HandlerID is a handler's number in every PE's table.
type HandlerID uint16

// Args are an active message's four argument words (the CM-5's five-word
// packet less the handler's).
type Args [4]uint64

// Net names one of the two data networks. The CM-5 had two, and the seeds
// give them roles: requests travel on the left network, replies on the
// right, so that a PE which only polls for replies while it sends one can
// never deadlock (Liu and Culler, §2.1.2).
type Net uint8

const (
	Left    Net = iota // the request network
	Right              // the reply network
	NumNets            // how many there are
)

func (n Net) String() string {
	switch n {
	case Left:
		return "left"
	case Right:
		return "right"
	}
	return fmt.Sprintf("Net(%d)", uint8(n))
}

// MaxMedium is the most payload bytes one packet carries beside its
// handler and four argument words. Longer transfers are split into packets
// by the layers above (Strata's block transfers, Split-C's bulk forms), as
// the CM-5's were into 4-word Xfer packets.
const MaxMedium = 256

// Packet is one active message as a transport carries it: the handler's
// number, four argument words and up to MaxMedium bytes of payload.
type Packet struct {
	Src     int32     // the sending PE, filled in by the transport
	Handler HandlerID // index into the receiver's handler table
	Net     Net
	Len     uint16 // payload bytes in Data
	Staged  uint32 // payload bytes beside the inbox instead (stage.go), when Len is 0
	Args    Args
	Data    [MaxMedium]byte
}

// Payload is the packet's payload.
func (p *Packet) Payload() []byte { return p.Data[:p.Len] }
