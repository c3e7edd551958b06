package emu_test

import (
	"bufio"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// TestBoardFileChecks: files that are not complete boards of this user are
// refused, before anything is mapped, with a message saying what is wrong.
func TestBoardFileChecks(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	b, err := emu.CreateShared(good, 4)
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	img, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(good); fi.Mode().Perm() != 0o600 {
		t.Errorf("a board file has mode %v, want 0600", fi.Mode().Perm())
	}
	word := func(i int, v uint64) []byte {
		c := append([]byte(nil), img...)
		binary.LittleEndian.PutUint64(c[8*i:], v)
		return c
	}
	for _, tc := range []struct {
		name string
		data []byte
		mode os.FileMode
		want string
	}{
		{"short", img[:100], 0o600, "too short"},
		{"empty", nil, 0o600, "too short"},
		{"truncated", img[:len(img)-8], 0o600, "truncated or corrupt"},
		{"magic", word(0, 0x1234), 0o600, "not a TTL_PAPERS board"},
		{"version", word(1, 99), 0o600, "layout version 99"},
		{"size", word(3, 5), 0o600, "corrupt header"},
		{"mode", img, 0o644, "mode 0644"},
	} {
		path := filepath.Join(dir, tc.name)
		if err := os.WriteFile(path, tc.data, tc.mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(path, tc.mode)
		if b, err := emu.OpenShared(path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: OpenShared = %v, want an error mentioning %q", tc.name, err, tc.want)
			if b != nil {
				b.Close()
			}
		}
		// Not a board of a finished run: CreateShared leaves it alone.
		if b, err := emu.CreateShared(path, 4); err == nil {
			t.Errorf("%s: CreateShared replaced a file that is not a board", tc.name)
			b.Close()
		} else if got, _ := os.ReadFile(path); string(got) != string(tc.data) {
			t.Errorf("%s: CreateShared changed the file", tc.name)
		}
	}
	if _, err := emu.CreateShared(filepath.Join(dir, "a..b"), 2); err == nil {
		t.Error(`a board named "a..b" was created`)
	}
}

// TestTruncatedWhileMapped: a board file shrunk under a running PE makes
// its operations fail with an error, not kill the process with SIGBUS.
func TestTruncatedWhileMapped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "board")
	b, err := emu.CreateShared(path, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	p, err := b.Port(0)
	if err != nil {
		t.Fatal(err)
	}
	p.WriteData(lpt.S1)
	// Shrunk into its first page: the rest reads as zeros. The port's
	// checks find it within a few operations.
	if err := os.Truncate(path, 100); err != nil {
		t.Fatal(err)
	}
	var perr error
	for i := 0; i < 1e6 && perr == nil; i++ {
		p.WriteData(lpt.S0)
		p.ReadStatus()
		perr = p.Err()
	}
	if perr == nil || !strings.Contains(perr.Error(), "truncated") {
		t.Fatalf("after the file shrank: Err() = %v, want an error saying the board was truncated", perr)
	}
	// Shrunk to nothing: every access faults; each becomes the error.
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	p.WriteData(lpt.S1)
	p.ReadStatus()
	b.PortInfo(1)
	b.Abort(0, "x")
	if _, err := b.Port(1); err == nil {
		t.Error("a port of a truncated board was handed out")
	}
}

// TestLiveBoardRefused: creating a board under the name of a live run's
// board fails naming the run and its PEs' processes, and leaves it alone.
func TestLiveBoardRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "board")
	b, err := emu.CreateShared(path, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	p, _ := b.Port(1)
	p.WriteData(lpt.S1 | 0x3)
	_, err = emu.CreateShared(path, 2)
	if err == nil || !strings.Contains(err.Error(), "in use by job") || !strings.Contains(err.Error(), "PE 1 pid") {
		t.Fatalf("CreateShared over a live board: %v, want an error naming the job and PE 1's process", err)
	}
	if p.ReadData() != lpt.S1|0x3 || p.Err() != nil {
		t.Error("the live board was disturbed")
	}
}

// TestForeignBoardRefused: a board another user created is refused by
// OpenShared and CreateShared, even to root, and left alone. It needs root
// (to run the creator as nobody).
func TestForeignBoardRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the test creates the board as user nobody")
	}
	dir, err := os.MkdirTemp("/dev/shm", "emu-foreign-")
	if err != nil {
		dir = t.TempDir()
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o777)
	path := filepath.Join(dir, "board")
	// The test binary, where nobody may run it.
	self := filepath.Join(dir, "emu.test")
	if data, err := os.ReadFile(os.Args[0]); err != nil || os.WriteFile(self, data, 0o755) != nil {
		t.Fatalf("copy the test binary: %v", err)
	}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), "EMU_TEST_CREATE="+path)
	// Only package syscall has os/exec's process attributes.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	if line, err := bufio.NewReader(out).ReadString('\n'); line != "created\n" {
		t.Fatalf("creator running as nobody: %q %v", line, err)
	}
	before, _ := os.ReadFile(path)
	if b, err := emu.OpenShared(path); err == nil || !strings.Contains(err.Error(), "uid 65534") {
		t.Errorf("root opening nobody's board: %v, want a refusal naming uid 65534", err)
		if b != nil {
			b.Close()
		}
	}
	if b, err := emu.CreateShared(path, 2); err == nil || !strings.Contains(err.Error(), "uid 65534") {
		t.Errorf("root creating over nobody's board: %v, want a refusal naming uid 65534", err)
		if b != nil {
			b.Close()
		}
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("nobody's board was changed")
	}
}
