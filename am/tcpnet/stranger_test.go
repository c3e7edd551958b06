//go:build linux

package tcpnet

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/am"
)

// recorder is a connection whose writes are captured, as a stranger on
// the LAN sees them.
type recorder struct {
	net.Conn
	w bytes.Buffer
}

func (r *recorder) Write(b []byte) (int, error) {
	r.w.Write(b)
	return r.Conn.Write(b)
}

// refused reports whether PE 0's listener at addr ends a stranger's
// connection that sends msg without saying ok: it reads what comes back
// until the connection closes.
func refused(t *testing.T, addr netip.AddrPort, msg []byte) bool {
	t.Helper()
	c, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	c.Write(msg)
	got, err := io.ReadAll(c)
	if errors.Is(err, syscall.ECONNRESET) { // closed with the stranger's bytes unread
		err = nil
	}
	if err != nil {
		t.Errorf("the listener kept a stranger's connection open: %v", err)
		return false
	}
	// A hello that parses gets a nonce (32 bytes) and nothing keyed by the
	// secret: the listener proves itself only after the caller has.
	return len(got) == 0 || len(got) == 32
}

// TestStrangers: while PE 0 waits for PE 1, strangers connect to it: one
// sends garbage (a frame that would call a handler), one replays a
// captured handshake of PE 1's under the same secret, one guesses the
// proof, one connects and says nothing. Each is refused before anything
// it sends is read as a message; PE 1 then connects, and the two PEs'
// messages are all that arrive.
func TestStrangers(t *testing.T) {
	secret := make([]byte, SecretLen)
	rand.Read(secret)
	// The capture: PE 1 proving the secret to PE 0 on the left network.
	a, b := net.Pipe()
	go func() {
		if _, _, mine, _, err := acceptHandshake(b, secret, Authenticated, 0, 2); err == nil {
			b.Write(append(mine, 1))
		}
	}()
	rec := &recorder{Conn: a}
	if _, err := dialHandshake(rec, secret, Authenticated, 1, 0, 0); err != nil {
		t.Fatal(err)
	}
	a.Close()
	captured := rec.w.Bytes()

	ls := make([]*Listener, 2)
	addrs := make([]netip.AddrPort, 2)
	for k := range ls {
		l, err := Listen("127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		ls[k], addrs[k] = l, l.Addr()
	}
	nets := make([]*Net, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	wg.Go(func() { nets[0], errs[0] = ls[0].Connect(0, addrs, secret, 10*time.Second, true) })

	silent, err := net.Dial("tcp", addrs[0].String())
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	garbage := make([]byte, 200)
	rand.Read(garbage)
	frame := make([]byte, hdrLen+8)
	putHeader(frame, 0, 0, kindPkt, []uint64{666})
	guess := append([]byte(nil), captured[:helloLen]...)
	rand.Read(guess[13:])
	guess = append(guess, make([]byte, macLen)...)
	for _, s := range []struct {
		name string
		msg  []byte
	}{
		{"garbage", append(garbage, frame...)},
		{"a frame", append(bytes.Repeat(frame, 8), frame...)},
		{"a replayed handshake", append(captured, frame...)},
		{"a guessed proof", append(guess, frame...)},
	} {
		if !refused(t, addrs[0], s.msg) {
			t.Errorf("%s: not refused", s.name)
		}
	}
	if n := ls[0].Refused(); n < 3 {
		t.Errorf("PE 0 counts %d refused connections, want at least 3", n)
	}
	wg.Go(func() { nets[1], errs[1] = ls[1].Connect(1, addrs, secret, 10*time.Second, true) })
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	defer nets[0].Close()
	defer nets[1].Close()
	if _, err := net.DialTimeout("tcp", addrs[0].String(), time.Second); err == nil {
		t.Error("PE 0 still listens once connected")
	}

	// PE 1 sends 100 requests; PE 0 sees exactly those.
	eps := []*am.Endpoint{am.NewEndpoint(nets[0], am.Options{Timeout: 5 * time.Second}), am.NewEndpoint(nets[1], am.Options{Timeout: 5 * time.Second})}
	var got []uint64
	for _, ep := range eps {
		ep.Register(func(m *am.Msg) { got = append(got, m.Args[0]) })
	}
	wg.Go(func() {
		for i := range 100 {
			if err := eps[1].Request(0, 0, am.Args{uint64(i) + 1}); err != nil {
				t.Error(err)
				return
			}
		}
	})
	if err := eps[0].Wait("requests", 1, func() bool { return len(got) >= 100 }); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	eps[0].Poll(am.PollBoth, true)
	for i, v := range got {
		if v != uint64(i)+1 {
			t.Fatalf("message %d carries %d, want %d (a stranger's got in?)", i, v, i+1)
		}
	}
	if len(got) != 100 {
		t.Errorf("%d messages arrived, want 100", len(got))
	}
	eps[1].Close()
	eps[0].Close()
	silent.SetDeadline(time.Now().Add(time.Second))
	if _, err := silent.Read(make([]byte, 1)); !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("the silent stranger's connection: %v, want it closed", err)
	}
}

// TestShakingCapped: connections that connect and say nothing hold PE 0's
// handshakes; beyond maxShaking of them at once, more are refused at once.
func TestShakingCapped(t *testing.T) {
	secret := make([]byte, SecretLen)
	rand.Read(secret)
	l, err := Listen("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	addrs := []netip.AddrPort{l.Addr(), netip.MustParseAddrPort("127.0.0.1:1")}
	done := make(chan error, 1)
	go func() {
		_, err := l.Connect(0, addrs, secret, 5*time.Second, true)
		done <- err
	}()
	const extra = 3
	for range maxShaking(2) + extra {
		c, err := net.Dial("tcp", addrs[0].String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	// Each connection beyond the cap is closed as soon as it is accepted.
	for l.Refused() < extra {
		select {
		case err := <-done:
			t.Fatalf("Connect ended (%v) with %d connections refused, want %d", err, l.Refused(), extra)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if n := l.Refused(); n != extra { // those under the cap are still in their handshake
		t.Errorf("%d connections refused, want %d", n, extra)
	}
	if err := <-done; err == nil {
		t.Error("PE 0 connected without PE 1")
	}
}
