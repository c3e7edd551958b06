//go:build linux

package tcpnet

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/am"
)

// mitm is a man in the middle on loopback, in front of PE 0's listener:
// it relays the connections PE 1 dials and hands each frame PE 1 sends on
// the left network, once the handshake is through, to tamper, which
// returns the bytes to pass on instead. It keeps what it relayed from PE
// 1, as a listener on the LAN reads it.
type mitm struct {
	ln     net.Listener
	to     string
	tamper func(i int, f []byte) []byte
	mu     sync.Mutex
	seen   bytes.Buffer
	wg     sync.WaitGroup
}

func newMITM(t *testing.T, to netip.AddrPort, tamper func(i int, f []byte) []byte) *mitm {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := &mitm{ln: ln, to: to.String(), tamper: tamper}
	m.wg.Go(func() {
		for {
			down, err := ln.Accept()
			if err != nil {
				return
			}
			m.wg.Go(func() { m.relay(down) })
		}
	})
	t.Cleanup(func() { ln.Close(); m.wg.Wait() })
	return m
}

func (m *mitm) addr() netip.AddrPort { return netip.MustParseAddrPort(m.ln.Addr().String()) }

func (m *mitm) relay(down net.Conn) {
	defer down.Close()
	up, err := net.Dial("tcp", m.to)
	if err != nil {
		return
	}
	defer up.Close()
	m.wg.Go(func() { io.Copy(down, up); down.Close() })
	shake := make([]byte, helloLen+macLen) // the hello, then the proof
	if _, err := io.ReadFull(down, shake[:helloLen]); err != nil {
		return
	}
	up.Write(shake[:helloLen])
	if _, err := io.ReadFull(down, shake[helloLen:]); err != nil {
		return
	}
	up.Write(shake[helloLen:])
	sealed := &conn{tag: tagLen}
	for i := 0; ; i++ {
		h := make([]byte, hdrLen)
		if _, err := io.ReadFull(down, h); err != nil {
			return
		}
		f := make([]byte, sealed.frameLen(int(h[7]), int(binary.LittleEndian.Uint32(h))))
		copy(f, h)
		if _, err := io.ReadFull(down, f[hdrLen:]); err != nil {
			return
		}
		m.mu.Lock()
		m.seen.Write(f)
		m.mu.Unlock()
		if shake[12] == 0 {
			f = m.tamper(i, f)
		}
		if _, err := up.Write(f); err != nil {
			return
		}
	}
}

// mitmPair connects PEs 0 and 1 with mode, PE 1 through m (made with
// tamper): their endpoints, and the argument words of the requests PE 0
// handled.
func mitmPair(t *testing.T, mode Mode, tamper func(i int, f []byte) []byte) (eps [2]*am.Endpoint, m *mitm, got *[]uint64) {
	secret := make([]byte, SecretLen)
	rand.Read(secret)
	var ls [2]*Listener
	for k := range ls {
		l, err := Listen("127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		l.Mode = mode
		ls[k] = l
	}
	m = newMITM(t, ls[0].Addr(), tamper)
	var nets [2]*Net
	var errs [2]error
	var wg sync.WaitGroup
	wg.Go(func() {
		nets[0], errs[0] = ls[0].Connect(0, []netip.AddrPort{ls[0].Addr(), ls[1].Addr()}, secret, 10*time.Second, true)
	})
	wg.Go(func() {
		nets[1], errs[1] = ls[1].Connect(1, []netip.AddrPort{m.addr(), ls[1].Addr()}, secret, 10*time.Second, true)
	})
	wg.Wait()
	if err := errors.Join(errs[:]...); err != nil {
		t.Fatal(err)
	}
	for k, tn := range nets {
		t.Cleanup(func() { tn.Close() })
		eps[k] = am.NewEndpoint(tn, am.Options{Timeout: 10 * time.Second})
	}
	got = new([]uint64)
	eps[0].Register(func(msg *am.Msg) {
		*got = append(*got, msg.Args[0])
		if !bytes.Equal(msg.Payload, payloadOf(msg.Args[0])) {
			t.Errorf("request %d: its payload differs from the one sent", msg.Args[0])
		}
	})
	return eps, m, got
}

// payloadOf is request i's payload: none, a medium one, or one long
// enough to leave from the caller's memory (writev), in turn.
func payloadOf(i uint64) []byte {
	n := [...]int{0, 100, 2 * directMin}[i%3]
	return bytes.Repeat([]byte{'p', byte(i)}, n/2)
}

// TestTampered: a man in the middle on PE 1's left connection flips a
// bit in the argument words or the payload, injects a frame of its own,
// replays one, swaps two, drops one or cuts one short. The frames before
// it are handled, it and every one after it never are, and PE 0's wait
// on PE 1 ends in an error naming PE 1 (ErrForged).
func TestTampered(t *testing.T) {
	const sent, at = 12, 5 // requests PE 1 sends; the frame tampered with
	for _, mode := range []Mode{Authenticated, Private} {
		for _, tc := range []struct {
			name string
			// tamper is given frame at and the one before it and returns
			// what to pass on instead; nil holds frame at and passes it
			// on after the next.
			tamper func(f, prev []byte) []byte
		}{
			{"argument bit flipped", func(f, _ []byte) []byte { f[hdrLen] ^= 1; return f }},
			{"payload bit flipped", func(f, _ []byte) []byte { f[len(f)-tagLen-1] ^= 0x80; return f }},
			{"tag bit flipped", func(f, _ []byte) []byte { f[len(f)-1] ^= 1; return f }},
			{"injected", func(f, _ []byte) []byte {
				fake := make([]byte, (&conn{tag: tagLen}).frameLen(1, 0))
				putHeader(fake, 0, 0, kindPkt, []uint64{666})
				return append(fake, f...)
			}},
			{"replayed", func(f, prev []byte) []byte { return append(prev, f...) }},
			{"reordered", nil},
			{"dropped", func([]byte, []byte) []byte { return nil }},
			{"cut short", func(f, _ []byte) []byte { return f[:len(f)-3] }},
		} {
			var prev, held []byte
			eps, _, got := mitmPair(t, mode, func(i int, f []byte) []byte {
				defer func() { prev = f }()
				switch {
				case i == at && tc.tamper == nil: // sent after the next
					held = f
					return nil
				case i == at:
					return tc.tamper(f, prev)
				case held != nil:
					return append(f, held...)
				}
				return f
			})
			var wg sync.WaitGroup
			wg.Go(func() {
				for i := range uint64(sent) {
					if eps[1].RequestMedium(0, 0, am.Args{i}, payloadOf(i)) != nil {
						return
					}
				}
			})
			err := eps[0].Wait("requests", 1, func() bool { return len(*got) == sent })
			var g *am.GoneError
			if !errors.Is(err, ErrForged) || !errors.As(err, &g) || g.PE != 1 || !strings.Contains(err.Error(), "from PE 1") {
				t.Errorf("%s, %s: PE 0's wait: %v, want a *GoneError naming PE 1, ErrForged", mode, tc.name, err)
			}
			if len(*got) != at {
				t.Errorf("%s, %s: PE 0 handled %v, want the %d requests before the tampered frame", mode, tc.name, *got, at)
			}
			for i, v := range *got {
				if v != uint64(i) {
					t.Errorf("%s, %s: request %d handled as %d", mode, tc.name, i, v)
				}
			}
			wg.Wait()
			eps[1].Close()
			eps[0].Close()
		}
	}
}

// TestPrivate: a listener on the LAN reads the payloads and argument
// words of authenticated frames, and nothing of private ones.
func TestPrivate(t *testing.T) {
	const word = 0x5ec12e7c0ffee
	for _, mode := range []Mode{Authenticated, Private} {
		eps, m, got := mitmPair(t, mode, func(_ int, f []byte) []byte { return f })
		for i := range uint64(3) {
			if err := eps[1].RequestMedium(0, 0, am.Args{i, word}, payloadOf(i)); err != nil {
				t.Fatal(err)
			}
		}
		if err := eps[0].Wait("requests", 1, func() bool { return len(*got) == 3 }); err != nil {
			t.Fatal(err)
		}
		eps[1].Close()
		eps[0].Close()
		m.mu.Lock()
		seen := m.seen.Bytes()
		w := binary.LittleEndian.AppendUint64(nil, word)
		read := bytes.Contains(seen, w) || bytes.Contains(seen, payloadOf(1)) || bytes.Contains(seen, payloadOf(2)[:64])
		m.mu.Unlock()
		if read != (mode == Authenticated) {
			t.Errorf("%s: the listener read the data: %v", mode, read)
		}
	}
}
