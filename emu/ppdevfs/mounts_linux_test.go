//go:build linux

package ppdevfs_test

import (
	"bufio"
	"errors"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emu/ppdevfs"
)

// TestRefusesToHideFiles: a board is not mounted over files, nor over
// another mount, which would hide them without a word.
func TestRefusesToHideFiles(t *testing.T) {
	s, _ := mount(t, 2, nil)
	b, err := emu.New(2)
	if err != nil {
		t.Fatal(err)
	}
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{full, s.Dir()} {
		s2, err := ppdevfs.Mount(dir, b, ppdevfs.Options{Log: log.New(io.Discard, "", 0)})
		if err == nil {
			s2.Unmount()
			t.Errorf("Mount(%s) mounted over it", dir)
			continue
		}
		if !errors.Is(err, ppdevfs.ErrMountPoint) || !strings.Contains(err.Error(), "new or empty directory") {
			t.Errorf("Mount(%s): %v, want ErrMountPoint naming what to do", dir, err)
		}
	}
}

// envDie makes the test binary a board server that prints "ready" and
// waits to be killed.
const envDie = "TTLPAPERS_PPDEVFS_TEST_DIE"

func init() {
	dir := os.Getenv(envDie)
	if dir == "" {
		return
	}
	b, err := emu.New(1)
	if err == nil {
		_, err = ppdevfs.Mount(dir, b, ppdevfs.Options{})
	}
	if err != nil {
		log.Fatal(err)
	}
	os.Stdout.WriteString("ready\n")
	select {}
}

// TestSweepsDeadServersMounts: the mount of a server killed by SIGKILL,
// which could not unmount it, is unmounted by the next Mount.
func TestSweepsDeadServersMounts(t *testing.T) {
	mount(t, 1, nil) // skips without FUSE
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envDie+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	cmd.Process.Kill()
	cmd.Wait()
	if line != "ready\n" {
		t.Fatalf("the server did not mount: %q %v", line, err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, unix.ENOTCONN) {
		t.Fatalf("the killed server's mount: stat: %v, want ENOTCONN", err)
	}
	mount(t, 1, nil)
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("the next Mount left the dead mount: stat %s: %v", dir, err)
	}
}
