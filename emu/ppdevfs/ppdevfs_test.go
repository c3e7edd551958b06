//go:build linux

package ppdevfs_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/ttlpapers/ttlpapers/internal/testenv"
	"golang.org/x/sys/unix"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emu/ppdevfs"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/lpt/linuxlpt"
	"github.com/ttlpapers/ttlpapers/papers"
)

// mount serves a fresh board of pes PEs, skipping when FUSE is unavailable.
func mount(t testing.TB, pes int, logw io.Writer) (*ppdevfs.Server, *emu.Board) {
	t.Helper()
	testenv.FUSE(t)
	b, err := emu.New(pes)
	if err != nil {
		t.Fatal(err)
	}
	if logw == nil {
		logw = io.Discard
	}
	// ClaimWait: long enough for a release to come through FUSE on a
	// loaded machine (50 ms was not, once, under the race detector); the
	// EBUSY check waits it out once.
	s, err := ppdevfs.Mount(t.TempDir(), b, ppdevfs.Options{PEs: pes, ClaimWait: time.Second, Log: log.New(logw, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Unmount(); err != nil {
			t.Error(err)
		}
	})
	return s, b
}

func open(t testing.TB, s *ppdevfs.Server, pe int) *os.File {
	t.Helper()
	f, err := os.OpenFile(s.Path(pe), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func ioctl(f *os.File, cmd uint32, p unsafe.Pointer) error {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, f.Fd(), uintptr(cmd), uintptr(p))
	if e != 0 {
		return e
	}
	return nil
}

func ioctlByte(t testing.TB, f *os.File, cmd uint32, v uint8) uint8 {
	t.Helper()
	if err := ioctl(f, cmd, unsafe.Pointer(&v)); err != nil {
		t.Fatalf("%s: %v", ppdevfs.IoctlName(cmd), err)
	}
	return v
}

func ioctlInt(t testing.TB, f *os.File, cmd uint32, v int32) int32 {
	t.Helper()
	if err := ioctl(f, cmd, unsafe.Pointer(&v)); err != nil {
		t.Fatalf("%s: %v", ppdevfs.IoctlName(cmd), err)
	}
	return v
}

func claim(t testing.TB, f *os.File) {
	t.Helper()
	if err := ioctl(f, linuxlpt.PPCLAIM, nil); err != nil {
		t.Fatalf("PPCLAIM: %v", err)
	}
}

// TestRegistersMatchEmulatedPort checks that every register access through
// the file gives what the same sequence gives on an in-process emulated
// port, and what the SPP model says: data and control read back, status
// carries the NAND of the data nybble and the barrier flag.
func TestRegistersMatchEmulatedPort(t *testing.T) {
	s, _ := mount(t, 1, nil)
	f := open(t, s, 0)
	claim(t, f)

	ref, err := emu.New(1)
	if err != nil {
		t.Fatal(err)
	}
	rp, err := ref.Port(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []uint8{0x00, 0x5a, lpt.S1 | 0x03, lpt.S0 | 0x0c, lpt.Transparent, 0xa5} {
		ioctlByte(t, f, linuxlpt.PPWDATA, v)
		rp.WriteData(v)
		if got := ioctlByte(t, f, linuxlpt.PPRDATA, 0); got != v {
			t.Errorf("data readback after writing %#02x: got %#02x", v, got)
		}
		got, want := ioctlByte(t, f, linuxlpt.PPRSTATUS, 0), rp.ReadStatus()
		if got != want {
			t.Errorf("status after data %#02x: got %#02x, in-process port reads %#02x", v, got, want)
		}
		// One PE: the NAND inputs are its own data bits.
		if nand := got >> lpt.InputShift & lpt.DataMask; nand != ^v&lpt.DataMask {
			t.Errorf("NAND after data %#02x: got %#x, want %#x", v, nand, ^v&lpt.DataMask)
		}
	}
	// The barrier flag: S0 alone → status 0x80 reads 1; S1 alone → 0.
	ioctlByte(t, f, linuxlpt.PPWDATA, lpt.S0)
	if st := ioctlByte(t, f, linuxlpt.PPRSTATUS, 0); st&lpt.RDY == 0 {
		t.Errorf("status %#02x after S0: ready should read 1", st)
	}
	ioctlByte(t, f, linuxlpt.PPWDATA, lpt.S1)
	if st := ioctlByte(t, f, linuxlpt.PPRSTATUS, 0); st&lpt.RDY != 0 {
		t.Errorf("status %#02x after S1: ready should read 0", st)
	}

	// Control: parport_pc keeps only the four pin bits.
	for _, v := range []uint8{lpt.NAK, lpt.NAK | lpt.SEL, 0x0f, 0xc5} {
		ioctlByte(t, f, linuxlpt.PPWCONTROL, v)
		if got := ioctlByte(t, f, linuxlpt.PPRCONTROL, 0); got != v&0x0f {
			t.Errorf("control readback after %#02x: got %#02x, want %#02x", v, got, v&0x0f)
		}
	}
	frob := [2]uint8{lpt.SEL, 0} // clear SEL, keep the rest
	ioctlByte(t, f, linuxlpt.PPWCONTROL, lpt.NAK|lpt.SEL)
	if err := ioctl(f, linuxlpt.PPFCONTROL, unsafe.Pointer(&frob)); err != nil {
		t.Fatal(err)
	}
	if got := ioctlByte(t, f, linuxlpt.PPRCONTROL, 0); got != lpt.NAK {
		t.Errorf("PPFCONTROL clearing SEL: control reads %#02x, want %#02x", got, lpt.NAK)
	}
	if err := ioctl(f, linuxlpt.PPRELEASE, nil); err != nil {
		t.Fatal(err)
	}
}

// TestReverseDirection checks the tri-stated data lines: the board sees
// them float high, reads return the pins, and the latch comes back.
func TestReverseDirection(t *testing.T) {
	s, b := mount(t, 1, nil)
	f := open(t, s, 0)
	claim(t, f)
	ioctlByte(t, f, linuxlpt.PPWDATA, 0x30)
	ioctlInt(t, f, linuxlpt.PPDATADIR, 1)
	if got := ioctlByte(t, f, linuxlpt.PPRDATA, 0); got != 0xff {
		t.Errorf("reversed data lines read %#02x, want 0xff (floating high)", got)
	}
	if st := ioctlByte(t, f, linuxlpt.PPRSTATUS, 0); st>>lpt.InputShift&lpt.DataMask != 0 {
		t.Errorf("status %#02x: with the data lines floating high the NAND must be 0", st)
	}
	if led := b.LED(0); led != lpt.Orange {
		t.Errorf("LED with the data lines floating high is %v, want orange", led)
	}
	ioctlByte(t, f, linuxlpt.PPWDATA, 0x12) // goes to the latch only
	ioctlInt(t, f, linuxlpt.PPDATADIR, 0)
	if got := ioctlByte(t, f, linuxlpt.PPRDATA, 0); got != 0x12 {
		t.Errorf("after turning the data lines around again they read %#02x, want the latch 0x12", got)
	}
	// Control bit 0x20 reverses too, as in parport_pc.
	ioctlByte(t, f, linuxlpt.PPWCONTROL, 0x20|lpt.NAK)
	if got := ioctlByte(t, f, linuxlpt.PPRDATA, 0); got != 0xff {
		t.Errorf("after control 0x21 data reads %#02x, want 0xff", got)
	}
}

func TestModesAndRefusals(t *testing.T) {
	var logged strings.Builder
	var mu sync.Mutex
	s, _ := mount(t, 2, lockedWriter{&mu, &logged})
	f := open(t, s, 0)

	var b uint8
	if err := ioctl(f, linuxlpt.PPWDATA, unsafe.Pointer(&b)); !errors.Is(err, unix.EINVAL) {
		t.Errorf("PPWDATA before PPCLAIM: got %v, want EINVAL", err)
	}
	if err := ioctl(f, linuxlpt.PPEXCL, nil); err != nil {
		t.Errorf("PPEXCL: %v", err)
	}
	claim(t, f)
	if err := ioctl(f, linuxlpt.PPEXCL, nil); !errors.Is(err, unix.EINVAL) {
		t.Errorf("PPEXCL after PPCLAIM: got %v, want EINVAL", err)
	}
	if m := ioctlInt(t, f, linuxlpt.PPGETMODE, 0); m != ppdevfs.ModeCompat {
		t.Errorf("initial mode %#x, want compat %#x", m, ppdevfs.ModeCompat)
	}
	ioctlInt(t, f, linuxlpt.PPSETMODE, ppdevfs.ModeEPP)
	if m := ioctlInt(t, f, linuxlpt.PPGETMODE, 0); m != ppdevfs.ModeEPP {
		t.Errorf("mode after PPSETMODE EPP: %#x", m)
	}
	ioctlInt(t, f, linuxlpt.PPNEGOT, ppdevfs.ModeCompat)
	v := int32(ppdevfs.ModeEPP)
	if err := ioctl(f, linuxlpt.PPNEGOT, unsafe.Pointer(&v)); !errors.Is(err, unix.EIO) {
		t.Errorf("PPNEGOT EPP with no 1284 peripheral: got %v, want EIO", err)
	}
	ioctlInt(t, f, linuxlpt.PPSETPHASE, 3)
	if ph := ioctlInt(t, f, linuxlpt.PPGETPHASE, 0); ph != 3 {
		t.Errorf("phase %d, want 3", ph)
	}

	// A second open file waits for the claim, then gets EBUSY.
	g := open(t, s, 0)
	if err := ioctl(g, linuxlpt.PPCLAIM, nil); !errors.Is(err, unix.EBUSY) {
		t.Errorf("second PPCLAIM while held: got %v, want EBUSY", err)
	}
	// An exclusive claim (PPEXCL first, as a PE program's port makes) is
	// refused at once, as the kernel refuses a second exclusive device,
	// rather than after ClaimWait.
	x := open(t, s, 0)
	if err := ioctl(x, linuxlpt.PPEXCL, nil); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := ioctl(x, linuxlpt.PPCLAIM, nil); !errors.Is(err, unix.EBUSY) || time.Since(start) >= time.Second {
		t.Errorf("exclusive PPCLAIM while held: %v after %v, want EBUSY before the 1 s ClaimWait", err, time.Since(start))
	}
	x.Close()
	// Releasing while it waits hands the port over.
	done := make(chan error, 1)
	before := s.Stats(0).Ioctls
	go func() { done <- ioctl(g, linuxlpt.PPCLAIM, nil) }()
	for deadline := time.Now().Add(10 * time.Second); s.Stats(0).Ioctls == before && time.Now().Before(deadline); {
		runtime.Gosched() // until the server is serving the claim
	}
	if err := ioctl(f, linuxlpt.PPRELEASE, nil); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("PPCLAIM waiting for a release: %v", err)
	}
	// Closing without PPRELEASE releases (ppdev does so on close).
	g.Close()
	h := open(t, s, 0)
	claim(t, h)

	// Unknown ioctls: ENOTTY and a log line naming them.
	const ppwctlonirq = 0x40017092
	if err := ioctl(h, ppwctlonirq, unsafe.Pointer(&b)); !errors.Is(err, unix.ENOTTY) {
		t.Errorf("unknown ioctl: got %v, want ENOTTY", err)
	}
	if st := s.Stats(0); st.Unknown != 1 {
		t.Errorf("stats count %d unknown ioctls, want 1", st.Unknown)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logged.String(), "unsupported ioctl 0x40017092") {
		t.Errorf("log does not name the unknown ioctl:\n%s", logged.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// filePort is an lpt.Port over a ppdev file, enough to run the driver
// through the FUSE files in-process.
type filePort struct {
	f   *os.File
	buf uint8
	err error
}

func (p *filePort) op(cmd uint32, v uint8) uint8 {
	p.buf = v
	if err := ioctl(p.f, cmd, unsafe.Pointer(&p.buf)); err != nil && p.err == nil {
		p.err = err
	}
	return p.buf
}
func (p *filePort) WriteData(v uint8)    { p.op(linuxlpt.PPWDATA, v) }
func (p *filePort) ReadData() uint8      { return p.op(linuxlpt.PPRDATA, 0) }
func (p *filePort) ReadStatus() uint8    { return p.op(linuxlpt.PPRSTATUS, 0) }
func (p *filePort) WriteControl(v uint8) { p.op(linuxlpt.PPWCONTROL, v) }
func (p *filePort) ReadControl() uint8   { return p.op(linuxlpt.PPRCONTROL, 0) }
func (p *filePort) Err() error           { return p.err }
func (p *filePort) Close() error         { return ioctl(p.f, linuxlpt.PPRELEASE, nil) }

// TestDriverThroughFiles runs the papers driver on four PEs, each through
// its own file: barriers and NANDs over the FUSE loop.
func TestDriverThroughFiles(t *testing.T) {
	const n = 4
	s, _ := mount(t, n, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for k := 0; k < n; k++ {
		f := open(t, s, k)
		claim(t, f)
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[k] = func() error {
				pe, err := papers.Open(&filePort{f: f}, papers.Config{PE: k, PEs: n, Context: ctx, Timeout: 10 * time.Second})
				if err != nil {
					return err
				}
				defer pe.Close()
				for i := 0; i < 20; i++ {
					x := uint8(i+k) & 0xf
					got, err := pe.NAND(x)
					if err != nil {
						return err
					}
					want := uint8(0xf)
					for j := 0; j < n; j++ {
						want &= uint8(i+j) & 0xf
					}
					if want = ^want & 0xf; got != want {
						t.Errorf("PE %d round %d: NAND = %#x, want %#x", k, i, got, want)
					}
					if err := pe.Barrier(); err != nil {
						return err
					}
				}
				return nil
			}()
		}()
	}
	wg.Wait()
	for k, err := range errs {
		if err != nil {
			t.Errorf("PE %d: %v", k, err)
		}
	}
	for k := 0; k < n; k++ {
		if st := s.Stats(k); st.Ioctls < 20*7 {
			t.Errorf("PE %d's file served %d ioctls, fewer than 20 NANDs and barriers need", k, st.Ioctls)
		}
	}
}

// BenchmarkIoctl measures one port operation through the FUSE loop (a
// status read), without QEMU.
func BenchmarkIoctl(b *testing.B) {
	s, _ := mount(b, 1, nil)
	f := open(b, s, 0)
	claim(b, f)
	var v uint8
	b.ReportAllocs()
	for b.Loop() {
		if err := ioctl(f, linuxlpt.PPRSTATUS, unsafe.Pointer(&v)); err != nil {
			b.Fatal(err)
		}
	}
}

// TestFaultsFile: lines written to the faults file change the running
// board's faults at once, reading it lists them, and a change the board
// refuses fails the write.
func TestFaultsFile(t *testing.T) {
	s, b := mount(t, 4, nil)
	path := filepath.Join(s.Dir(), ppdevfs.FaultsFile)
	write := func(line string) error { return os.WriteFile(path, []byte(line+"\n"), 0) }
	read := func() string {
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(got)
	}
	if err := write("PE1.D3=stuck0\nPE2=unplug"); err != nil {
		t.Fatal(err)
	}
	if got, want := read(), "PE1.D3=stuck0\nPE2=unplugged\n"; got != want {
		t.Errorf("faults after stuck0 and unplug: %q, want %q", got, want)
	}
	if got := fmt.Sprint(b.Faults()); got != "[PE1.D3=stuck0 PE2=unplugged]" {
		t.Errorf("the board has %s", got)
	}
	for _, c := range []string{"PE2=replug", "PE1=repair"} {
		if err := write(c); err != nil {
			t.Fatal(err)
		}
	}
	if got := read(); got != "" {
		t.Errorf("faults after replug and repair: %q, want none", got)
	}
	if err := write("PE7=unplug"); !errors.Is(err, unix.EINVAL) {
		t.Errorf("a PE the board lacks: %v, want EINVAL", err)
	}
}
