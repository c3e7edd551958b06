//go:build linux

package tcpnet_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/am"
	"github.com/ttlpapers/ttlpapers/am/tcpnet"
	"github.com/ttlpapers/ttlpapers/conformance/dataconf"
	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/papers"
)

// run runs fn on n goroutine PEs of an emulated board, each with its
// side of a TCP data network joined over the board (tcpnet.Listen with
// spec, then Join), as spmd's port driver does on a real one.
func run(t testing.TB, n int, spec string, timeout time.Duration, fn func(*papers.PE) error) error {
	t.Helper()
	return runMode(t, n, spec, tcpnet.Authenticated, timeout, fn)
}

// runMode is run with the frames protected by mode.
func runMode(t testing.TB, n int, spec string, mode tcpnet.Mode, timeout time.Duration, fn func(*papers.PE) error) error {
	t.Helper()
	b, err := emu.New(n)
	if err != nil {
		t.Fatal(err)
	}
	return emulate.RunNet(b, n, papers.Config{Timeout: timeout}, func(p *papers.PE) (am.Transport, error) {
		l, err := tcpnet.Listen(spec)
		if err != nil {
			return nil, err
		}
		l.Mode = mode
		return l.Join(p, timeout)
	}, fn)
}

// The data network's conformance cases on TCP, joined over the board,
// with the frames authenticated and private.
func TestConformance(t *testing.T) {
	for _, mode := range []tcpnet.Mode{tcpnet.Authenticated, tcpnet.Private} {
		for _, n := range []int{2, 4} {
			for _, c := range dataconf.Cases() {
				if err := runMode(t, n, "", mode, 20*time.Second, c.Run); err != nil {
					t.Errorf("%s, %d PEs: %s: %v", mode, n, c.Name, err)
				}
			}
		}
	}
}

// PEs whose modes differ are named by every PE before they connect.
func TestModesDiffer(t *testing.T) {
	b, err := emu.New(3)
	if err != nil {
		t.Fatal(err)
	}
	err = emulate.RunNet(b, 3, papers.Config{Timeout: 5 * time.Second}, func(p *papers.PE) (am.Transport, error) {
		l, err := tcpnet.Listen("")
		if err != nil {
			return nil, err
		}
		if p.Self() == 2 {
			l.Mode = tcpnet.Private
		}
		if _, err := l.Join(p, 5*time.Second); !errors.Is(err, tcpnet.ErrModes) || !strings.Contains(err.Error(), "PE 2 has private") {
			return nil, fmt.Errorf("PE %d: Join: %v, want it to name PE 2's mode", p.Self(), err)
		}
		return nil, tcpnet.ErrModes
	}, func(*papers.PE) error { return errors.New("a PE ran") })
	if !errors.Is(err, tcpnet.ErrModes) {
		t.Errorf("run: %v, want every PE to fail with ErrModes", err)
	}
}

// A PE that fails is named, with its cause, by a wait on it.
func TestDeparture(t *testing.T) {
	boom := errors.New("boom")
	err := run(t, 2, "127.0.0.1", 5*time.Second, func(p *papers.PE) error {
		ep, err := am.Of(p)
		if err != nil {
			return err
		}
		h := ep.Register(func(*am.Msg) {})
		if p.Self() == 1 {
			return boom
		}
		ep.Request(1, h, am.Args{})
		err = ep.Wait("never", 1, func() bool { return false })
		var g *am.GoneError
		if !errors.As(err, &g) || g.PE != 1 || g.Cause == nil || !strings.Contains(g.Cause.Error(), "boom") {
			t.Errorf("PE 0's wait on PE 1: %v, want a *GoneError naming PE 1 with its cause", err)
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Errorf("run: %v, want PE 1's failure", err)
	}
}
