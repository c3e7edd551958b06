//go:build linux

package tcpnet

import (
	"bytes"
	"errors"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/ttlpapers/ttlpapers/am"
)

// TestPlaced: a long payload whose handler names its memory (am.Placer)
// is read there once its header has arrived and is checked, and handed
// over, the packet's payload being that memory, once all of it and its
// tag have arrived and match. One that was altered or cut short leaves
// the memory zeroed, and the stream ends (ErrForged, or its end); one
// whose handler names no memory is staged as before. The frame arrives
// in two writes on a socket pair, so that its header is read before its
// payload.
func TestPlaced(t *testing.T) {
	const n, first = 64 << 10, 1000 // payload bytes; bytes of the frame in the first write
	payload := bytes.Repeat([]byte("placed!"), n/7+1)[:n]
	for _, tc := range []struct {
		name   string
		noRoom bool                  // the placer names no memory
		alter  func(f []byte) []byte // the frame as it arrives
		forged bool                  // it fails its check
	}{
		{name: "intact", alter: func(f []byte) []byte { return f }},
		{name: "no place", noRoom: true, alter: func(f []byte) []byte { return f }},
		{name: "payload bit flipped", alter: func(f []byte) []byte { f[len(f)-tagLen-n/2] ^= 4; return f }, forged: true},
		{name: "tag bit flipped", alter: func(f []byte) []byte { f[len(f)-1] ^= 1; return f }, forged: true},
		{name: "cut short", alter: func(f []byte) []byte { return f[:len(f)-tagLen-10] }},
	} {
		tx, rx := sealedPair(t, Authenticated)
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK, 0)
		if err != nil {
			t.Fatal(err)
		}
		rx.fd, rx.in = fds[0], make([]byte, bufSize)
		h := make([]byte, hdrLen+16)
		putHeader(h, n, 7, kindPkt, []uint64{3, 4})
		f := tc.alter(tx.out[:tx.put(h, payload)])
		dst := bytes.Repeat([]byte{0xff}, n)
		var asked am.Args
		place := func(src int, hd am.HandlerID, a am.Args, size int) []byte {
			asked = a
			if tc.noRoom || hd != 7 || size != n {
				return nil
			}
			return dst
		}
		rx.placer = place
		var p am.Packet
		unix.Write(fds[1], f[:first])
		rx.fill()
		if rx.frame(&p) {
			t.Fatalf("%s: a frame was taken from its first %d bytes", tc.name, first)
		}
		if asked != (am.Args{3, 4}) {
			t.Errorf("%s: the placer was asked with %v, want the frame's argument words", tc.name, asked)
		}
		if _, err := unix.Write(fds[1], f[first:]); err != nil { // the socket pair holds it all
			t.Fatal(err)
		}
		unix.Close(fds[1])
		took := false
		for range 1000 { // every byte is there to read: a bound, not a wait
			if took = rx.frame(&p); took || rx.eof != nil {
				break
			}
			rx.fill()
		}
		unix.Close(fds[0])
		switch {
		case tc.forged || tc.name == "cut short":
			if took {
				t.Errorf("%s: the packet was taken", tc.name)
			}
			if tc.forged && !errors.Is(rx.eof, ErrForged) {
				t.Errorf("%s: the stream ended in %v, want ErrForged", tc.name, rx.eof)
			}
			if !bytes.Equal(dst, make([]byte, n)) {
				t.Errorf("%s: the memory the payload was read into is not zeroed", tc.name)
			}
		case !took:
			t.Errorf("%s: the packet was not taken (stream: %v)", tc.name, rx.eof)
		case p.Handler != 7 || p.Args != (am.Args{3, 4}) || p.Staged != n:
			t.Errorf("%s: packet handler %d, args %v, %d staged bytes; want 7, [3 4 0 0], %d", tc.name, p.Handler, p.Args, p.Staged, n)
		case tc.noRoom:
			if !bytes.Equal(rx.in[rx.stagedAt:rx.stagedAt+n], payload) || rx.placed != nil {
				t.Errorf("%s: the payload was not staged in the receive buffer", tc.name)
			}
			if !bytes.Equal(dst, bytes.Repeat([]byte{0xff}, n)) {
				t.Errorf("%s: the memory no placer named was written", tc.name)
			}
		default:
			if !bytes.Equal(dst, payload) || &rx.placed[0] != &dst[0] {
				t.Errorf("%s: the payload is not in the memory named, or the packet's payload is not that memory", tc.name)
			}
		}
	}
}
