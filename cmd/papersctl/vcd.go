package main

import (
	"fmt"
	"os"
	"sync"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emu/vcd"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// vcdOut records an untimed emulated run to a VCD file (--vcd FILE of
// selftest and emu serve): attach it to the board, wrap each port the run
// drives, close it at the end.
type vcdOut struct {
	f   *os.File
	mu  sync.Mutex
	rec *vcd.Recorder
	err error
}

// openVCD creates the file at once, so that a bad path is a usage error
// before any work; it prints the error and returns nil then.
func openVCD(cmd, path string) *vcdOut {
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "papersctl %s: --vcd: %v\n", cmd, err)
		return nil
	}
	return &vcdOut{f: f}
}

// attach starts recording board b and returns the port wrapper.
func (o *vcdOut) attach(b *emu.Board) func(pe int, p lpt.Port) lpt.Port {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.rec, o.err = emu.RecordVCD(o.f, b)
	return o.wrap
}

func (o *vcdOut) wrap(pe int, p lpt.Port) lpt.Port {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.rec == nil {
		return p
	}
	w, err := o.rec.Wrap(pe, p)
	if err != nil {
		o.err = err
		return p
	}
	return w
}

// close finishes the file and says where it is, or what went wrong.
func (o *vcdOut) close(cmd string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	err := o.err
	if o.rec != nil {
		if cerr := o.rec.Close(); err == nil {
			err = cerr
		}
		fmt.Fprintf(os.Stderr, "papersctl %s: waveform of %d port operations in %s (open it with gtkwave)\n", cmd, o.rec.Ops(), o.f.Name())
	}
	if cerr := o.f.Close(); err == nil {
		err = cerr
	}
	if o.rec == nil {
		os.Remove(o.f.Name()) // nothing ran: leave no empty file behind
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", o.f.Name(), err)
	}
	return nil
}

// report prints a deferred error and returns the exit status it calls for.
func report(err error) int {
	if err == nil {
		return 0
	}
	fmt.Fprintln(os.Stderr, "papersctl:", err)
	return 1
}
