package boardflag

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/base"
	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emu/vcd"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// VCDOut records an untimed emulated run to a VCD file (--vcd FILE of
// selftest and emu serve): attach it to the board, wrap each port the run
// drives, close it at the end.
type VCDOut struct {
	f   *os.File
	mu  sync.Mutex
	rec *vcd.Recorder
	err error
}

// OpenVCD creates the file before any work starts.
func OpenVCD(path string) (*VCDOut, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--vcd %s: %w", path, err)
	}
	return &VCDOut{f: f}, nil
}

// CheckVCDPath is the check of a --vcd flag: the file's directory exists.
func CheckVCDPath(p *base.Problems, path string) {
	if dir := filepath.Dir(path); !isDir(dir) {
		p.Addf("--vcd %s: directory %s does not exist: create it or give another path", path, dir)
	}
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// Attach starts recording board b and returns the port wrapper.
func (o *VCDOut) Attach(b *emu.Board) func(pe int, p lpt.Port) lpt.Port {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.rec, o.err = vcd.NewRecorder(o.f, b)
	return o.wrap
}

func (o *VCDOut) wrap(pe int, p lpt.Port) lpt.Port {
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

// Close finishes the file and says on w where it is, or what went wrong.
func (o *VCDOut) Close(w io.Writer) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	err := o.err
	if o.rec != nil {
		if cerr := o.rec.Close(); err == nil {
			err = cerr
		}
		fmt.Fprintf(w, "waveform of %d port operations in %s (open it with gtkwave)\n", o.rec.Ops(), o.f.Name())
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
