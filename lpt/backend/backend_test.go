package backend_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/lpt/backend"
	"github.com/ttlpapers/ttlpapers/lpt/periphlpt"
)

func TestParseBase(t *testing.T) {
	for in, want := range map[string]uint16{"0x378": 0x378, "278": 0x278, "LPT3": 0x3bc, "0X3BC": 0x3bc} {
		if got, err := backend.ParseBase(in); err != nil || got != want {
			t.Errorf("ParseBase(%q) = %#x, %v; want %#x", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0x", "lpt4", "0xfffe", "0x10000", "zz"} {
		if _, err := backend.ParseBase(in); err == nil || !strings.Contains(err.Error(), "0x378") {
			t.Errorf("ParseBase(%q) = %v; want an error suggesting 0x378", in, err)
		}
	}
}

// TestOpenBadSpec: a malformed spec is refused for its form, before any
// port is opened — not by the open failing (as direct I/O does without
// root), which would hide a spec accepted by mistake.
func TestOpenBadSpec(t *testing.T) {
	for _, spec := range []string{"zz", "0x", "port:", "serial:/dev/ttyS0", "port:lpt9", "gpio:D0", "devport:0x10000"} {
		_, err := backend.Open(spec)
		var bad *backend.SpecError
		if !errors.As(err, &bad) || bad.Spec != spec {
			t.Errorf("Open(%q) = %v; want a *backend.SpecError for %q", spec, err, spec)
			continue
		}
		if cerr := backend.Check(spec); cerr == nil || cerr.Error() != err.Error() {
			t.Errorf("Check(%q) = %v; want Open's error %v", spec, cerr, err)
		}
	}
}

// TestCanonical: the short forms people type stand for direct I/O and
// ppdev; full specs stay as they are.
func TestCanonical(t *testing.T) {
	for in, want := range map[string]string{
		"0x378": "port:0x378", "278": "port:278", "lpt1": "port:lpt1", "/dev/parport0": "ppdev:/dev/parport0",
		"port:0x3bc": "port:0x3bc", "ppdev:/dev/parport1": "ppdev:/dev/parport1", "devport:0x378": "devport:0x378",
	} {
		if got, err := backend.Canonical(in); err != nil || got != want {
			t.Errorf("Canonical(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "zz", "0x", "parport0", "port:", "shm:", "serial:/dev/ttyS0", "port:zz"} {
		if got, err := backend.Canonical(in); err == nil {
			t.Errorf("Canonical(%q) = %q; want an error", in, got)
		}
	}
}

// TestOpenGPIO opens a gpio: spec on pins the periph driver registered for
// an emulated port, and checks that the board sees the writes.
func TestOpenGPIO(t *testing.T) {
	b, err := emu.New(4)
	if err != nil {
		t.Fatal(err)
	}
	ep, _ := b.Port(2)
	prefix := fmt.Sprintf("LPTB%d", time.Now().UnixNano()) // gpioreg is global: unique under go test -count
	if _, err := periphlpt.RegisterPort(prefix, ep); err != nil {
		t.Fatal(err)
	}
	var m []string
	for _, l := range lpt.Lines {
		m = append(m, fmt.Sprintf("pin%d=%s_PIN%d", l.Pin, prefix, l.Pin))
	}
	p, err := backend.Open("gpio:" + strings.Join(m, ","))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.WriteData(0x3c)
	if ep.ReadData() != 0x3c {
		t.Errorf("wrote 0x3c through GPIO, the board's port has %#x", ep.ReadData())
	}
}
