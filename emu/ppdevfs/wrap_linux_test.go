//go:build linux

package ppdevfs_test

import (
	"bytes"
	"io"
	"log"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emu/ppdevfs"
	"github.com/ttlpapers/ttlpapers/emu/vcd"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/lpt/linuxlpt"
)

// TestWrapRecords serves a board whose ports Options.Wrap wraps with a
// waveform recorder (papersctl emu serve --vcd): what a program writes
// through the file is in the recording.
func TestWrapRecords(t *testing.T) {
	testenv.FUSE(t)
	b, err := emu.New(2)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	rec, err := vcd.NewRecorder(&buf, b)
	if err != nil {
		t.Fatal(err)
	}
	wrap := func(pe int, p lpt.Port) lpt.Port {
		w, err := rec.Wrap(pe, p)
		if err != nil {
			t.Error(err)
			return p
		}
		return w
	}
	s, err := ppdevfs.Mount(t.TempDir(), b, ppdevfs.Options{PEs: 2, ClaimWait: time.Second, Log: log.New(io.Discard, "", 0), Wrap: wrap})
	if err != nil {
		t.Fatal(err)
	}
	f := open(t, s, 1)
	claim(t, f)
	ioctlByte(t, f, linuxlpt.PPWDATA, 0xa5)
	status := ioctlByte(t, f, linuxlpt.PPRSTATUS, 0)
	if err := ioctl(f, linuxlpt.PPRELEASE, nil); err != nil {
		t.Fatal(err)
	}
	f.Close() // the file system unmounts once no file is open
	if err := s.Unmount(); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	file, err := vcd.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := file.Signal("pc.PE1.data").Uint(file.End); !ok || v != 0xa5 {
		t.Errorf("the recording's PE 1 data register ends at %s, want 0xa5 written through the file", file.Signal("pc.PE1.data").At(file.End))
	}
	if v, ok := file.Signal("pc.PE1.status").Uint(file.End); !ok || uint8(v) != status {
		t.Errorf("the recording's PE 1 status ends at %s, the file read %#x", file.Signal("pc.PE1.status").At(file.End), status)
	}
}
