package queue

import "sync/atomic"

// Staging: the payload of a packet longer than MaxMedium, on the
// transports whose PEs share memory (in-process, and the processes of one
// machine). Each sender, receiver and network has a ring of bytes beside
// the receiver's inbox: the sender copies the payload into it and sends a
// packet that says how long it is (Packet.Staged); the receiver's handler
// reads it there (Msg.Payload) and the ring's space is freed when the
// handler returns. A block then costs a copy in and a copy out and one
// packet per MaxStaged bytes, instead of a packet per MaxMedium — the way
// Strata's block transfers and Split-C's bulk forms reach memory speed on
// one machine. The packets of one sender on one network are received in
// the order they were sent, so each ring is used in order by one producer
// and one consumer, and neither position needs more than the other's
// word: the consumer's, in the ring's head, for the producer to see the
// space; the producer's is its own, and the consumer finds each payload
// where the producer's rule put it (place).

// StageHead is a ring's shared word: the bytes its consumer has freed.
type StageHead struct {
	freed atomic.Uint64
	_     [56]byte
}

// StageSize is each ring's size in bytes for a network of n PEs: at most
// 8 MiB of rings per receiver (2n of them), from 64 KiB to 1 MiB each.
func StageSize(n int) int {
	s := 1 << 20
	for s > 64<<10 && 2*n*s > 8<<20 {
		s >>= 1
	}
	return s
}

// MaxStaged is the most payload one staged packet carries: a quarter of
// the ring, so that four are in flight while the receiver copies one out.
func MaxStaged(size int) int { return size / 4 }

// place is where n bytes go in a ring of size bytes after position pos:
// at the next multiple of 8 (payloads start aligned, as in a packet), or at
// the ring's start when they would not fit before its end.
func place(pos uint64, n, size int) uint64 {
	pos = (pos + 7) &^ 7
	if o := int(pos % uint64(size)); o+n > size {
		pos += uint64(size - o)
	}
	return pos
}

// stageIn copies payload into ring data (head h) after the producer's
// position tail and returns the position after it, or false when the ring
// has no room yet. The producer commits the new position once the packet
// is in the inbox.
func stageIn(h *StageHead, data []byte, tail uint64, payload []byte) (uint64, bool) {
	size := len(data)
	pos := place(tail, len(payload), size)
	end := pos + uint64(len(payload))
	if end-h.freed.Load() > uint64(size) {
		return 0, false
	}
	o := int(pos % uint64(size))
	copy(data[o:o+len(payload)], payload)
	return end, true
}

// Sender is the transport a staged packet is sent through.
type Sender interface {
	Send(dst int, p *Packet) (bool, error)
}

// StageSend stages payload in the ring (h, data) after the producer's
// position *tail and sends p to dst through t, saying how long it is; the
// position moves once the packet is in dst's inbox. A try that finds the
// inbox full copies again next time.
func StageSend(t Sender, dst int, h *StageHead, data []byte, tail *uint64, p *Packet, payload []byte) (bool, error) {
	end, ok := stageIn(h, data, *tail, payload)
	if !ok {
		return false, nil
	}
	p.Len, p.Staged = 0, uint32(len(payload))
	ok, err := t.Send(dst, p)
	if ok {
		*tail = end
	}
	return ok, err
}

// StageOut is the payload of n bytes the consumer of ring data (head h)
// reads next.
func StageOut(h *StageHead, data []byte, n int) []byte {
	size := len(data)
	o := int(place(h.freed.Load(), n, size) % uint64(size))
	return data[o : o+n]
}

// StageFree frees it.
func StageFree(h *StageHead, size, n int) {
	h.freed.Store(place(h.freed.Load(), n, size) + uint64(n))
}

// Reset empties the ring, in memory an earlier user may have left bytes
// in.
func (h *StageHead) Reset() { h.freed.Store(0) }
