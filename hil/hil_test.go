package hil_test

import (
	"bytes"
	"context"
	"errors"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/emu/ppdevfs"
	"github.com/ttlpapers/ttlpapers/hil"
	"github.com/ttlpapers/ttlpapers/internal/qemu"
)

// requireHIL skips the test, naming what to install, when QEMU, FUSE or the
// guest kernel is missing, and returns a static papersctl built once.
func requireHIL(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("boots QEMU machines; skipped with -short")
	}
	if _, err := qemu.FindQEMU(); err != nil {
		testenv.Missing(t, "%v", err)
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		testenv.Missing(t, "no /dev/fuse: FUSE is unavailable here (load the fuse module / pass --device /dev/fuse)")
	}
	if ppdevfs.FusermountPath() == "" {
		testenv.Missing(t, "fusermount not found: apt-get install fuse3")
	}
	if _, err := qemu.FindKernel(); err != nil {
		testenv.Missing(t, "%v", err)
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ttlpapers-hil-test-")
		if err != nil {
			buildErr = err
			return
		}
		binDir = dir
		binPath = filepath.Join(dir, "papersctl")
		buildErr = hil.BuildPapersctl(context.Background(), ".", binPath)
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

var (
	buildOnce       sync.Once
	binDir, binPath string
	buildErr        error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// run runs machines and checks that they leave nothing behind: no QEMU
// process, no mount and no file.
func run(t *testing.T, cfg hil.Config) *hil.Result {
	t.Helper()
	cfg.WorkDir = t.TempDir()
	var out syncBuffer
	cfg.Output = &out
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	res, err := hil.Run(ctx, cfg)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	t.Logf("%d machines: %v wall\n%s", cfg.N, res.Wall.Round(time.Millisecond), res.Summary())
	if t.Failed() || testing.Verbose() {
		t.Logf("consoles:\n%s", out.String())
	}
	assertClean(t, cfg.WorkDir)
	return res
}

func assertClean(t *testing.T, dir string) {
	t.Helper()
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("the run left %d entries in %s (first: %s)", len(left), dir, left[0].Name())
	}
	if mounts, err := os.ReadFile("/proc/mounts"); err == nil && bytes.Contains(mounts, []byte(dir)) {
		t.Errorf("a mount under %s is left in /proc/mounts", dir)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if cmd, err := os.ReadFile(p); err == nil && bytes.Contains(cmd, []byte(dir)) {
			t.Errorf("process %s is still running: %s", filepath.Dir(p), bytes.ReplaceAll(cmd, []byte{0}, []byte{' '}))
		}
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestTeardownWhenGuestHangs gives the machines less time than a boot
// takes: they are killed, and the run still cleans up.
func TestTeardownWhenGuestHangs(t *testing.T) {
	bin := requireHIL(t)
	res := run(t, hil.Config{N: 2, Args: []string{"help"}, Binary: bin, Timeout: 2 * time.Second})
	for _, m := range res.Machines {
		if m.Err == nil || !strings.Contains(m.Err.Error(), "did not power off") {
			t.Errorf("pe%d: error %v, want a timeout", m.PE, m.Err)
		}
	}
	if res.OK() {
		t.Error("a run whose machines were killed reports OK")
	}
}

// TestExitStatus checks that each machine's command status comes back:
// an unknown subcommand exits 2.
func TestExitStatus(t *testing.T) {
	bin := requireHIL(t)
	res := run(t, hil.Config{N: 1, Args: []string{"no-such-command"}, Binary: bin, Timeout: 2 * time.Minute})
	if m := res.Machines[0]; m.Exit != 2 || m.Err != nil {
		t.Errorf("unknown command: exit %d, error %v; want exit 2 and no error", m.Exit, m.Err)
	}
}

// TestDemoCluster runs the SPMD demo (barrier, NAND, broadcast, vote, max,
// sum) on four machines, each doing ioperm and inb/outb on port 0x378.
func TestDemoCluster(t *testing.T) {
	bin := requireHIL(t)
	const n = 4
	res := run(t, hil.Config{N: n, Binary: bin, Timeout: 4 * time.Minute,
		Args: []string{"demo", "--port", "0x378", "--pe", hil.PEPlaceholder, "--pes", hil.PEsPlaceholder, "--bench", "200"}})
	for _, m := range res.Machines {
		if m.Exit != 0 || m.Err != nil {
			t.Errorf("pe%d: exit %d, %v\n%s", m.PE, m.Exit, m.Err, m.Console)
			continue
		}
		if !bytes.Contains(m.Console, []byte("all correct")) {
			t.Errorf("pe%d did not report its results:\n%s", m.PE, m.Console)
		}
		// 200 barriers alone are 400 port operations.
		if m.Ioctls < 400 {
			t.Errorf("pe%d: the board served only %d port operations", m.PE, m.Ioctls)
		}
	}
	if !res.OK() {
		t.Error("result not OK")
	}
}

func TestSubstitute(t *testing.T) {
	got := hil.Substitute([]string{"selftest", "--pe", "{pe}", "--pes={pes}", "x{pe}{pes}"}, 2, 4)
	want := []string{"selftest", "--pe", "2", "--pes=4", "x24"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Substitute = %q, want %q", got, want)
	}
}

func TestRunRejectsBadConfig(t *testing.T) {
	for _, cfg := range []hil.Config{
		{N: 0, Args: []string{"help"}, Binary: "x"},
		{N: 33, Args: []string{"help"}, Binary: "x"},
		{N: 1, Binary: "x"},
		{N: 1, Args: []string{"help"}},
	} {
		if _, err := hil.Run(context.Background(), cfg); err == nil || errors.Is(err, qemu.ErrUnavailable) {
			t.Errorf("Run(%+v): error %v, want a configuration error", cfg, err)
		}
	}
}
